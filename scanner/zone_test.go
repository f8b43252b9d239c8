package scanner

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// TestFamilyZoneInTheSnapshot sweeps, in UTC, a counter family and a unique family that cut their
// windows in Asia/Shanghai, eight hours ahead, at a moment when the two zones are on different
// days: the keys are read as the family's windows, the current windows, the series and the
// hour's average find them, the ended day reconciles, and the unique's today is Shanghai's.
func TestFamilyZoneInTheSnapshot(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := t.Context()
	fam, err := store.NewFamily(store.FamilySpec{Name: "sh", Pattern: "sh:{<ad>}:<window>", Location: shanghai,
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	uv, err := store.NewFamily(store.FamilySpec{Name: "uv", Pattern: "uv:{<page>}:<window>", Location: shanghai,
		DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// 20:30 UTC is 04:30 the next day in Shanghai.
	y, m, d := time.Now().UTC().Date()
	now := time.Date(y, m, d, 20, 30, 0, 0, time.UTC)
	mr.SetTime(now)
	sh := now.In(shanghai)
	yesterday := sh.Add(-24 * time.Hour)
	set := func(key string, v int64) {
		if err := rdb.Set(ctx, key, v, 40*24*time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set("sh:{a}:"+sh.Format("2006010215"), 900)
	set("sh:{a}:"+sh.Format("20060102"), 900)
	for h := range 24 { // yesterday's hours add up to yesterday's day
		set("sh:{a}:"+time.Date(yesterday.Year(), yesterday.Month(), yesterday.Day(), h, 0, 0, 0, shanghai).Format("2006010215"), 10)
	}
	set("sh:{a}:"+yesterday.Format("20060102"), 240)
	if err := rdb.PFAdd(ctx, "uv:{home}:"+sh.Format("20060102"), "u1", "u2", "u3").Err(); err != nil {
		t.Fatal(err)
	}
	snap, err := Take(ctx, rdb, []*store.Family{fam},
		Options{Location: time.UTC, Structures: Structures{Uniques: []UniqueSpec{{Kind: store.HyperLogLog, Family: uv}}},
			Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	f := snap.Family("sh")
	if f == nil || f.Keys != 27 {
		t.Fatalf("family sh: %+v", f)
	}
	day, hour := f.CurrentWindow("day"), f.CurrentWindow("hour")
	if day == nil || day.Window != sh.Format("20060102") || day.Total != 900 || hour == nil || hour.Total != 900 {
		t.Errorf("current windows: day %+v, hour %+v; want Shanghai's %s", day, hour, sh.Format("20060102"))
	}
	if n := len(f.Series.Days); n == 0 || f.Series.Days[n-1] != 900 || f.Series.Days[n-2] != 240 {
		t.Errorf("day series ends %v, want ... 240 900", f.Series.Days)
	}
	if want := 900 / now.Sub(store.WindowAt(store.Hour, now, shanghai).Start).Seconds(); hourAvg(f) != want {
		t.Errorf("hour average %v, want %v", hourAvg(f), want)
	}
	if r := f.Reconciliation; r == nil || r.Days != 1 || r.Mismatched != 0 {
		t.Errorf("reconciliation %+v, want one ended day that adds up", r)
	}
	if len(snap.Uniques) != 1 || snap.Uniques[0].Union7d == nil || *snap.Uniques[0].Union7d != 3 {
		t.Errorf("uniques %+v, want Shanghai's today found, 3 members over 7 days", snap.Uniques)
	}
}
