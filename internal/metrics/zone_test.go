package metrics

import (
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// A family whose windows look cut in another zone than its own has
// hourglass_family_zone_mismatch 1; a family with hour windows that agrees has 0, and one with
// day windows only has none.
func TestZoneMismatchSeries(t *testing.T) {
	s := &snapshot.Snapshot{TakenAt: time.Now()}
	z := &snapshot.ZoneMismatch{Configured: "Asia/Shanghai (+08:00)", Data: "UTC", Offset: "+00:00", Newest: "2026112612", Hours: -8}
	s.Counters = []snapshot.FamilyStats{
		{Family: "pv", Granularities: []string{"hour", "day"}, ZoneMismatch: z},
		{Family: "ok", Granularities: []string{"hour"}},
		{Family: "daily", Granularities: []string{"day"}},
	}
	s.Uniques = []snapshot.Unique{
		{Name: "uv", Kind: "hll", Windows: []snapshot.UniqueWindow{{Granularity: "hour", Window: "2026112612"}}, ZoneMismatch: z},
		{Name: "dau", Kind: "bitmap", Windows: []snapshot.UniqueWindow{{Granularity: "day", Window: "20261126", Current: true}}},
	}
	col := newCollector(nil)
	col.set(snapshot.Status{Snapshot: s}, nil)
	samples := parse(t, scrapeHandler(t, col))
	got := values(samples, "hourglass_family_zone_mismatch", "family")
	if len(got) != 2 || got["pv"] != 1 || got["ok"] != 0 {
		t.Errorf("hourglass_family_zone_mismatch %v, want pv 1, ok 0, no daily", got)
	}
	if got := values(samples, "hourglass_unique_zone_mismatch", "name"); len(got) != 1 || got["uv"] != 1 {
		t.Errorf("hourglass_unique_zone_mismatch %v, want uv 1", got)
	}
}
