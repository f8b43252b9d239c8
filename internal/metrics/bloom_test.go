package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// A filter's figures are series only where the Snapshot knows them: RedisBloom's without
// BF.DEBUG has no false-positive rate, fill, elements, target nor over_target series, not 0.
func TestBloomSeriesOnlyWhereKnown(t *testing.T) {
	rate, added, mem := 0.01, int64(900), int64(4096)
	fig := func(v float64) *snapshot.BloomFigure {
		return &snapshot.BloomFigure{Value: v, Low: v, High: v, Coverage: 1}
	}
	snap := []snapshot.Bloom{{Name: "seen", Unreadable: map[string]int64{"a string": 2}, Filters: []snapshot.BloomFilter{
		{Key: "bf:ours", TargetRate: &rate, Added: &added, MemoryBytes: &mem, Fill: fig(0.4), Elements: fig(880), FalsePositive: fig(0.02), OverTarget: true},
		{Key: "bf:module", Layout: "redisbloom", Added: &added, MemoryBytes: &mem},
	}}}
	got := map[string]float64{}
	collectBlooms(func(d *prometheus.Desc, v float64, labels ...string) {
		key := d.String() + labels[len(labels)-1]
		if _, dup := got[key]; dup {
			t.Errorf("two series %s", key)
		}
		got[key] = v
	}, snap)
	want := map[*prometheus.Desc]map[string]float64{
		descBloomFP: {"bf:ours": 0.02}, descBloomFill: {"bf:ours": 0.4}, descBloomElements: {"bf:ours": 880},
		descBloomTarget: {"bf:ours": 0.01}, descBloomOver: {"bf:ours": 1},
		descBloomAdded: {"bf:ours": 900, "bf:module": 900}, descBloomMemory: {"bf:ours": 4096, "bf:module": 4096},
		descBloomFilters: {"read": 2, "unreadable": 2},
	}
	n := 0
	for d, series := range want {
		for label, v := range series {
			n++
			if g, ok := got[d.String()+label]; !ok || g != v {
				t.Errorf("%s{%s} = %v (present %v), want %v", d, label, g, ok, v)
			}
		}
	}
	if len(got) != n {
		t.Errorf("%d series, want %d: %v", len(got), n, got)
	}
}
