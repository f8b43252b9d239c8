package store

import (
	"testing"
	"time"
)

// TestFamilyZoneOverridesTheStore writes a family with a time zone of its own through a store
// whose default is another, 8 hours apart: the writer, Incr and the series cut its windows in the
// family's zone, and Match and Classify read its keys back in that zone whatever zone they are
// given; a family without a zone of its own keeps following the store's.
func TestFamilyZoneOverridesTheStore(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{Location: time.UTC})
		own := mustFamily(t, FamilySpec{Name: "own", Pattern: "own:<ad>:<window>", Location: shanghai,
			HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
		plain := mustFamily(t, FamilySpec{Name: "plain", Pattern: "plain:<ad>:<window>",
			DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
		if own.Location() != shanghai || plain.Location() != nil || plain.Zone(time.UTC) != time.UTC {
			t.Fatalf("Location %v / %v, Zone %v", own.Location(), plain.Location(), plain.Zone(time.UTC))
		}
		// 20:30 UTC is 04:30 the next day in Shanghai: the day differs in the two zones.
		now := s.Now()
		at := time.Date(now.Year(), now.Month(), now.Day(), 20, 30, 0, 0, time.UTC)
		if at.After(now) {
			at = at.Add(-24 * time.Hour)
		}
		w := s.NewWriter(WriterOptions{})
		for _, f := range []*Family{own, plain} {
			if err := w.Add(f, []string{"a"}, 2, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Incr(t.Context(), own, []string{"b"}, 3, at); err != nil {
			t.Fatal(err)
		}
		sh := at.In(shanghai)
		for key, want := range map[string]int64{
			"own:a:" + sh.Format("2006010215"): 2, "own:a:" + sh.Format("20060102"): 2,
			"own:b:" + sh.Format("20060102"): 3, "plain:a:" + at.Format("20060102"): 2,
		} {
			if got := getInt(t, b.rdb, key); got != want {
				t.Errorf("%s = %d, want %d", key, got, want)
			}
		}
		for _, loc := range []*time.Location{time.UTC, shanghai} {
			c, ok := Classify([]*Family{own, plain}, "own:a:"+sh.Format("20060102"), loc)
			if !ok || c.Family != own || !c.Window.Start.Equal(WindowAt(Day, at, shanghai).Start) {
				t.Errorf("Classify in %v: %+v %v, want own's Shanghai day", loc, c, ok)
			}
		}
		if _, _, ok := plain.Match(Day, "plain:a:"+at.Format("20060102"), shanghai); !ok {
			t.Error("a family without a zone does not take the zone it is given")
		}
	})
}
