package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// spark is the history of k as a sparkline of at most w cells.
func (c *console) spark(k string, w int) string {
	h := c.history[k]
	if len(h) > w {
		h = h[len(h)-w:]
	}
	if len(h) == 0 {
		return ""
	}
	return c.styles.Spark.Render(format.Sparkline(h))
}

// uniques shows HyperLogLog and bitmap families, then the Bloom filters (bloomlevel.go); enter
// opens a filter's figures.
type uniques struct {
	drillView
	rows list[uniqRow]
}

func newUniques(c *console) *uniques {
	v := &uniques{rows: list[uniqRow]{id: uniqRow.name}}
	v.drillView = drillView{c: c, build: v.build, reset: v.rows.reset}
	return v
}

// build sets the rows: the uniques, then the Bloom filters, the filter keeps.
func (v *uniques) build() {
	var rows []uniqRow
	if s := v.c.snapshot(); s != nil {
		for i, u := range s.Uniques {
			if matches(v.filter, u.Name) {
				rows = append(rows, uniqRow{u: &s.Uniques[i]})
			}
		}
		rows = append(rows, bloomRows(s, v.filter)...)
	}
	v.rows.set(rows)
}

// shown are the rows' unique families (the Bloom filters' rows come after them).
func (v *uniques) shown() []snapshot.Unique {
	var us []snapshot.Unique
	for _, r := range v.rows.rows {
		if r.u != nil {
			us = append(us, *r.u)
		}
	}
	return us
}

func (v *uniques) bindings() []binding {
	return v.levelBindings(func() []binding {
		return append(moveBindings(v.c.keys, &v.rows, nil), binding{Binding: withHelp(v.c.keys.Enter, "filter's figures"), short: true,
			hidden: len(v.rows.rows) == len(v.shown()), do: v.open})
	})
}

// open shows the selected Bloom filter's figures in full, with its notes.
func (v *uniques) open() tea.Cmd {
	r, ok := v.rows.selected()
	if !ok || r.f == nil {
		v.c.flash("enter opens a Bloom filter; a unique family's figures are all in its row")
		return nil
	}
	return v.d.push(newBloomLevel(v.c, r.bloom.Name, *r.f))
}

func (v *uniques) render(w, h int) string {
	if l := v.d.top(); l != nil {
		return l.render(w, h)
	}
	s := v.c.snapshot()
	if s == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep's first page…")
	}
	if len(s.Uniques) == 0 && len(s.Blooms) == 0 {
		return newPlaceholder(v.c, uniquesText).render(w, h) + "\n\n" + newPlaceholder(v.c, bloomsText).render(w, h)
	}
	st := v.c.styles
	if len(v.rows.rows) == 0 && v.filter != "" {
		return st.Muted.Render(fmt.Sprintf("No unique family or Bloom filter matches %q (esc clears the filter).", v.filter))
	}
	var lines []string
	switch us := v.shown(); {
	case len(s.Uniques) == 0:
		lines = []string{st.Muted.Render(fit(newPlaceholder(v.c, uniquesText).title()+": [[unique]] counts distinct members per window", w))}
	case len(us) == 0:
		lines = []string{st.Muted.Render(fit(fmt.Sprintf("No unique family matches %q.", v.filter), w))}
	default:
		lines = v.uniqueLines(us, w)
	}
	if len(s.Blooms) == 0 {
		return strings.Join(append(lines, "", newPlaceholder(v.c, bloomsText).render(w, h)), "\n")
	}
	return strings.Join(append(lines, v.bloomLines(s, len(v.shown()), w, h-len(lines))...), "\n")
}

// uniqueLines are the unique families' table and its notes.
func (v *uniques) uniqueLines(shown []snapshot.Unique, w int) []string {
	st := v.c.styles
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "UNIQUES", flex: true}, {title: "KIND"}, {title: "CURRENT WINDOW"}, {title: "KEYS", right: true},
		{title: "COUNT", right: true}, {title: "7-DAY UNION", right: true}, {title: "30-DAY UNION", right: true}, {title: "BY WINDOW", optional: true},
	}}
	u := shown[0] // the one the notes below are of: the selected, else the first
	if v.rows.sel < len(shown) {
		t.selected, u = v.rows.sel, shown[v.rows.sel]
	}
	var skips []string // the unions left unread for the budget: the cells say "skipped", these how much
	for _, u := range shown {
		cur, keys, count := "-", "0", "0"
		var series []int64
		for _, win := range u.Windows {
			series = append(series, win.Count)
			if win.Current {
				cur, keys, count = win.Granularity+" "+win.Window, v.c.countCell(win.Keys), v.c.bound(format.Total(win.Count, win.Saturated))
			}
		}
		if u.ZoneMismatch != nil && !strings.HasPrefix(cur, "day ") { // the hour read is not the one being written: not 0
			keys, count = "?", "? zone"
		}
		if len(series) > 30 {
			series = series[len(series)-30:]
		}
		u7, u30 := cells.Union(u.Union7d, u.Union7dSkipped, u.Error, skippedCell), cells.Union(u.Union30d, u.Union30dSkipped, u.Error, skippedCell)
		if v.c.soFar() {
			u7, u30 = "at sweep end", "at sweep end"
		}
		t.rows = append(t.rows, []string{u.Name, u.Kind, cur, keys, count, u7, u30, st.Spark.Render(format.Sparkline(series))})
		skips = append(skips, unionSkips(u)...)
	}
	lines := t.render(w)
	if v.c.soFar() {
		lines = append([]string{st.Muted.Render(fit("first sweep under way: ≥ counts the keys found so far; the unions are read when it completes", w))}, lines...)
	}
	for _, s := range skips {
		lines = append(lines, st.Warn.Render(fit(s, w)))
	}
	for _, u := range shown {
		if z := u.ZoneMismatch; z != nil {
			lines = append(lines, st.Warn.Render(fit(u.Name+": "+z.Message, w)))
		}
	}
	var dims []string
	for k, val := range u.UnionDims {
		dims = append(dims, k+"="+val)
	}
	sort.Strings(dims)
	lines = append(lines, "", st.Muted.Render(fit("count: the sum over the window's keys (one per dims tuple); unions: distinct members over 7 and 30 days", w)))
	if len(dims) > 0 {
		lines = append(lines, st.Muted.Render(fit("the unions of "+u.Name+" are of "+strings.Join(dims, " ")+", the busiest today", w)))
	}
	if u.Error != "" {
		lines = append(lines, st.Bad.Render(u.Error))
	}
	return lines
}

// skippedCell is a union's cell when the sweep's budget left it unread: just "skipped", as the
// column is narrow (the lines below the table say what it would have read). The other cells are
// cells.Union's.
func skippedCell(*snapshot.UnionSkip) string { return "skipped" }

// unionSkips are the lines that say, for each of u's unions the budget left unread, what it
// would have read and what a union may.
func unionSkips(u snapshot.Unique) []string {
	var out []string
	for _, s := range []struct {
		days string
		skip *snapshot.UnionSkip
	}{{"7-day", u.Union7dSkipped}, {"30-day", u.Union30dSkipped}} {
		if s.skip != nil {
			out = append(out, fmt.Sprintf("%s %s union %s (a union may read %s: %s)", u.Name, s.days,
				format.Skipped(s.skip.Bytes), format.BytesIEC(s.skip.BudgetBytes), s.skip.Reason))
		}
	}
	return out
}

// limitText is a limiter's configured limit; 0 is a limits limiter whose keys spell their own.
func limitText(n *int64) string {
	if n == nil {
		return "per key"
	}
	return format.Commas(*n)
}

// limitPhrase says a limiter's limit and window (limitText's and millisOrKey's) as a sentence
// reads them: "limit 100 per 1m", or, for a library whose keys spell their own (python limits'
// LIMITER/<key>/<amount>/<multiples>/<granularity>), "limit and window per key".
func limitPhrase(limit, window string) string {
	switch {
	case limit == perKey && window == perKey:
		return "limit and window per key"
	case limit == perKey:
		return "limit per key, window " + window
	case window == perKey:
		return "limit " + limit + ", window per key"
	}
	return "limit " + limit + " per " + window
}

// perKey is what limitText and millisOrKey say of a limit or window the keys spell.
const perKey = "per key"

// millisOrKey is a configured window, or "per key" for one the keys spell.
func millisOrKey(ms *int64) string {
	if ms == nil {
		return "per key"
	}
	return format.Millis(*ms)
}
