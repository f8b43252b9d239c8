package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// familyLevel is one counter family below the Counters table: its current windows, rate,
// series and reconciliation, and the top dims of its current window (read live when the last
// poll did); enter opens the selected tuple's windows (a dimLevel). Its rows are the
// Snapshot's, set again at each poll.
type familyLevel struct {
	c      *console
	d      *drill // the view's, where enter opens a tuple; nil for the table's preview
	name   string
	filter string
	// From the last Snapshot: the family (nil when it has none of that name), the granularity
	// of its top dims (hour when it has hours), that window, and its live read if any.
	f    *snapshot.FamilyStats
	g    string
	cw   *snapshot.WindowStats
	live *snapshot.LiveWindow
	rows list[topRow] // the top dims the filter keeps
}

// topRow is one of the top dims, with its place in the window's top list (the live read's
// movement is by that place).
type topRow struct {
	at int
	dv snapshot.DimsValue
}

func newFamilyLevel(c *console, d *drill, name string) *familyLevel {
	l := &familyLevel{c: c, d: d, name: name, rows: list[topRow]{id: func(r topRow) string { return r.dv.Raw }}}
	l.sync()
	return l
}

func (l *familyLevel) crumb() string { return l.name }
func (l *familyLevel) setFilter(text string) {
	l.filter = text
	l.rows.reset()
	l.sync()
}
func (l *familyLevel) filterText() string { return l.filter }
func (l *familyLevel) refresh() tea.Cmd   { return nil } // the Snapshot's; each poll brings it

// sync finds the family in the last Snapshot and sets the rows: the top dims of its current
// window the filter keeps.
func (l *familyLevel) sync() {
	l.f, l.g, l.cw, l.live = nil, "", nil, nil
	var rows []topRow
	if s := l.c.snapshot(); s != nil {
		l.f = s.Family(l.name)
	}
	if l.f != nil && len(l.f.Granularities) > 0 {
		l.g = l.f.Granularities[0]
		l.cw = l.f.CurrentWindow(l.g)
	}
	if l.cw != nil {
		top := l.cw.Top
		if l.live = l.liveRead(); l.live != nil {
			top = l.live.Top
		}
		for i, dv := range top {
			if matches(l.filter, format.DimsText(l.f.Dims, dv.Dims)) {
				rows = append(rows, topRow{at: i, dv: dv})
			}
		}
	}
	l.rows.set(rows)
}

// liveRead is the live read of the family's current window, when the last poll made one.
func (l *familyLevel) liveRead() *snapshot.LiveWindow {
	for i, lw := range l.c.status.Live {
		if lw.Family == l.name && lw.Granularity == l.g && lw.Window == l.cw.Window {
			return &l.c.status.Live[i]
		}
	}
	return nil
}

func (l *familyLevel) bindings() []binding {
	return append(moveBindings(l.c.keys, &l.rows, nil), binding{Binding: withHelp(l.c.keys.Enter, "open dims"), short: true, do: func() tea.Cmd {
		r, ok := l.rows.selected()
		if !ok || l.d == nil {
			return nil
		}
		return l.d.push(newDimLevel(l.c, l.name, r.dv.Raw, format.DimsText(l.f.Dims, r.dv.Dims)))
	}})
}

func (l *familyLevel) render(w, h int) string {
	if l.f == nil {
		return l.c.styles.Muted.Render("the last sweep has no family " + l.name)
	}
	return l.detail(w, h)
}

// detail is the family: its current windows, rate, series, top dims and reconciliation.
func (l *familyLevel) detail(w, h int) string {
	st, f := l.c.styles, l.f
	lines := l.summaryLines(f, w, h)
	if l.cw == nil || len(l.cw.Top) == 0 {
		lines = append(lines, st.Muted.Render("No keys in the current "+l.g+" yet."))
		return strings.Join(lines, "\n")
	}
	cw, live := l.cw, l.live
	last := "SHARE"
	if live != nil {
		last = "SINCE SWEEP"
		if !live.SweptAt.IsZero() {
			last = "SINCE " + live.SweptAt.In(l.c.opt.Location).Format("15:04:05")
		}
	}
	t := &table{styles: l.c, selected: l.rows.sel, cols: []column{
		{title: "#", right: true}, {title: "TOP DIMS THIS " + strings.ToUpper(l.g), flex: true},
		{title: "VALUE", right: true}, {title: last, right: true},
	}}
	for i, r := range l.rows.rows {
		at, dv := r.at, r.dv
		extra := "-"
		switch {
		case live != nil && at < len(live.Moved) && live.Moved[at].Known:
			extra = fmt.Sprintf("%+d", live.Moved[at].By)
		case live != nil: // not in that sweep's top list, or no sweep before this one: not known
		case cw.Total > 0:
			extra = fmt.Sprintf("%.1f%%", 100*float64(dv.Value)/float64(cw.Total))
			if cw.Saturated { // of a total at least this: at most this share
				extra = "≤" + extra
			}
		}
		t.rows = append(t.rows, []string{fmt.Sprint(i + 1), format.DimsText(f.Dims, dv.Dims), format.Commas(dv.Value), extra})
	}
	tl := t.render(w)
	from, to := l.rows.window(max(h-len(lines)-1, 1))
	lines = append(lines, tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(lines, "\n")
}

// summaryLines head a family's detail: its pattern, current totals, rate and key count, its
// series (the days only when h leaves room for their chart) and its reconciliation.
func (l *familyLevel) summaryLines(f *snapshot.FamilyStats, w, h int) []string {
	st := l.c.styles
	var pattern string
	for _, fi := range l.c.opt.Families {
		if fi.Name == f.Family {
			pattern = fi.Pattern
		}
	}
	lines := []string{st.Title.Render(f.Family) + "  " + st.Muted.Render(pattern)}
	if z := f.ZoneMismatch; z != nil {
		for _, l := range wrapWords("warning: "+z.Message, max(w, 20)) {
			lines = append(lines, st.Warn.Render(l))
		}
	}
	live := l.c.status.LiveFamily(f.Family)
	var nums []string
	for _, g := range []struct{ g, label string }{{"hour", "this hour"}, {"day", "today"}} {
		if !f.Has(g.g) {
			continue
		}
		win := ""
		if cw := f.CurrentWindow(g.g); cw != nil {
			win = " (" + cw.Window + ")"
		}
		if cells.UseLive(*f, g.g, live) {
			win = " (" + live.Window + ")"
		}
		if win != "" || g.g == "hour" {
			nums = append(nums, g.label+win+" "+st.Header.Render(cells.WindowTotal(*f, g.g, live)))
		}
	}
	rate := "rate " + cells.Rate(*f, live, "/s")
	if f.RatePerSec != nil && f.RateFrom != "" && !cells.LiveRate(*f, live) {
		rate += " (" + rateSpan(f) + ")"
	}
	nums = append(nums, rate, cells.Count(f.Keys, f.KeysEstimate)+" "+format.Plural(f.Keys, "key", "keys"))
	lines = append(lines, strings.Join(nums, "   "))
	if live != nil {
		lines = append(lines, st.Muted.Render(liveLine(live)))
	}
	if f.RatePerSec == nil && f.RateNote != "" && !cells.LiveRate(*f, live) {
		lines = append(lines, st.Muted.Render("rate: "+f.RateNote))
	}
	if n := len(f.Series.Hours); n > 0 {
		series := f.Series.Hours[n-min(n, max(w-22, 0)):]
		lines = append(lines, fmt.Sprintf("%-14s %s  peak %s", "last "+format.Count(len(series), "hour", "hours"), st.Spark.Render(format.Sparkline(series)), peakText(f.Series, series)))
	}
	if n := len(f.Series.Days); n > 0 && h >= 16 {
		days := f.Series.Days
		lines = append(lines, fmt.Sprintf("last %s, peak %s a day", format.Count(len(days), "day", "days"), peakText(f.Series, days)))
		for _, r := range barChart(days, 3) {
			lines = append(lines, "  "+st.Spark.Render(r))
		}
	}
	if r := f.Reconciliation; r != nil {
		lines = append(lines, reconcileText(st.Good.Render, st.Bad.Render, f.Dims, r))
	}
	lines = append(lines, "")
	return lines
}

func reconcileText(good, bad func(...string) string, dims []string, r *snapshot.Reconciliation) string {
	switch {
	case r.Days == 0:
		return "reconcile: nothing to check yet (no keys in an ended day with every hour retained)"
	case r.Mismatched == 0:
		return good(fmt.Sprintf("reconcile: hours add up to the day for %s dims over %d ended %s", format.Commas(r.Dims), r.Days, format.Plural(r.Days, "day", "days")))
	}
	text := fmt.Sprintf("reconcile: %s dims disagree, off by %s", format.Commas(r.Mismatched), format.Total(r.Difference, r.Saturated))
	if len(r.Examples) > 0 {
		e := r.Examples[0]
		text += fmt.Sprintf(" (e.g. %s %s: hours %s, day %s)", e.Day, format.DimsText(dims, e.Dims), format.Bound(e.Hours), format.Bound(e.DayValue))
	}
	return bad(text)
}

// peakText is a series' largest total, an estimate while the sweep is under way.
func peakText(s snapshot.Series, v []int64) string {
	if s.Estimated && !s.Saturated {
		return "≈" + format.Short(float64(format.MaxOf(v)))
	}
	return format.Peak(v)
}

// rateSpan says what the family's own rate was measured over: the last seconds of reads, or the
// time between the last two sweeps.
func rateSpan(f *snapshot.FamilyStats) string {
	span := format.Age(time.Duration(math.Round(f.RateSpanSec)) * time.Second)
	if f.RateFrom == snapshot.RateFromReads {
		return "last " + span + " of reads"
	}
	return "between sweeps " + span + " apart"
}

// liveLine says what a family's live figures rest on. That is how many keys were read exactly and
// in the sample, of how many, and why a figure is missing. The "how many" is counted by the last
// sweep, or the one under way so far.
func liveLine(l *snapshot.LiveFamily) string {
	from := "last sweep"
	if l.KeysFrom == "sweep" {
		from = "sweep so far"
	}
	s := fmt.Sprintf("live: %s + %s sampled of %s (%s), 95%% intervals",
		format.Count(l.Top, "top key", "top keys"), format.Commas(int64(l.Sampled)), format.Commas(l.Keys), from)
	switch {
	case l.Partial:
		s += "; no sweep has counted the whole window yet: lower bounds"
	case l.Swept > 0 && l.Swept < 1:
		s += fmt.Sprintf("; scaled to the whole window from the %.1f%% of the keys swept since it began", 100*l.Swept)
	}
	if l.Note != "" {
		s += "; " + l.Note
	}
	return s
}
