package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// A filter's figures read as the Snapshot has them: exact as they are, an estimate with "≈" and
// its interval, one from RedisBloom's items with where it is from, and an unknown one "?", never
// 0; its notes and the keys not read as filters are lines below the table.
func TestBloomReport(t *testing.T) {
	rate, added, mem := 0.01, int64(800), int64(2048)
	exact := func(v float64) *snapshot.BloomFigure {
		return &snapshot.BloomFigure{Value: v, Low: v, High: v, Coverage: 1}
	}
	s := &snapshot.Snapshot{Blooms: []snapshot.Bloom{{Name: "seen", More: true, Unreadable: map[string]int64{"a string, not a filter": 3},
		Filters: []snapshot.BloomFilter{
			{Key: "bf:small", Layout: "hourglass", Capacity: i64(1000), SubFilters: intp(1), TargetRate: &rate, Added: &added, MemoryBytes: &mem, TTLMS: -1,
				Elements: exact(801.4), Fill: exact(0.4321), FalsePositive: exact(0.0123), OverTarget: true},
			{Key: "bf:big", Layout: "hourglass", Capacity: i64(1e6), SubFilters: intp(1), TargetRate: &rate, Added: &added, MemoryBytes: &mem, TTLMS: -1,
				Fill: &snapshot.BloomFigure{Value: 0.05, Low: 0.049, High: 0.051, Coverage: 0.34}, Notes: []string{"estimated from 34.0% of its bits"}},
			{Key: "rb", Layout: "redisbloom", Capacity: i64(100), SubFilters: intp(2), Added: &added, MemoryBytes: &mem, TTLMS: -1,
				Notes: []string{"BF.INFO gives neither the bits set nor the error rate"}},
		}}}}
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	text := out.String()
	lines := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "seen" {
			lines[f[1]] = l
		}
	}
	for key, want := range map[string][]string{
		"bf:small": {"801", "43.2%", "1.23%", "1%", "OVER", "2.0 KiB"},
		"bf:big":   {"≈5% (4.9%–5.1%)", "?"},
		"rb":       {"redisbloom", "800", "no TTL"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[key], w) {
				t.Errorf("the row of %s lacks %q: %q", key, w, lines[key])
			}
		}
	}
	unknown := 0
	for _, f := range strings.Fields(lines["rb"]) {
		if f == "?" {
			unknown++
		}
	}
	if unknown != 5 {
		t.Errorf("rb's elements, fill, false positives, target and over are not all unknown: %q", lines["rb"])
	}
	if strings.Contains(lines["rb"], " 0 ") || strings.Contains(lines["rb"], "0%") {
		t.Errorf("an unknown figure shown as 0: %q", lines["rb"])
	}
	for _, w := range []string{"bloom seen bf:big: estimated from 34.0%", "bloom seen rb: BF.INFO gives neither",
		"bloom seen: 3 keys of its pattern not read as filters: a string, not a filter", "bloom seen: its pattern matches more filters"} {
		if !strings.Contains(text, w) {
			t.Errorf("the report lacks %q:\n%s", w, text)
		}
	}
}

func i64(n int64) *int64 { return &n }

func intp(n int) *int { return &n }
