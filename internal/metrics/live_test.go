package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestLiveEstimateSeries: each family's live rate and total now are exported as estimates with
// their 95% intervals' bounds, the share they rest on and when they were read, before any sweep
// completes too; a family whose live read gave no sound figure, or only a lower bound, has none.
// promtool finds nothing to say of the scrape.
func TestLiveEstimateSeries(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 30, 0, 0, time.UTC)
	live := []snapshot.LiveFamily{
		{Family: "pv", Granularity: "hour", ReadAt: at, Swept: 0.04,
			RatePerSec: &estimate.Figure{Estimate: 5100, Low: 4600, High: 5600, Coverage: 0.01},
			Total:      &estimate.Figure{Estimate: 2.4e6, Low: 2.35e6, High: 2.45e6, Coverage: 0.01}},
		{Family: "stat", Granularity: "day", ReadAt: at.Add(-time.Second),
			Total: &estimate.Figure{Estimate: 120, Low: 120, High: 120, Coverage: 1}},
		{Family: "flow", Granularity: "hour", ReadAt: at, Note: "total now and rate: the largest keys hold 67% of the writes seen"},
		{Family: "rev", Granularity: "hour", ReadAt: at, Partial: true, Total: &estimate.Figure{Estimate: 10, Low: 10, High: 10}},
	}
	col := newCollector(func() time.Time { return at })
	col.set(snapshot.Status{Families: live, Partial: &snapshot.Snapshot{}}, nil) // a first sweep under way
	body := scrapeHandler(t, col)
	samples := parse(t, body)
	for _, w := range []struct {
		metric, family string
		want           float64
	}{
		{"hourglass_live_rate_estimate_per_second", "pv", 5100}, {"hourglass_live_rate_estimate_low_per_second", "pv", 4600},
		{"hourglass_live_rate_estimate_high_per_second", "pv", 5600}, {"hourglass_live_window_value_estimate", "pv", 2.4e6},
		{"hourglass_live_window_value_estimate_low", "pv", 2.35e6}, {"hourglass_live_window_value_estimate_high", "pv", 2.45e6},
		{"hourglass_live_estimate_coverage", "pv", 0.04}, {"hourglass_live_estimate_read_timestamp_seconds", "pv", float64(at.Unix())},
		{"hourglass_live_window_value_estimate", "stat", 120}, {"hourglass_live_estimate_coverage", "stat", 1},
	} {
		got := find(samples, w.metric, "family", w.family)
		if len(got) != 1 || got[0].value != w.want {
			t.Errorf("%s{family=%q}: %v, want %v", w.metric, w.family, got, w.want)
		}
	}
	for _, family := range []string{"flow", "rev"} {
		for _, s := range samples {
			if strings.HasPrefix(s.name, "hourglass_live_") && s.labels["family"] == family {
				t.Errorf("%s has %s %v: its live read gave no sound figure", family, s.name, s.value)
			}
		}
	}
	if got := find(samples, "hourglass_live_rate_estimate_per_second", "family", "stat"); len(got) != 0 {
		t.Errorf("stat has a live rate %v, and its read gave none", got)
	}
	bin := promtool(t)
	cmd := exec.CommandContext(t.Context(), bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Fatalf("promtool check metrics: %v\n%s\nscrape:\n%s", err, out.String(), body)
	}
}
