package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// writeCurrentWindows prints a family's current window of each granularity: its total, keys and
// top dims.
func writeCurrentWindows(out io.Writer, f *snapshot.FamilyStats) {
	tb := NewTable("  WINDOW", ">TOTAL", ">KEYS", "TOP DIMS")
	for _, g := range f.Granularities {
		if w := f.CurrentWindow(g); w != nil {
			tb.Row(fmt.Sprintf("  %s %s", g, w.Window), cells.Total(w.Total, w.Saturated, w.TotalEstimate), cells.Count(w.Keys, w.KeysEstimate), topText(f, w))
		} else if g == "hour" && f.ZoneMismatch != nil { // the hour read is not the one being written
			tb.Row("  hour (current)", "?", "?", "not read: the windows look cut in another zone")
		} else {
			tb.Row(fmt.Sprintf("  %s (current)", g), "0", "0", "no keys yet")
		}
	}
	if len(tb.rows) > 0 {
		tb.Write(out, "")
	}
}

// writeFamily prints one family's windows, series, health and reconciliation.
func writeFamily(out io.Writer, f *snapshot.FamilyStats, families []*store.Family) {
	var fam *store.Family
	for _, c := range families {
		if c.Name() == f.Family {
			fam = c
		}
	}
	line := f.Family
	if fam != nil {
		line += "  " + fam.Pattern().String()
		var kept []string
		for _, g := range fam.Granularities() {
			kept = append(kept, fmt.Sprintf("%s windows kept %s", g, span(fam.Retention(g))))
		}
		line += "  (" + strings.Join(kept, ", ") + ")"
	}
	fmt.Fprintln(out, line)
	if z := f.ZoneMismatch; z != nil {
		fmt.Fprintf(out, "  warning: %s\n", z.Message)
	}
	writeCurrentWindows(out, f)
	if len(f.Series.Hours) > 0 {
		fmt.Fprintf(out, "  last 48 hours  %s  peak %s\n", format.Sparkline(f.Series.Hours), format.Peak(f.Series.Hours))
	}
	if len(f.Series.Days) > 0 {
		fmt.Fprintf(out, "  last 30 days   %s  peak %s\n", format.Sparkline(f.Series.Days), format.Peak(f.Series.Days))
	}
	counts := map[string][2]int{}
	for _, w := range f.Windows {
		c := counts[w.Granularity]
		c[0]++
		if w.Expired {
			c[1]++
		}
		counts[w.Granularity] = c
	}
	var parts []string
	for _, g := range f.Granularities {
		c := counts[g]
		p := format.Count(c[0], g+" window", g+" windows")
		if c[1] > 0 {
			p += fmt.Sprintf(" (%d past retention)", c[1])
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(out, "  windows        %s\n", strings.Join(parts, ", "))
	ttl := ttlCells(f)
	fmt.Fprintf(out, "  ttl            %s ok, %s no TTL, %s over retention, %s expired but present\n", ttl[0], ttl[1], ttl[2], ttl[3])
	if r := f.Reconciliation; r != nil {
		text := fmt.Sprintf("%d ended %s with every hour retained, %s dims %s", r.Days, format.Plural(r.Days, "day", "days"),
			format.Commas(r.Dims), format.Plural(r.Dims, "tuple", "tuples"))
		switch {
		case r.Days == 0:
			text = "nothing to check: no keys in an ended day whose hours are all still retained"
		case r.Mismatched == 0:
			text += ": hours add up to the day"
		default:
			text += fmt.Sprintf(": %s disagree, off by %s in all", format.Commas(r.Mismatched), format.Total(r.Difference, r.Saturated))
		}
		if r.Sampled < 1 {
			text += fmt.Sprintf(" (estimated from a 1/%.0f sample)", 1/r.Sampled)
		}
		fmt.Fprintf(out, "  reconcile      %s\n", text)
		for _, m := range r.Examples {
			fmt.Fprintf(out, "                 %s %s: hours %s, day %s\n", m.Day, format.DimsText(f.Dims, m.Dims),
				format.Bound(m.Hours), format.Bound(m.DayValue))
		}
	}
}

func topText(f *snapshot.FamilyStats, w *snapshot.WindowStats) string {
	var parts []string
	for _, t := range w.Top[:min(3, len(w.Top))] {
		parts = append(parts, format.DimsText(f.Dims, t.Dims)+" "+format.Commas(t.Value))
	}
	return strings.Join(parts, " · ")
}

// ttlCells are the cells of a family's TTL counts (ok, no TTL, over retention, expired but
// present): their estimates while they are estimates.
func ttlCells(f *snapshot.FamilyStats) [4]string {
	t, te := f.TTL, f.TTLEstimate
	if te == nil {
		return [4]string{cells.Count(t.OK, nil), cells.Count(t.NoTTL, nil), cells.Count(t.OverRetention, nil), cells.Count(t.ExpiredButPresent, nil)}
	}
	return [4]string{cells.Count(t.OK, &te.OK), cells.Count(t.NoTTL, &te.NoTTL), cells.Count(t.OverRetention, &te.OverRetention),
		cells.Count(t.ExpiredButPresent, &te.ExpiredButPresent)}
}
