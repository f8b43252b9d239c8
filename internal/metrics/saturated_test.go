package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestSaturatedAndSkippedSeries: a gauge whose sum passed the int64 range comes with
// hourglass_saturated 1 naming it (and none for the others), and a union the sweep's budget
// skipped has no series, not 0, even the sweep after one that read it.
func TestSaturatedAndSkippedSeries(t *testing.T) {
	n := int64(41)
	snap := func(skipped bool) *snapshot.Snapshot {
		s := &snapshot.Snapshot{TakenAt: time.Now()}
		s.Counters = []snapshot.FamilyStats{{Family: "hits", Granularities: []string{"hour"}, Windows: []snapshot.WindowStats{
			{Granularity: "hour", Total: math.MaxInt64, Saturated: true, Current: true}}}}
		s.Limiters = []snapshot.Limiter{{Name: "fx", Layout: "hourglass", Hits: math.MaxInt64, HitsSaturated: true},
			{Name: "calm", Layout: "hourglass", Hits: 5}}
		u := snapshot.Unique{Name: "dau", Kind: "bitmap", Windows: []snapshot.UniqueWindow{{Granularity: "day", Count: 3, Current: true}}, Union7d: &n}
		if skipped {
			u.Union7d = nil
			u.Union7dSkipped = &snapshot.UnionSkip{Bytes: 300 << 20, BudgetBytes: 80 << 20, Reason: "over budget"}
		}
		s.Uniques = []snapshot.Unique{u}
		return s
	}
	col := newCollector(nil)
	col.set(snapshot.Status{Snapshot: snap(false)}, nil)
	samples := parse(t, scrapeHandler(t, col))
	sat := find(samples, "hourglass_saturated")
	want := map[string]bool{"hourglass_family_window_value/hits/hour": true, "hourglass_limiter_hits/fx/": true}
	if len(sat) != len(want) {
		t.Errorf("saturated series %v, want %v", sat, want)
	}
	for _, s := range sat {
		if id := s.labels["metric"] + "/" + s.labels["name"] + "/" + s.labels["granularity"]; !want[id] || s.value != 1 {
			t.Errorf("saturated series %s = %v", id, s.value)
		}
	}
	if v := values(samples, "hourglass_unique_union", "days", "name", "dau"); v["7"] != 41 {
		t.Errorf("union before the skip: %v", v)
	}
	col.set(snapshot.Status{Snapshot: snap(true)}, nil)
	if v := values(parse(t, scrapeHandler(t, col)), "hourglass_unique_union", "days", "name", "dau"); len(v) != 0 {
		t.Errorf("a skipped union is exported as %v, want no series", v)
	}
}
