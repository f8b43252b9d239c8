package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// partialStatus is the test status as a first sweep under way would give it: no complete
// Snapshot, and the test's Snapshot as the partial one, flow's keys and current hour estimated
// and its keys without a TTL too rare to scale.
func partialStatus(t *testing.T) snapshot.Status {
	st := testStatus(t)
	st.Families = nil // no live reads yet: the sweep's estimates are what shows
	s := st.Snapshot
	st.Snapshot, st.Partial = nil, s
	s.Scan.Complete, s.Scan.Coverage = false, 0.12
	eta := 220.0
	s.Scan.ETASeconds = &eta
	f := s.Family("flow")
	high := float64(f.Keys) * 1.023
	f.KeysEstimate = &snapshot.Estimate{Estimate: float64(f.Keys), Low: float64(f.Keys) * 0.977, High: &high, Coverage: 0.12}
	for i := range f.Windows {
		if w := &f.Windows[i]; w.Current && w.Granularity == "hour" {
			w.Total = 19_700_000
			h := 20_190_000.0
			w.TotalEstimate = &snapshot.Estimate{Estimate: 19_700_000, Low: 19_210_000, High: &h, Coverage: 0.12}
		}
	}
	n := float64(f.TTL.NoTTL)
	f.TTLEstimate = &snapshot.TTLEstimates{NoTTL: snapshot.Estimate{Estimate: n, Low: n, Seen: n, SoFar: true}}
	f.Health.NoTTL.KeysEstimate = &f.TTLEstimate.NoTTL
	return st
}

// TestFirstSweepShowsEstimates: until the first sweep completes, the counter views show its
// figures as estimates with their intervals, a figure too rare to scale as what was seen so far,
// and the header how much is swept and when it ends (at 120 columns; 80 cut it), at 80 and 120
// columns.
func TestFirstSweepShowsEstimates(t *testing.T) {
	for _, w := range []int{80, 120} {
		for _, c := range []struct {
			keys []string
			what string
			want []string
		}{
			{[]string{"1"}, "the overview", []string{"≈19,700,", "first sweep under way"}},
			{[]string{"2"}, "the counters table", []string{"≈19.7M ±2.5%", "≥1 "}},
			{[]string{"2", "enter"}, "flow's detail", []string{"≈19.7M ±2.5%", "±2.3% keys"}},
			{[]string{"3"}, "the TTL health", []string{"≥1 "}},
		} {
			if w == 120 {
				c.want = append(c.want, "first sweep 12%, ETA 3m40s")
			}
			m := newTestModel(t, &fakeSource{status: partialStatus(t)}, nil, w, 40)
			poll(t, m)
			press(m, c.keys...)
			s := screen(m)
			for _, want := range c.want {
				if !strings.Contains(s, want) {
					t.Errorf("at %d columns %s does not show %q:\n%s", w, c.what, want, s)
				}
			}
			if strings.Contains(s, "Waiting for the first sweep") {
				t.Errorf("at %d columns %s waits for the sweep instead of showing its estimates:\n%s", w, c.what, s)
			}
			for i, line := range strings.Split(s, "\n") {
				if ansi.StringWidth(line) > w {
					t.Errorf("at %d columns line %d of %s is %d wide: %q", w, i, c.what, ansi.StringWidth(line), line)
				}
			}
		}
	}
}

// TestHeaderKeepsTheCostOfWatching: where the header's second line is too long for the terminal,
// the server's memory, then its ops/s, give way before the sweep's progress and what watching
// costs.
func TestHeaderKeepsTheCostOfWatching(t *testing.T) {
	for _, c := range []struct {
		w             int
		kept, dropped []string
	}{
		{160, []string{"ops/s 48,210", "mem 1.0 GiB", "3,320 keys/s", "Redis time ≈0.93%"}, nil},
		{100, []string{"ops/s 48,210", "3,320 keys/s", "Redis time ≈0.93%"}, []string{"mem "}},
		{80, []string{"3,320 keys/s"}, []string{"ops/s", "mem "}},
	} {
		m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, c.w, 40)
		poll(t, m)
		header := strings.Split(screen(m), "\n")[1]
		for _, k := range c.kept {
			if !strings.Contains(header, k) {
				t.Errorf("at %d columns the header drops %q: %q", c.w, k, header)
			}
		}
		for _, d := range c.dropped {
			if strings.Contains(header, d) {
				t.Errorf("at %d columns the header keeps %q over the cost of watching: %q", c.w, d, header)
			}
		}
	}
}
