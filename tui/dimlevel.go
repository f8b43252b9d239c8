package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// dimLevel is one dims tuple of a counter family: its hours and days as sparklines, and each
// window's key, value, TTL, expiry and memory, read on demand.
type dimLevel struct {
	c      *console
	family string
	rawKey string // the tuple's current key
	title  string // the dims, as the family's table shows them
	fetch
	d       *snapshot.DimDetail
	rows    list[snapshot.WindowValue] // hours then days, each newest first, after the filter
	filter  string
	showCmd bool // y: the selected key's redis-cli command is shown
}

func newDimLevel(c *console, family, key, title string) *dimLevel {
	return &dimLevel{c: c, family: family, rawKey: key, title: title,
		rows: list[snapshot.WindowValue]{id: func(w snapshot.WindowValue) string { return w.Key }}}
}

func (l *dimLevel) crumb() string { return crumbText(l.title) }
func (l *dimLevel) setFilter(text string) {
	l.filter = text
	l.rows.reset()
	l.build()
}
func (l *dimLevel) filterText() string { return l.filter }
func (l *dimLevel) loaded(seq int, val any, err error) {
	if !l.end(seq, err, l.c.now()) || err != nil {
		return
	}
	d := val.(snapshot.DimDetail)
	l.d = &d
	l.build()
}

// dimEvery is how often a poll reads a tuple's windows again: up to 134 keys a read, charged
// to the sweep's budget, for values of which only the current windows move.
const dimEvery = 5 * time.Second

// busy holds a poll's read back while one is under way or the last answered under dimEvery ago
// (enter and a write read at once).
func (l *dimLevel) busy() bool {
	return l.loading || !l.at.IsZero() && l.c.now().Sub(l.at) < dimEvery
}

func (l *dimLevel) refresh() tea.Cmd {
	in := l.c.opt.Inspector
	if in == nil {
		return nil
	}
	fam, k := l.family, l.rawKey
	return load(l.c.ctx, l, l.begin(), func(ctx context.Context) (any, error) { return in.Dim(ctx, fam, k) })
}

// build sets the rows: the windows shown, hours then days, each newest first, after the filter.
func (l *dimLevel) build() {
	if l.d == nil {
		l.rows.set(nil)
		return
	}
	var out []snapshot.WindowValue
	for _, g := range []string{"hour", "day"} {
		ws := windowsOf(l.d, g)
		for i := len(ws) - 1; i >= 0; i-- {
			if matches(l.filter, ws[i].Window, format.Escape(ws[i].Key)) {
				out = append(out, ws[i])
			}
		}
	}
	l.rows.set(out)
}

// windowsOf are d's windows of granularity g, oldest first.
func windowsOf(d *snapshot.DimDetail, g string) []snapshot.WindowValue {
	var out []snapshot.WindowValue
	for _, w := range d.Windows {
		if w.Granularity == g {
			out = append(out, w)
		}
	}
	return out
}

// bindings: moving the selection while y shows the command copies the new one, since the
// command shown follows the selection.
func (l *dimLevel) bindings() []binding {
	k := l.c.keys
	return append(moveBindings(k, &l.rows, l.copyCommand),
		binding{Binding: k.Copy, short: true, do: func() tea.Cmd {
			l.showCmd = !l.showCmd
			return l.copyCommand()
		}},
		binding{Binding: k.FixTTL, short: true, write: l.c.opt.KeyActions == nil, do: func() tea.Cmd {
			if r, ok := l.rows.selected(); ok {
				return l.repair(r)
			}
			return nil
		}})
}

// copyCommand copies the selected window's redis-cli command while y shows it.
func (l *dimLevel) copyCommand() tea.Cmd {
	r, ok := l.rows.selected()
	if !l.showCmd || !ok || l.c.opt.Inspector == nil {
		return nil
	}
	return tea.SetClipboard(l.c.opt.Inspector.RedisCLI("GET", r.Key))
}

// repair asks to give the selected key its expiry, when it has none.
func (l *dimLevel) repair(w snapshot.WindowValue) tea.Cmd {
	if w.TTLMS != -1 || w.Value == nil {
		l.c.flash(fmt.Sprintf("repair: %s has a TTL or holds no counter: nothing to repair", format.Escape(w.Key)))
		return nil
	}
	fam, k := l.family, w.Key
	return l.c.ask("Repair one key's TTL", []string{
		"Give " + format.Escape(w.Key),
		"its window-aligned expiry: " + l.c.stamp(w.WantExpiresAt) + ".",
		"The key is checked again where it is written: a key given a TTL, rewritten or gone meanwhile is left as it is.",
	}, l, func(ctx context.Context, a KeyActions) (string, error) { return a.RepairKey(ctx, fam, k) })
}

func (l *dimLevel) render(w, h int) string {
	st := l.c.styles
	lines := []string{st.Title.Render(l.family) + "  " + l.title}
	if s := l.status(l.c); s != "" {
		lines = append(lines, s)
	}
	if l.c.opt.Inspector == nil {
		return strings.Join(append(lines, st.Muted.Render(noInspector)), "\n")
	}
	if l.d == nil {
		return strings.Join(lines, "\n")
	}
	lines = append(lines, l.seriesLines(w)...)
	t := &table{styles: l.c, selected: l.rows.sel, cols: []column{
		{title: "WINDOW"}, {title: "VALUE", right: true}, {title: "TTL", right: true},
		{title: "EXPIRES"}, {title: "MEMORY", right: true, optional: true}, {title: "KEY", flex: true},
	}}
	for _, r := range l.rows.rows {
		t.rows = append(t.rows, l.cells(r))
	}
	foot := l.footLines(w)
	tl := t.render(w)
	room := max(h-len(lines)-len(foot)-2, 1)
	from, to := l.rows.window(room)
	lines = append(lines, "", tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(append(lines, foot...), "\n")
}

// cells are one window's row.
func (l *dimLevel) cells(r snapshot.WindowValue) []string {
	value, ttl, expires, mem := "-", "-", "-", "-"
	switch {
	case r.Missing:
		value = "no key"
	case r.Value != nil:
		value = format.Commas(*r.Value)
	default:
		value = format.Unknown
	}
	switch r.TTLMS {
	case -2:
	case -1:
		ttl, expires = l.c.styles.Bad.Render("none"), l.c.styles.Bad.Render("never")
	default:
		ttl, expires = format.Millis(r.TTLMS), l.c.stamp(r.ExpiresAt)
		if !r.WantExpiresAt.IsZero() && absDur(r.ExpiresAt.Sub(r.WantExpiresAt)) > time.Second {
			expires += l.c.styles.Warn.Render("!")
		}
	}
	if r.MemoryBytes != nil {
		mem = format.BytesIEC(*r.MemoryBytes)
	} else if !r.Missing {
		mem = format.Unknown
	}
	return []string{r.Granularity[:1] + " " + r.Window, value, ttl, expires, mem, format.Escape(r.Key)}
}

// seriesLines are the hours and days as sparklines, with the peak, the current window and the
// same hour yesterday.
func (l *dimLevel) seriesLines(w int) []string {
	var out []string
	for _, g := range []string{"hour", "day"} {
		ws := windowsOf(l.d, g)
		if len(ws) == 0 {
			continue
		}
		vals := make([]int64, len(ws))
		peak := 0
		for i, x := range ws {
			if x.Value != nil {
				vals[i] = *x.Value
			}
			if vals[i] > vals[peak] {
				peak = i
			}
		}
		cur := ws[len(ws)-1]
		label := fmt.Sprintf("%-6s", g+"s")
		text := fmt.Sprintf("peak %s (%s) · now %s", format.Commas(vals[peak]), ws[peak].Window, valueText(cur))
		if g == "hour" {
			text += " · same hour yesterday " + sameHourYesterday(ws)
		}
		spark := vals[max(len(vals)-max(w-lipgloss.Width(label+text)-3, 8), 0):]
		out = append(out, fit(label+" "+l.c.styles.Spark.Render(format.Sparkline(spark))+"  "+text, w))
	}
	return out
}

// footLines are the selected window's expiry note, and the redis-cli command when y showed it.
func (l *dimLevel) footLines(w int) []string {
	st := l.c.styles
	var out []string
	if r, ok := l.rows.selected(); ok {
		switch {
		case r.Note != "":
			out = append(out, st.Warn.Render(fit(r.Note, w)))
		case r.TTLMS == -1:
			out = append(out, st.Bad.Render(fit("no TTL: this key never expires; a writer gives it "+l.c.stamp(r.WantExpiresAt), w)))
		case r.TTLMS >= 0 && !r.WantExpiresAt.IsZero() && absDur(r.ExpiresAt.Sub(r.WantExpiresAt)) > time.Second:
			out = append(out, st.Warn.Render(fit("expires "+l.c.stamp(r.ExpiresAt)+"; the window's end plus retention is "+l.c.stamp(r.WantExpiresAt), w)))
		}
		if l.showCmd && l.c.opt.Inspector != nil {
			out = append(out, wrapPlain(l.c.opt.Inspector.RedisCLI("GET", r.Key), w)...)
			out = append(out, st.Muted.Render(fit("(copied to the clipboard where the terminal allows it)", w)))
		}
	}
	return out
}

// valueText is a window's value, or why there is none.
func valueText(x snapshot.WindowValue) string {
	switch {
	case x.Value != nil:
		return format.Commas(*x.Value)
	case x.Missing:
		return "0 (no key)"
	}
	return format.Unknown
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// wrapPlain breaks s (no styles) into lines of at most w cells, so a long command is shown whole.
func wrapPlain(s string, w int) []string {
	var out []string
	r := []rune(s)
	for len(r) > w && w > 0 {
		out = append(out, string(r[:w]))
		r = r[w:]
	}
	return append(out, string(r))
}

// sameHourYesterday is the value of the hour a day before the current one by the wall clock of
// the family's zone (25 or 23 windows back across a change of the clocks), or why it is not shown.
func sameHourYesterday(hours []snapshot.WindowValue) string {
	cur := hours[len(hours)-1]
	want := cur.Start.AddDate(0, 0, -1)
	for _, h := range hours {
		if h.Start.Equal(want) {
			return valueText(h)
		}
	}
	return "not retained"
}
