package traffic

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// TestDayShape: the curve by hand at its trough, its peak and halfway up.
func TestDayShape(t *testing.T) {
	zone := time.FixedZone("UTC+9", 9*3600)
	for _, c := range []struct {
		clock string
		want  float64
	}{{"04:00", 0.2}, {"16:00", 1}, {"10:00", 0.6}, {"22:00", 0.6}} {
		at, err := time.ParseInLocation("2006-01-02 15:04", "2026-03-10 "+c.clock, zone)
		if err != nil {
			t.Fatal(err)
		}
		if got := DayShape(at, zone); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("DayShape at %s = %v, want %v", c.clock, got, c.want)
		}
		if got := DayShape(at.UTC(), zone); math.Abs(got-c.want) > 1e-9 { // the zone decides, not t's
			t.Errorf("DayShape at %s given in UTC = %v, want %v", c.clock, got, c.want)
		}
	}
}

// TestDemoHistoryHasADay: the history is at the live rate's scale, with quiet nights and busy
// afternoons in the demo's zone, and its writes do not grow with the rate. The hour totals are
// read from the keys themselves, the window parsed from each key's name.
func TestDemoHistoryHasADay(t *testing.T) {
	zone := time.FixedZone("UTC+9", 9*3600) // far from the store's UTC, so the family's zone must decide
	now := time.Date(2026, 3, 10, 14, 25, 0, 0, zone)
	for _, rate := range []float64{300, 100_000} {
		hours, keys, events := demoHistoryHours(t, zone, now, rate)
		if len(hours) != 48 {
			t.Fatalf("rate %v: %d hour windows, want 48: %v", rate, len(hours), hours)
		}
		if keys > 48*DemoTuples+4 { // a key per tuple an hour, and the four leaks
			t.Fatalf("rate %v: %d keys, want at most %d: writes must not grow with the rate", rate, keys, 48*DemoTuples+4)
		}
		var sum int64
		for _, n := range hours {
			sum += n
		}
		if sum-47 != events { // the leaks hold 7+14+21+5 and are not counted as events
			t.Errorf("rate %v: keys hold %d events besides the leaks, the history says %d", rate, sum-47, events)
		}
		// 25 minutes of the current hour near the live rate, by hand: 1,500 s × rate, less the few
		// percent the afternoon's rise takes off the minutes before now.
		cur := hours[time.Date(2026, 3, 10, 14, 0, 0, 0, zone).Unix()] - 47
		if want := 1500 * rate; math.Abs(float64(cur)-want) > want*0.03 {
			t.Errorf("rate %v: the current hour holds %d, want %.0f", rate, cur, want)
		}
		quiet, busy := time.Time{}, time.Time{}
		for h := 1; h <= 24; h++ { // the last full day before this hour
			start := time.Date(2026, 3, 10, 14-h, 0, 0, 0, zone)
			perSecond := float64(hours[start.Unix()]) / 3600
			if perSecond < rate/6 || perSecond > rate*1.25 {
				t.Errorf("rate %v: %s holds %.0f a second, not comparable to the live %v", rate, start.Format("15:04"), perSecond, rate)
			}
			if quiet.IsZero() || hours[start.Unix()] < hours[quiet.Unix()] {
				quiet = start
			}
			if busy.IsZero() || hours[start.Unix()] > hours[busy.Unix()] {
				busy = start
			}
		}
		if quiet.Hour() < 1 || quiet.Hour() > 7 || busy.Hour() < 13 || busy.Hour() > 19 {
			t.Errorf("rate %v: quietest hour %s, busiest %s: want a night and an afternoon in UTC+9", rate, quiet.Format("15:04"), busy.Format("15:04"))
		}
		if q, b := hours[quiet.Unix()], hours[busy.Unix()]; b < 3*q {
			t.Errorf("rate %v: busiest hour %d, quietest %d: want a day's swing of at least 3×", rate, b, q)
		}
	}
}

// demoHistoryHours writes the flow family's demo history at rate on a miniredis whose clock reads
// now, and returns its hour totals by window start (Unix seconds), its keys and its events.
func demoHistoryHours(t *testing.T, zone *time.Location, now time.Time, rate float64) (map[int64]int64, int, int64) {
	t.Helper()
	m := miniredis.RunT(t)
	m.SetTime(now)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	st := store.New(rdb, store.Options{Location: time.UTC, LocalClock: func() time.Time { return now }})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The family's own zone, not the store's, is the demo's: its windows are cut there.
	f, err := store.NewFamily(store.FamilySpec{Name: "flow", Pattern: "flow:count:<app>:<device>:<ip>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour, Location: zone})
	if err != nil {
		t.Fatal(err)
	}
	events, err := WriteDemoHistory(t.Context(), st, []*store.Family{f}, rate)
	if err != nil {
		t.Fatal(err)
	}
	hours := map[int64]int64{}
	keys := 0
	for _, k := range m.Keys() {
		if !strings.HasPrefix(k, "flow:count:") {
			continue
		}
		keys++
		at, err := time.ParseInLocation("2006010215", k[strings.LastIndexByte(k, ':')+1:], zone)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		s, err := m.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s holds %q", k, s)
		}
		hours[at.Unix()] += n
	}
	return hours, keys, events
}
