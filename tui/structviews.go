package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// listView is the selection and filter shared by the structure views.
type listView struct {
	c      *common
	sel    int
	filter string
}

func (v *listView) filterable() bool      { return true }
func (v *listView) setFilter(text string) { v.filter, v.sel = text, 0 }
func (v *listView) family() string        { return "" }
func (v *listView) back() bool            { return false }

func (v *listView) move(msg tea.KeyPressMsg, n int) (bool, tea.Cmd) {
	switch {
	case key.Matches(msg, v.c.keys.Up):
		v.sel = max(v.sel-1, 0)
	case key.Matches(msg, v.c.keys.Down):
		v.sel = min(v.sel+1, max(n-1, 0))
	default:
		return false, nil
	}
	return true, nil
}

// spark is the history of k as a sparkline of at most w cells.
func (c *common) spark(k string, w int) string {
	h := c.history[k]
	if len(h) > w {
		h = h[len(h)-w:]
	}
	if len(h) == 0 {
		return ""
	}
	return c.styles.Spark.Render(format.Sparkline(h))
}

// limiters shows each limiter and the busiest keys of the selected one.
type limiters struct{ listView }

func newLimiters(c *common) *limiters { return &limiters{listView{c: c}} }

func (v *limiters) key(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if s := v.c.status.Snapshot; s != nil {
		return v.move(msg, len(s.Limiters))
	}
	return false, nil
}

func (v *limiters) render(w, h int) string {
	s := v.c.status.Snapshot
	if s == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep to complete…")
	}
	if len(s.Limiters) == 0 {
		return newPlaceholder(v.c, limitersText).render(w, h)
	}
	st := v.c.styles
	// Most telling first: a narrow terminal drops columns from the right.
	t := &table{styles: v.c, cols: []column{
		{title: "LIMITER", flex: true}, {title: "KEYS", right: true}, {title: "AT LIMIT", right: true}, {title: "OVER", right: true},
		{title: "REJECTED/S", right: true}, {title: "ALLOWED/S", right: true}, {title: "HITS", right: true},
		{title: "LIMIT", right: true}, {title: "WINDOW", right: true}, {title: "KIND"}, {title: "REJECTED/S OVER TIME", optional: true},
	}}
	own := func(l scanner.Limiter) bool { return l.Layout == "" || l.Layout == "hourglass" }
	var shown []scanner.Limiter
	for _, l := range s.Limiters {
		if matches(v.filter, l.Name) {
			shown = append(shown, l)
		}
	}
	if len(shown) == 0 {
		return st.Muted.Render(fmt.Sprintf("No limiter matches %q (esc clears the filter).", v.filter))
	}
	v.sel = min(v.sel, len(shown)-1)
	t.selected = v.sel
	perSec := func(p *float64, hourTotal int64) string {
		if p != nil {
			return format.Rate(*p)
		}
		// The first snapshot (or the first of an hour): this hour's average, up to when it was taken.
		taken := s.TakenAt
		return "~" + format.Rate(float64(hourTotal)/max(taken.Sub(taken.Truncate(time.Hour)).Seconds(), 1))
	}
	for _, l := range shown {
		if !own(l) { // a library's decisions are its own: hourglass counts no rates for them
			t.rows = append(t.rows, []string{l.Name, format.Commas(l.Keys), format.Commas(l.AtLimit), format.NotKept,
				format.NotKept, format.NotKept, format.Total(l.Hits, l.HitsSaturated), limitText(l.Limit), millisOrKey(l.WindowMS), l.Layout, ""})
			continue
		}
		t.rows = append(t.rows, []string{l.Name, format.Commas(l.Keys), format.Commas(l.AtLimit), format.Commas(l.OverLimit),
			perSec(l.RejectedPerSec, l.Rejected), perSec(l.AllowedPerSec, l.Allowed), format.Total(l.Hits, l.HitsSaturated), format.Commas(l.Limit),
			format.Millis(l.WindowMS), l.Kind, v.c.spark("lim.rejected."+l.Name, 24)})
	}
	lines := t.render(w)
	l := shown[v.sel]
	if l.Unknown > 0 {
		lines = append(lines, st.Warn.Render(fit(fmt.Sprintf("%s keys in no layout %s reads (unknown layout), e.g. %s", format.Commas(l.Unknown), l.Layout, l.UnknownNote), w)))
	}
	if !own(l) && l.RefusedInWindow > 0 {
		lines = append(lines, st.Muted.Render(fit(fmt.Sprintf("%s refused attempts counted in the keys' current windows (%s counts them beside the hits)",
			format.Total(l.RefusedInWindow, l.RefusedSaturated), l.Layout), w)))
	}
	if l.OverLimit > 0 {
		lines = append(lines, st.Bad.Render(fmt.Sprintf("%s keys are past their limit: a writer checks, then adds, and races (as a ZCARD-then-ZADD sliding limiter does)", format.Commas(l.OverLimit))))
	}
	lines = append(lines, "", st.Title.Render("Busiest keys of "+l.Name)+st.Muted.Render("  (the next hit on a key at its limit is refused)"))
	kt := &table{styles: v.c, selected: -1, cols: []column{
		{title: "KEY", flex: true}, {title: "HITS", right: true}, {title: "OF LIMIT", right: true}, {title: "TTL", right: true},
	}}
	for _, k := range l.Top {
		limit := l.Limit
		if k.Limit != nil { // a library's key, read against its own limit
			limit = *k.Limit
		}
		kt.rows = append(kt.rows, []string{k.Key, format.Commas(k.Count), fmt.Sprintf("%.0f%%", 100*float64(k.Count)/float64(max(limit, 1))), format.Millis(k.TTLMS)})
	}
	if len(kt.rows) == 0 {
		lines = append(lines, st.Muted.Render("no keys in the last sweep"))
	} else {
		lines = append(lines, kt.render(w)...)
	}
	return strings.Join(lines, "\n")
}

// uniques shows HyperLogLog and bitmap families.
type uniques struct{ listView }

func newUniques(c *common) *uniques { return &uniques{listView{c: c}} }

func (v *uniques) key(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if s := v.c.status.Snapshot; s != nil {
		return v.move(msg, len(s.Uniques))
	}
	return false, nil
}

func (v *uniques) render(w, h int) string {
	s := v.c.status.Snapshot
	if s == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep to complete…")
	}
	if len(s.Uniques) == 0 {
		return newPlaceholder(v.c, uniquesText).render(w, h)
	}
	st := v.c.styles
	t := &table{styles: v.c, cols: []column{
		{title: "UNIQUES", flex: true}, {title: "KIND"}, {title: "CURRENT WINDOW"}, {title: "KEYS", right: true},
		{title: "COUNT", right: true}, {title: "7-DAY UNION", right: true}, {title: "30-DAY UNION", right: true}, {title: "BY WINDOW", optional: true},
	}}
	var shown []scanner.Unique
	for _, u := range s.Uniques {
		if matches(v.filter, u.Name) {
			shown = append(shown, u)
		}
	}
	if len(shown) == 0 {
		return st.Muted.Render(fmt.Sprintf("No family matches %q (esc clears the filter).", v.filter))
	}
	v.sel = min(v.sel, len(shown)-1)
	t.selected = v.sel
	var skips []string // the unions left unread for the budget: the cells say "skipped", these how much
	for _, u := range shown {
		cur, keys, count := "-", "0", "0"
		var series []int64
		for _, win := range u.Windows {
			series = append(series, win.Count)
			if win.Current {
				cur, keys, count = win.Granularity+" "+win.Window, format.Commas(win.Keys), format.Total(win.Count, win.Saturated)
			}
		}
		if len(series) > 30 {
			series = series[len(series)-30:]
		}
		t.rows = append(t.rows, []string{u.Name, u.Kind, cur, keys, count, unionCell(u.Union7d, u.Union7dSkipped, u.Error),
			unionCell(u.Union30d, u.Union30dSkipped, u.Error), st.Spark.Render(format.Sparkline(series))})
		skips = append(skips, unionSkips(u)...)
	}
	lines := t.render(w)
	for _, s := range skips {
		lines = append(lines, st.Warn.Render(fit(s, w)))
	}
	u := shown[v.sel]
	var dims []string
	for k, val := range u.UnionDims {
		dims = append(dims, k+"="+val)
	}
	sort.Strings(dims)
	lines = append(lines, "", st.Muted.Render("count: the sum over the window's keys (one per dims tuple); unions: distinct members over 7 and 30 days"))
	if len(dims) > 0 {
		lines = append(lines, st.Muted.Render("the unions of "+u.Name+" are of "+strings.Join(dims, " ")+", the busiest today"))
	}
	if u.Error != "" {
		lines = append(lines, st.Bad.Render(u.Error))
	}
	return strings.Join(lines, "\n")
}

// unionCell is a union's cell: its count, "skipped" when the sweep's budget left it unread (a
// line below the table says how much it would have read), "?" when it failed (the error is
// below), "—" when there is none (no day windows, or no key today).
func unionCell(n *int64, skip *scanner.UnionSkip, failed string) string {
	switch {
	case n != nil:
		return format.Commas(*n)
	case skip != nil:
		return "skipped"
	case failed != "":
		return format.Unknown
	}
	return format.NotKept
}

// unionSkips are the lines that say, for each of u's unions the budget left unread, what it
// would have read and what a union may.
func unionSkips(u scanner.Unique) []string {
	var out []string
	for _, s := range []struct {
		days string
		skip *scanner.UnionSkip
	}{{"7-day", u.Union7dSkipped}, {"30-day", u.Union30dSkipped}} {
		if s.skip != nil {
			out = append(out, fmt.Sprintf("%s %s union %s (a union may read %s: %s)", u.Name, s.days,
				format.Skipped(s.skip.Bytes), format.BytesIEC(s.skip.BudgetBytes), s.skip.Reason))
		}
	}
	return out
}

// limitText is a limiter's configured limit; 0 is a limits limiter whose keys spell their own.
func limitText(n int64) string {
	if n == 0 {
		return "per key"
	}
	return format.Commas(n)
}

// millisOrKey is a configured window, or "per key" for one the keys spell.
func millisOrKey(ms int64) string {
	if ms == 0 {
		return "per key"
	}
	return format.Millis(ms)
}
