package scanner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestWideAddsExactly: a total is added up in 128 bits, so values near the int64 ends add up
// exactly in any order, and only the figure is clamped (and said to be).
func TestWideAddsExactly(t *testing.T) {
	for _, c := range []struct {
		vals []int64
		want int64
		sat  bool
	}{
		{[]int64{math.MaxInt64, math.MaxInt64, -math.MaxInt64}, math.MaxInt64, false},
		{[]int64{math.MaxInt64, 1, -math.MaxInt64}, 1, false},
		{[]int64{math.MaxInt64, 1}, math.MaxInt64, true},
		{[]int64{math.MinInt64, -1}, math.MinInt64, true},
		{[]int64{math.MinInt64, math.MaxInt64}, -1, false},
		{[]int64{-5, 3}, -2, false},
	} {
		var w snapshot.Int128
		for _, v := range c.vals {
			w.AddInt(v)
		}
		if n, sat := w.Int64(); n != c.want || sat != c.sat {
			t.Errorf("%v: %d (saturated %v), want %d (%v)", c.vals, n, sat, c.want, c.sat)
		}
		if d := w.Sub(w); d != (snapshot.Int128{}) {
			t.Errorf("%v minus itself is %+v", c.vals, d)
		}
	}
	var big snapshot.Int128
	big.AddInt(math.MaxInt64)
	big.AddInt(math.MaxInt64)
	if f := big.Float(); f != 2*float64(math.MaxInt64) || big.Neg().Float() != -f || !big.Greater(snapshot.Int128Of(math.MaxInt64)) {
		t.Errorf("2·MaxInt64 as a float: %v", f)
	}
}

// TestSumOfFiguresSaysWhenItIsABound: a front end's sum of totals is a bound when one of them
// is, and unknown when the bounds point both ways or the rest moves it off the int64 end.
func TestSumOfFiguresSaysWhenItIsABound(t *testing.T) {
	type fig struct {
		n   int64
		sat bool
	}
	for _, c := range []struct {
		figs       []fig
		want       int64
		sat, known bool
	}{
		{[]fig{{5, false}, {7, false}}, 12, false, true},
		{[]fig{{math.MaxInt64, false}, {7, false}}, math.MaxInt64, true, true}, // past the range: at least
		{[]fig{{math.MaxInt64, true}, {7, false}}, math.MaxInt64, true, true},
		{[]fig{{math.MaxInt64, true}, {-7, false}}, 0, true, false}, // at least MaxInt64−7: no figure says it
		{[]fig{{math.MaxInt64, true}, {math.MinInt64, true}}, 0, false, false},
		{[]fig{{math.MinInt64, true}, {-1, false}}, math.MinInt64, true, true},
	} {
		var s snapshot.Sum
		for _, f := range c.figs {
			s.Add(f.n, f.sat)
		}
		n, sat, known := s.Value()
		if known != c.known || (known && (n != c.want || sat != c.sat)) {
			t.Errorf("%v: %d saturated %v known %v, want %d %v %v", c.figs, n, sat, known, c.want, c.sat, c.known)
		}
	}
}

// TestSaturatedTotalsAreMarked writes counter and limiter keys whose values sum past the int64
// range on a real Redis: the Snapshot clamps each such total and says it saturated (in the JSON
// too), a total that comes back into range is exact whatever order SCAN gives, the hour's average
// is the exact sum's, and the reconciliation's difference and example say they are bounds.
func TestSaturatedTotalsAreMarked(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	// The hour before now must fall on today, so that the only ended day reconciled is the one
	// the test writes: in the first hour of a UTC day the test's zone is six hours east.
	now, loc := redistest.ClearOfHourEnd(t, time.Minute).UTC(), time.UTC
	if now.Hour() == 0 {
		loc = time.FixedZone("UTC+6", 6*3600)
		now = now.In(loc)
	}
	fam, err := store.NewFamily(store.FamilySpec{Name: "hits", Pattern: "hits:<page>:<window>", HourFormat: "yyyyMMddHH", HourRetention: 72 * time.Hour,
		DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	set := func(g store.Granularity, at time.Time, page string, v int64) {
		w := store.WindowAt(g, at, loc)
		k, err := fam.Key(w, []string{page})
		if err != nil {
			t.Fatal(err)
		}
		if err := rdb.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		rdb.ExpireAt(ctx, k, fam.ExpireAt(w))
	}
	set(store.Hour, now, "a", math.MaxInt64) // this hour: 2·MaxInt64, past the range
	set(store.Hour, now, "b", math.MaxInt64)
	prev := now.Add(-time.Hour)
	for _, p := range []struct {
		page string
		v    int64
	}{{"a", math.MaxInt64}, {"b", math.MaxInt64}, {"c", -math.MaxInt64}, {"d", -3}} { // past the range and back: MaxInt64−3, exact
		set(store.Hour, prev, p.page, p.v)
	}
	yesterday := now.AddDate(0, 0, -1)
	day := store.WindowAt(store.Day, yesterday, loc)
	set(store.Hour, day.Start.Add(3*time.Hour), "x", math.MaxInt64) // yesterday's hours pass the range, its day says 1
	set(store.Hour, day.Start.Add(4*time.Hour), "x", math.MaxInt64)
	set(store.Day, yesterday, "x", 1)
	fx, _ := store.ParseKeyPattern("rl:fx:<user>")
	structs := Structures{Limiters: []LimiterSpec{{LimiterSpec: store.LimiterSpec{Name: "fx", Pattern: "rl:fx:<user>", Kind: store.Fixed,
		Window: time.Hour, Limit: 10}, Pattern: fx}}}
	rdb.Set(ctx, "rl:fx:u1", math.MaxInt64, time.Hour)
	rdb.Set(ctx, "rl:fx:u2", math.MaxInt64, time.Hour)

	snap, err := Take(ctx, rdb, []*store.Family{fam}, Options{Location: loc, Count: 2, Structures: structs,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	f := snap.Family("hits")
	cur, last := f.CurrentWindow("hour"), f.Window("hour", store.WindowAt(store.Hour, prev, loc).Start)
	if cur == nil || cur.Total != math.MaxInt64 || !cur.Saturated {
		t.Errorf("this hour %+v, want MaxInt64 saturated", cur)
	}
	if last == nil || last.Total != math.MaxInt64-3 || last.Saturated {
		t.Errorf("the hour before %+v, want the exact %d", last, int64(math.MaxInt64-3))
	}
	secs := now.Sub(store.WindowAt(store.Hour, now, loc).Start).Seconds()
	if want := 2 * float64(math.MaxInt64) / secs; math.Abs(hourAvg(f)-want) > want*1e-9 {
		t.Errorf("hour average %v, want the exact sum's %v", hourAvg(f), want)
	}
	if !f.Series.Saturated || f.Series.Hours[len(f.Series.Hours)-1] != math.MaxInt64 {
		t.Errorf("series %+v, want the saturated hour marked", f.Series)
	}
	r := f.Reconciliation
	if r == nil || r.Mismatched != 1 || r.Difference != math.MaxInt64 || !r.Saturated || len(r.Examples) != 1 ||
		r.Examples[0].Hours != math.MaxInt64 || !r.Examples[0].Saturated || r.Examples[0].DayValue != 1 {
		t.Errorf("reconciliation %+v, want one mismatch past the range, marked", r)
	}
	if l := snap.Limiters[0]; l.Hits != math.MaxInt64 || !l.HitsSaturated {
		t.Errorf("limiter %+v, want its hits saturated", l)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"total":9223372036854775807,"saturated":true`, `"hits_saturated":true`, `"difference":9223372036854775807,"saturated":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JSON lacks %s", want)
		}
	}
}

// TestRateOfASaturatedTotalIsUnknown: the growth of a total past the int64 range is unknown, so
// the rate is left nil (the console then shows the hour's average), never 0.
func TestRateOfASaturatedTotalIsUnknown(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	snapAt := func(at time.Time, total int64, sat bool) *snapshot.Snapshot {
		return &snapshot.Snapshot{TakenAt: at, Counters: []snapshot.FamilyStats{{Family: "f", Granularities: []string{"hour"},
			Windows: []snapshot.WindowStats{{Granularity: "hour", Start: start, Total: total, Saturated: sat, Current: true}}}}}
	}
	s := snapAt(start.Add(20*time.Minute), math.MaxInt64, true)
	SetRate(s, snapAt(start.Add(10*time.Minute), math.MaxInt64, true))
	if r := s.Counters[0].RatePerSec; r != nil {
		t.Errorf("rate %v of a saturated total, want nil", *r)
	}
	s = snapAt(start.Add(20*time.Minute), 1200, false)
	SetRate(s, snapAt(start.Add(10*time.Minute), 600, false))
	if r := s.Counters[0].RatePerSec; r == nil || *r != 1 {
		t.Errorf("rate %v, want 1/s", r)
	}
}

// TestUniqueCountSaturates: a unique window's count, a sum of its keys' distinct counts, says
// when it passed the range.
func TestUniqueCountSaturates(t *testing.T) {
	fam, err := store.NewFamily(store.FamilySpec{Name: "uv", Pattern: "uv:<page>:<window>", DayFormat: "yyyyMMdd", DayRetention: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	a := NewAggregator(nil, Options{Now: func() time.Time { return now }, Location: time.UTC, MemorySamples: -1,
		Structures: Structures{Uniques: []UniqueSpec{{Kind: store.HyperLogLog, Family: fam}}}})
	w := store.WindowAt(store.Day, now, time.UTC)
	var page Page
	for _, d := range []string{"a", "b"} {
		page.Keys = append(page.Keys, Key{Name: "uv:" + d, kind: kindUnique, window: w, Value: "9223372036854775807", Classified: store.Classified{Dims: []string{d}}})
	}
	a.Add(page)
	u := a.Snapshot(true).Uniques[0]
	if len(u.Windows) != 1 || u.Windows[0].Count != math.MaxInt64 || !u.Windows[0].Saturated || u.Union7d != nil || u.Union30d != nil {
		t.Errorf("unique %+v, want its window saturated and no union read", u)
	}
}

// hourAvg is a family's hour average, NaN when it has none.
func hourAvg(f *snapshot.FamilyStats) float64 {
	if f == nil || f.HourAvgPerSec == nil {
		return math.NaN()
	}
	return *f.HourAvgPerSec
}
