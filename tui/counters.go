package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// counters is the table of families; enter opens one family, and enter on one of its top dims
// opens that tuple (a dimLevel).
type counters struct {
	c         *common
	sel       int
	open      string // the family drilled into, "" for the table
	filter    string // the table's
	famFilter string // the open family's top dims'
	topSel    int
	d         drill // the levels below the family
}

// visible lists the families the table shows, after the filter.
func (v *counters) visible() []string {
	var names []string
	if snap := v.c.status.Snapshot; snap != nil {
		for _, f := range snap.Counters {
			if matches(v.filter, f.Family) {
				names = append(names, f.Family)
			}
		}
	}
	return names
}

func newCounters(c *common) *counters { return &counters{c: c} }

func (v *counters) filterable() bool { return true }

func (v *counters) setFilter(text string) {
	switch {
	case v.d.top() != nil:
		v.d.top().setFilter(text)
	case v.open != "":
		v.famFilter, v.topSel = text, 0
	default:
		v.filter, v.sel = text, 0
	}
}

func (v *counters) filterText() string {
	switch {
	case v.d.top() != nil:
		return v.d.top().filterText()
	case v.open != "":
		return v.famFilter
	}
	return v.filter
}

func (v *counters) crumbs() []string {
	if v.open == "" {
		return nil
	}
	return append([]string{v.open}, v.d.crumbs()...)
}

func (v *counters) refresh() tea.Cmd { return pollRefresh(v.d.top()) }

func (v *counters) family() string {
	if v.open != "" {
		return v.open
	}
	if vis := v.visible(); v.sel < len(vis) {
		return vis[v.sel]
	}
	return ""
}

func (v *counters) back() bool {
	if v.d.pop() {
		return true
	}
	if v.open == "" {
		return false
	}
	v.open, v.topSel, v.famFilter = "", 0, ""
	return true
}

func (v *counters) key(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	k := v.c.keys
	if l := v.d.top(); l != nil {
		return l.key(msg)
	}
	switch {
	case key.Matches(msg, k.Up):
		if v.open != "" {
			v.topSel = max(v.topSel-1, 0)
		} else {
			v.sel = max(v.sel-1, 0)
		}
	case key.Matches(msg, k.Down):
		if v.open != "" {
			v.topSel++
		} else {
			v.sel = min(v.sel+1, max(len(v.visible())-1, 0))
		}
	case key.Matches(msg, k.Enter) && v.open != "":
		return true, v.openDim()
	case key.Matches(msg, k.Enter):
		if vis := v.visible(); v.sel < len(vis) {
			v.open, v.topSel = vis[v.sel], 0
		}
	default:
		return false, nil
	}
	return true, nil
}

func (v *counters) render(w, h int) string {
	snap := v.c.status.Snapshot
	if snap == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep to complete…")
	}
	if v.open != "" {
		if l := v.d.top(); l != nil {
			return l.render(w, h)
		}
		if f := snap.Family(v.open); f != nil {
			return v.detail(f, w, h-1) + "\n" + hints(v.c, w, "enter opens the selected dims' windows", "esc back")
		}
		v.open = ""
	}
	return v.table(snap, w, h)
}

func (v *counters) table(snap *scanner.Snapshot, w, h int) string {
	st := v.c.styles
	t := &table{styles: v.c, cols: []column{
		{title: "FAMILY", flex: true}, {title: "KEYS", right: true}, {title: "THIS HOUR", right: true},
		{title: "RATE/S", right: true}, {title: "TODAY", right: true}, {title: "NO TTL", right: true},
		{title: "MISMATCH", right: true}, {title: "LAST 24 HOURS", optional: true},
	}}
	for _, f := range snap.Counters {
		if !matches(v.filter, f.Family) {
			continue
		}
		hour, today, mism := "-", "-", "-"
		if has(f, "hour") {
			hour = "0"
			if cw := f.CurrentWindow("hour"); cw != nil {
				hour = format.Total(cw.Total, cw.Saturated)
			}
		}
		if has(f, "day") {
			today = "0"
			if cw := f.CurrentWindow("day"); cw != nil {
				today = format.Total(cw.Total, cw.Saturated)
			}
		}
		if f.Reconciliation != nil {
			mism = format.Commas(f.MismatchedDims)
		}
		spark := ""
		if n := len(f.Series.Hours); n > 0 {
			spark = format.Sparkline(f.Series.Hours[max(n-24, 0):])
		}
		t.rows = append(t.rows, []string{f.Family, format.Commas(f.Keys), hour, rateText(f), today,
			format.Commas(f.TTL.NoTTL), mism, spark})
	}
	v.sel = min(v.sel, max(len(t.rows)-1, 0))
	t.selected = v.sel
	if len(t.rows) == 0 {
		return st.Muted.Render(fmt.Sprintf("No family matches %q (esc clears the filter).", v.filter))
	}
	lines := t.render(w)
	from, to := window(len(lines)-1, v.sel, h-2)
	out := append([]string{lines[0]}, lines[1+from:1+to]...)
	out = append(out, "", st.Muted.Render("enter opens a family · i injects a burst into it · t toggles steady test traffic"))
	// A tall terminal shows the selected family below the table.
	if rest := h - len(out) - 1; rest >= 14 {
		if f := snap.Family(v.visible()[v.sel]); f != nil {
			out = append(out, "", v.detail(f, w, rest))
		}
	}
	return strings.Join(out, "\n")
}

// rateText is the family's events a second: between sweeps when known, else the hour's average.
func rateText(f scanner.FamilyStats) string {
	if f.RatePerSec != nil {
		return format.Rate(*f.RatePerSec)
	}
	if has(f, "hour") {
		return "~" + format.Rate(f.HourAvgPerSec)
	}
	return "-"
}

func has(f scanner.FamilyStats, g string) bool {
	for _, x := range f.Granularities {
		if x == g {
			return true
		}
	}
	return false
}

// detail is one family: its current windows, rate, series, top dims and reconciliation.
func (v *counters) detail(f *scanner.FamilyStats, w, h int) string {
	st := v.c.styles
	lines := v.summaryLines(f, w, h)

	// The top dims of the current window: hour when the family has hours.
	g := f.Granularities[0]
	cw := f.CurrentWindow(g)
	if cw == nil || len(cw.Top) == 0 {
		lines = append(lines, st.Muted.Render("No keys in the current "+g+" yet."))
		return strings.Join(lines, "\n")
	}
	top, shown, live := v.shownTop(f, g, cw)
	last := "SHARE"
	if live != nil {
		last = "SINCE SWEEP"
		if !live.SweptAt.IsZero() {
			last = "SINCE " + live.SweptAt.In(v.c.opt.Location).Format("15:04:05")
		}
	}
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "#", right: true}, {title: "TOP DIMS THIS " + strings.ToUpper(g), flex: true},
		{title: "VALUE", right: true}, {title: last, right: true},
	}}
	v.topSel = min(v.topSel, max(len(shown)-1, 0))
	t.selected = v.topSel
	for i, at := range shown {
		dv := top[at]
		text := format.DimsText(f.Dims, dv.Dims)
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
		t.rows = append(t.rows, []string{fmt.Sprint(i + 1), text, format.Commas(dv.Value), extra})
	}
	tl := t.render(w)
	room := max(h-len(lines)-1, 1)
	from, to := window(len(tl)-1, v.topSel, room)
	lines = append(lines, tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(lines, "\n")
}

// shownTop is the family's top dims of the current window g as the detail lists them (read live
// when the last poll did), with the indexes the filter keeps.
func (v *counters) shownTop(f *scanner.FamilyStats, g string, cw *scanner.WindowStats) ([]scanner.DimsValue, []int, *scanner.LiveWindow) {
	top, live := cw.Top, v.live(f.Family, g, cw.Window)
	if live != nil {
		top = live.Top
	}
	var shown []int
	for i, dv := range top {
		if matches(v.famFilter, format.DimsText(f.Dims, dv.Dims)) {
			shown = append(shown, i)
		}
	}
	return top, shown, live
}

// openDim opens the selected top dims tuple of the open family.
func (v *counters) openDim() tea.Cmd {
	snap := v.c.status.Snapshot
	if snap == nil {
		return nil
	}
	f := snap.Family(v.open)
	if f == nil || len(f.Granularities) == 0 {
		return nil
	}
	g := f.Granularities[0]
	cw := f.CurrentWindow(g)
	if cw == nil {
		return nil
	}
	top, shown, _ := v.shownTop(f, g, cw)
	if v.topSel >= len(shown) {
		return nil
	}
	dv := top[shown[v.topSel]]
	return v.d.push(newDimLevel(v.c, f.Family, dv.RawKey(), format.DimsText(f.Dims, dv.Dims)))
}

// summaryLines head a family's detail: its pattern, current totals, rate and key count, its
// series (the days only when h leaves room for their chart) and its reconciliation.
func (v *counters) summaryLines(f *scanner.FamilyStats, w, h int) []string {
	st := v.c.styles
	var pattern string
	for _, fi := range v.c.opt.Families {
		if fi.Name == f.Family {
			pattern = fi.Pattern
		}
	}
	lines := []string{st.Title.Render(f.Family) + "  " + st.Muted.Render(pattern)}
	var nums []string
	if cw := f.CurrentWindow("hour"); cw != nil {
		nums = append(nums, fmt.Sprintf("this hour (%s) %s", cw.Window, st.Header.Render(format.Total(cw.Total, cw.Saturated))))
	} else if has(*f, "hour") {
		nums = append(nums, "this hour 0")
	}
	if cw := f.CurrentWindow("day"); cw != nil {
		nums = append(nums, fmt.Sprintf("today (%s) %s", cw.Window, st.Header.Render(format.Total(cw.Total, cw.Saturated))))
	}
	nums = append(nums, "rate "+rateText(*f)+"/s", fmt.Sprintf("%s keys", format.Commas(f.Keys)))
	lines = append(lines, strings.Join(nums, "   "))
	if n := len(f.Series.Hours); n > 0 {
		series := f.Series.Hours[n-min(n, max(w-22, 0)):]
		lines = append(lines, fmt.Sprintf("%-14s %s  peak %s", fmt.Sprintf("last %d hours", len(series)), st.Spark.Render(format.Sparkline(series)), format.Peak(series)))
	}
	if n := len(f.Series.Days); n > 0 && h >= 16 {
		days := f.Series.Days
		lines = append(lines, fmt.Sprintf("last %d days, peak %s a day", len(days), format.Peak(days)))
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

// live returns the live read of family's current window, when the last poll made one.
func (v *counters) live(family, g, window string) *scanner.LiveWindow {
	for i, lw := range v.c.status.Live {
		if lw.Family == family && lw.Granularity == g && lw.Window == window {
			return &v.c.status.Live[i]
		}
	}
	return nil
}

func reconcileText(good, bad func(...string) string, dims []string, r *scanner.Reconciliation) string {
	switch {
	case r.Days == 0:
		return "reconcile: nothing to check yet (no keys in an ended day with every hour retained)"
	case r.Mismatched == 0:
		days := "days"
		if r.Days == 1 {
			days = "day"
		}
		return good(fmt.Sprintf("reconcile: hours add up to the day for %s dims over %d ended %s", format.Commas(r.Dims), r.Days, days))
	}
	text := fmt.Sprintf("reconcile: %s dims disagree, off by %s", format.Commas(r.Mismatched), format.Total(r.Difference, r.Saturated))
	if len(r.Examples) > 0 {
		e := r.Examples[0]
		text += fmt.Sprintf(" (e.g. %s %s: hours %s, day %s)", e.Day, format.DimsText(dims, e.Dims), format.Bound(e.Hours), format.Bound(e.DayValue))
	}
	return bad(text)
}
