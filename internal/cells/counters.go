package cells

import (
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// WindowTotal is a counter family's total in its current window of granularity g ("hour" or "day").
// live is the Watcher's live read of the family, nil when none. The total is live's estimate when
// live is of that window and has one. Else it is the last sweep's total, or "0" when that sweep
// found no key in the window. It is "-" when the family keeps no such windows.
func WindowTotal(f snapshot.FamilyStats, g string, live *snapshot.LiveFamily) string {
	if !f.Has(g) {
		return "-"
	}
	if UseLive(f, g, live) {
		t := live.Total
		return Estimate(t.Estimate, t.Low, t.High, t.Exact(), live.Partial, format.Rate, "")
	}
	if cw := f.CurrentWindow(g); cw != nil {
		return Total(cw.Total, cw.Saturated, cw.TotalEstimate)
	}
	return "0"
}

// Rate is a counter family's events a second, followed by unit: "" in a table under RATE/S, "/s" in
// a sentence. It is the slope of the current window's total over the last minute of reads, when the
// family has it (RateFrom "reads": a window whose every key the live reads read). Else it is the
// live estimate, when live has one ("≈9,809/s ±3%"). Else it is the growth between the last two
// sweeps, else the current hour's average ("~0.06/s"). Else it is "-": a day-only family before its
// reads span enough (the family's RateNote says why).
func Rate(f snapshot.FamilyStats, live *snapshot.LiveFamily, unit string) string {
	num := func(r float64) string { return format.Rate(r) + unit }
	switch {
	case f.RatePerSec != nil && f.RateFrom == snapshot.RateFromReads:
		return num(*f.RatePerSec)
	case LiveRate(f, live):
		r := live.RatePerSec
		return Estimate(r.Estimate, r.Low, r.High, r.Exact(), live.Partial, num, unit)
	case f.RatePerSec != nil:
		return num(*f.RatePerSec)
	case f.HourAvgPerSec != nil:
		return "~" + num(*f.HourAvgPerSec) // the hour's average (of an estimated total, while a sweep is under way)
	}
	return "-"
}

// LiveRate reports whether the family's rate is live's estimate. It is when live has one, and the
// family's own is not measured from its reads, nor soon will be. A live read that read every key of
// the window exactly makes the family's points. A family written in bursts would otherwise show the
// live rate's first seconds jumping with each burst, before its reads span enough for a steady one.
// See snapshot.FamilyStats.RateFrom.
func LiveRate(f snapshot.FamilyStats, live *snapshot.LiveFamily) bool {
	if live == nil || live.RatePerSec == nil || f.RateFrom == snapshot.RateFromReads {
		return false
	}
	return live.Total == nil || !live.Total.Exact() || live.Partial
}

// Estimate renders a figure estimated from a sample with its 95% interval [low, high], followed by
// unit. It renders as format.Approx ("≈9.81k/s ±3.0%"), or the number alone (num) when it is exact.
// When partial, it is "≥" and the interval's low end: the sample could count only part of the keys,
// so the figure is a lower bound.
func Estimate(est, low, high float64, exact, partial bool, num func(float64) string, unit string) string {
	switch {
	case partial:
		return "≥" + num(max(low, 0))
	case exact:
		return num(est)
	}
	return format.Approx(est, low, high, unit)
}

// UseLive reports whether the window's total is live's: when live read the family's window of
// granularity g. The exception is when live could count only part of the window (a lower bound)
// while the sweep under way has an estimate of the whole of it, which says more.
func UseLive(f snapshot.FamilyStats, g string, live *snapshot.LiveFamily) bool {
	if live == nil || live.Granularity != g || live.Total == nil {
		return false
	}
	cw := f.CurrentWindow(g)
	return !live.Partial || cw == nil || cw.TotalEstimate == nil
}
