package cells

import (
	"testing"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestCounterCells: a live figure is marked as an estimate with its interval, as a lower bound
// when the sample could see only part of the window; a family whose every key is read live takes
// its rate from its reads over the last minute; without a live figure the cells say what the
// sweeps found, as before.
func TestCounterCells(t *testing.T) {
	rate := 13.0
	f := snapshot.FamilyStats{Granularities: []string{"hour"}, RatePerSec: &rate,
		Windows: []snapshot.WindowStats{{Granularity: "hour", Current: true, Total: 785}}}
	live := &snapshot.LiveFamily{Granularity: "hour",
		Total:      &estimate.Figure{Estimate: 12345, Low: 12100, High: 12590, Coverage: 0.1},
		RatePerSec: &estimate.Figure{Estimate: 9809, Low: 9546, High: 10073, Coverage: 0.1}}
	exact := &snapshot.LiveFamily{Granularity: "hour",
		Total:      &estimate.Figure{Estimate: 800, Low: 800, High: 800, Coverage: 1},
		RatePerSec: &estimate.Figure{Estimate: 2.5, Low: 2.5, High: 2.5, Coverage: 1}}
	partial := *live
	partial.Partial = true
	noRate := *live
	noRate.RatePerSec = nil
	cases := []struct {
		name, got, want string
	}{
		{"total, live", WindowTotal(f, "hour", live), "≈12.3k ±2.0%"},
		{"rate, live", Rate(f, live, ""), "≈9.81k ±2.7%"},
		{"rate, live, in a sentence", Rate(f, live, "/s"), "≈9.81k/s ±2.7%"},
		{"total, exact", WindowTotal(f, "hour", exact), "800"},
		// A live read of every key makes the family's points: its rate is theirs, measured over
		// the last minute, not live's, which jumps with each burst of a bursty writer.
		{"rate, exact: the sweeps' while the reads span too little", Rate(f, exact, ""), "13"},
		{"rate, exact: the hour's average while the reads span too little", Rate(snapshot.FamilyStats{Granularities: []string{"hour"}, HourAvgPerSec: new(0.06)}, exact, ""), "~0.06"},
		{"rate, exact, day-only: none while the reads span too little", Rate(snapshot.FamilyStats{Granularities: []string{"day"}, RateNote: "measuring: 4s"}, exact, ""), "-"},
		{"rate from the reads", Rate(snapshot.FamilyStats{Granularities: []string{"day"}, RatePerSec: new(2.5), RateFrom: snapshot.RateFromReads}, live, ""), "2.50"},
		{"total, partial", WindowTotal(f, "hour", &partial), "≥12,100"},
		{"rate, partial", Rate(f, &partial, ""), "≥9,546"},
		{"rate, none live: the sweeps'", Rate(f, &noRate, ""), "13"},
		{"total, no live read", WindowTotal(f, "hour", nil), "785"},
		{"day, live is of the hour", WindowTotal(snapshot.FamilyStats{Granularities: []string{"hour", "day"}}, "day", live), "0"},
		{"no day windows", WindowTotal(f, "day", live), "-"},
		{"narrow", Estimate(1000, 999, 1001, false, false, func(x float64) string { return Rate(snapshot.FamilyStats{RatePerSec: &x}, nil, "") }, ""), "≈1.00k ±0.1%"},
		{"zero with a width", Estimate(0, -3, 5, false, false, func(x float64) string { return Rate(snapshot.FamilyStats{RatePerSec: &x}, nil, "") }, ""), "≈0 (-3–5)"},
		{"a live lower bound gives way to a sweep under way's estimate", WindowTotal(snapshot.FamilyStats{Granularities: []string{"hour"}, Windows: []snapshot.WindowStats{{Granularity: "hour", Current: true, Total: 19_700_000,
			TotalEstimate: &snapshot.Estimate{Estimate: 19_700_000, Low: 19_210_000, High: new(20_190_000.0)}}}}, "hour", &partial), "≈19.7M ±2.5%"},
		{"a sweep under way's hour", WindowTotal(snapshot.FamilyStats{Granularities: []string{"hour"}, Windows: []snapshot.WindowStats{{Granularity: "hour", Current: true, Total: 19_700_000,
			TotalEstimate: &snapshot.Estimate{Estimate: 19_700_000, Low: 19_210_000, High: new(20_190_000.0)}}}}, "hour", nil), "≈19.7M ±2.5%"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}
