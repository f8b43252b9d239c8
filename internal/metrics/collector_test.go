package metrics

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestScrapePassesPromtool scrapes the handler after a sweep of keys of every kind and has
// Prometheus's promtool check the text: it must report nothing.
func TestScrapePassesPromtool(t *testing.T) {
	bin := promtool(t)
	f := newFixture(t)
	col := newCollector(nil)
	col.set(sweep(t, f.w), nil)
	body := scrapeHandler(t, col)
	for _, name := range []string{"hourglass_ttl_keys", "hourglass_value_bytes", "hourglass_delay_queue_tasks",
		"hourglass_list_queue_tasks", "hourglass_limiter_keys", "hourglass_unique_members", "hourglass_locks_held",
		"hourglass_last_complete_sweep_age_seconds", "hourglass_reconcile_mismatched_dims",
		"hourglass_unclaimed_keys", "hourglass_unclaimed_bytes", "hourglass_unclaimed_group_keys",
		"hourglass_bloom_false_positive_rate", "hourglass_bloom_elements", "hourglass_bloom_over_target",
		"hourglass_redis_role", "hourglass_redis_maxmemory_policy", "hourglass_redis_evicted_keys_total", "hourglass_redis_connected_clients",
		"hourglass_eviction_risk"} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("the scrape has no %s", name)
		}
	}
	cmd := exec.CommandContext(t.Context(), bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Fatalf("promtool check metrics: %v\n%s\nscrape:\n%s", err, out.String(), body)
	}
}

// TestStatesAddUp checks on a real scrape that no state label counts a key or task twice: the
// states of each metric add up to the total they split.
func TestStatesAddUp(t *testing.T) {
	f := newFixture(t)
	col := newCollector(nil)
	col.set(sweep(t, f.w), nil)
	samples := parse(t, scrapeHandler(t, col))

	type want struct {
		metric string
		labels []string // the series' labels but state
		states map[string]float64
	}
	for _, w := range []want{
		{"hourglass_ttl_keys", []string{"family", "flow"},
			map[string]float64{"ok": 2, "no_ttl": 2, "over_retention": 1, "expired_but_present": 1}},
		{"hourglass_value_keys", []string{"family", "flow"},
			map[string]float64{"integer": 4, "not_integer": 1, "wrong_type": 1}},
		{"hourglass_ttl_keys", []string{"family", "rev"},
			map[string]float64{"ok": 2, "no_ttl": 0, "over_retention": 0, "expired_but_present": 0}},
		{"hourglass_value_keys", []string{"family", "rev"},
			map[string]float64{"integer": 2, "not_integer": 0, "wrong_type": 0}},
		{"hourglass_delay_queue_tasks", []string{"queue", "orders", "key", "delay:orders"},
			map[string]float64{"not_due": 2, "due": 1, "in_flight": 1}},
		{"hourglass_delay_queue_tasks", []string{"queue", "topics", "key", "topic:a"},
			map[string]float64{"not_due": 2, "due": 0, "in_flight": 0}},
		{"hourglass_delay_queue_tasks", []string{"queue", "odd", "key", "delay:odd"},
			map[string]float64{"unknown": 2, "in_flight": 0}},
		{"hourglass_list_queue_tasks", []string{"queue", "emails", "key", "queue:emails"},
			map[string]float64{"queued": 2, "processing": 1}},
		{"hourglass_limiter_keys", []string{"limiter", "api"},
			map[string]float64{"under_limit": 1, "at_limit": 1, "over_limit": 1, "unknown_layout": 0}},
	} {
		got := values(samples, w.metric, "state", w.labels...)
		if len(got) != len(w.states) {
			t.Errorf("%s%v: states %v, want %v", w.metric, w.labels, keysOf(got), keysOf(w.states))
		}
		for st, n := range w.states {
			if v, ok := got[st]; !ok || v != n {
				t.Errorf("%s%v state %s = %v (present %v), want %v", w.metric, w.labels, st, v, ok, n)
			}
		}
	}
	// Every family's states, by expiry and by value, add up to its keys.
	for _, fk := range find(samples, "hourglass_family_keys") {
		fam := fk.labels["family"]
		for _, m := range []string{"hourglass_ttl_keys", "hourglass_value_keys"} {
			if got := sum(values(samples, m, "state", "family", fam)); got != fk.value {
				t.Errorf("%s{family=%q} add up to %v, hourglass_family_keys is %v", m, fam, got, fk.value)
			}
		}
	}
	if fk := find(samples, "hourglass_family_keys", "family", "flow"); len(fk) != 1 || fk[0].value != 6 {
		t.Errorf("hourglass_family_keys{family=flow} = %v, want 6", fk)
	}
	// A pattern that found no queue (boxes) is no error, and gives no series.
	if errs := find(samples, "hourglass_structure_error"); len(errs) > 0 {
		t.Errorf("structure errors: %v", errs)
	}
	if boxes := find(samples, "hourglass_list_queue_tasks", "queue", "boxes"); len(boxes) > 0 {
		t.Errorf("boxes, which no key matches: %v", boxes)
	}
}

// TestEmptiedSeries deletes keys between sweeps: the series they gave are exported at 0 after the
// next sweep, and are gone after the one after it; the others stay as they were.
func TestEmptiedSeries(t *testing.T) {
	f := newFixture(t)
	col := newCollector(nil)
	scrape := func() []sample {
		col.set(sweep(t, f.w), nil)
		return parse(t, scrapeHandler(t, col))
	}
	topicA := []string{"queue", "topics", "key", "topic:a"}
	uv := []string{"name", "uv", "kind", "hll", "granularity", "day"}
	check := func(round string, samples []sample, wantA, wantUV map[string]float64) {
		t.Helper()
		for _, c := range []struct {
			name, by string
			labels   []string
			want     map[string]float64
		}{
			{"hourglass_delay_queue_tasks", "state", topicA, wantA},
			{"hourglass_unique_members", "granularity", uv, wantUV},
		} {
			got := values(samples, c.name, c.by, c.labels...)
			if len(got) != len(c.want) || (len(c.want) > 0 && !maps.Equal(got, c.want)) {
				t.Errorf("%s: %s%v = %v, want %v", round, c.name, c.labels, got, c.want)
			}
		}
		if got := values(samples, "hourglass_delay_queue_tasks", "state", "key", "topic:b"); got["due"] != 1 || len(got) != 3 {
			t.Errorf("%s: topic:b, never emptied: %v", round, got)
		}
		if n := len(find(samples, "hourglass_delay_queue_lag_seconds", topicA...)); n != len(wantA)/3 {
			t.Errorf("%s: %d lag series of topic:a, want %d", round, n, len(wantA)/3)
		}
	}
	check("before", scrape(),
		map[string]float64{"not_due": 2, "due": 0, "in_flight": 0}, map[string]float64{"day": 3})

	f.do(t, "DEL", "topic:a", "uv:{home}:"+f.day())
	check("the sweep after the delete", scrape(),
		map[string]float64{"not_due": 0, "due": 0, "in_flight": 0}, map[string]float64{"day": 0})
	// A scrape between sweeps still holds the zeros.
	check("a second scrape of that sweep", parse(t, scrapeHandler(t, col)),
		map[string]float64{"not_due": 0, "due": 0, "in_flight": 0}, map[string]float64{"day": 0})
	check("the sweep after that", scrape(), map[string]float64{}, map[string]float64{})
}

// TestMetricsDocumented checks that docs/commands.md lists every metric the collector exports.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(string(doc[bytes.Index(doc, []byte("## hourglass serve")):]), "\n## ")
	names := 0
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files { // every file of the package that declares a metric
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`NewDesc\("(hourglass_\w+)"`).FindAllSubmatch(src, -1) {
			names++
			if !strings.Contains(section, "`"+string(m[1])+"`") {
				t.Errorf("docs/commands.md's serve section does not list %s", m[1])
			}
		}
	}
	if names < 20 {
		t.Errorf("found %d metrics in the source: the pattern no longer finds them", names)
	}
}

// TestFirstSweepShowsOnlyItsProgress: while the first sweep is under way its figures are
// estimates, which metrics withhold; only its coverage is exported, and it goes when the sweep
// completes and the family series come.
func TestFirstSweepShowsOnlyItsProgress(t *testing.T) {
	col := newCollector(nil)
	partial := &snapshot.Snapshot{Scan: snapshot.ScanStats{KeysSeen: 500, Coverage: 0.25},
		Counters: []snapshot.FamilyStats{{Family: "pv", Keys: 2000}}}
	col.set(snapshot.Status{Partial: partial}, nil)
	samples := parse(t, scrapeHandler(t, col))
	if got := find(samples, "hourglass_first_sweep_coverage"); len(got) != 1 || got[0].value != 0.25 {
		t.Errorf("coverage %v, want one series at 0.25", got)
	}
	if got := find(samples, "hourglass_family_keys"); len(got) != 0 {
		t.Errorf("an estimate exported: %v", got)
	}
	full := &snapshot.Snapshot{Scan: snapshot.ScanStats{KeysSeen: 2000, Complete: true, Coverage: 1},
		Counters: []snapshot.FamilyStats{{Family: "pv", Keys: 2000}}}
	col.set(snapshot.Status{Snapshot: full}, nil)
	samples = parse(t, scrapeHandler(t, col))
	if got := find(samples, "hourglass_first_sweep_coverage"); len(got) != 0 {
		t.Errorf("coverage %v after the first sweep completed", got)
	}
	if got := find(samples, "hourglass_family_keys", "family", "pv"); len(got) != 1 || got[0].value != 2000 {
		t.Errorf("family keys %v, want 2000", got)
	}
}
