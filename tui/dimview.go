package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// dimLevel is one dims tuple of a counter family: its hours and days as sparklines, and each
// window's key, value, TTL, expiry and memory, read on demand.
type dimLevel struct {
	c      *common
	family string
	rawKey string // the tuple's current key
	title  string // the dims, as the family's table shows them
	fetch
	d       *scanner.DimDetail
	sel     int
	filter  string
	showCmd bool // y: the selected key's redis-cli command is shown
}

func newDimLevel(c *common, family, key, title string) *dimLevel {
	return &dimLevel{c: c, family: family, rawKey: key, title: title}
}

func (l *dimLevel) crumb() string         { return crumbText(l.title) }
func (l *dimLevel) setFilter(text string) { l.filter, l.sel = text, 0 }
func (l *dimLevel) filterText() string    { return l.filter }
func (l *dimLevel) loaded(seq int, val any, err error) {
	if !l.end(seq, err, l.c.now()) || err != nil {
		return
	}
	d := val.(scanner.DimDetail)
	l.d = &d
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

// rows are the windows shown: hours then days, each newest first, after the filter.
func (l *dimLevel) rows() []scanner.WindowValue {
	if l.d == nil {
		return nil
	}
	var out []scanner.WindowValue
	for _, g := range []string{"hour", "day"} {
		ws := windowsOf(l.d, g)
		for i := len(ws) - 1; i >= 0; i-- {
			if matches(l.filter, ws[i].Window, scanner.Escape(ws[i].Key)) {
				out = append(out, ws[i])
			}
		}
	}
	return out
}

// windowsOf are d's windows of granularity g, oldest first.
func windowsOf(d *scanner.DimDetail, g string) []scanner.WindowValue {
	var out []scanner.WindowValue
	for _, w := range d.Windows {
		if w.Granularity == g {
			out = append(out, w)
		}
	}
	return out
}

func (l *dimLevel) key(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	k := l.c.keys
	rows := l.rows()
	switch {
	case key.Matches(msg, k.Up, k.Down):
		if key.Matches(msg, k.Up) {
			l.sel = max(l.sel-1, 0)
		} else {
			l.sel = min(l.sel+1, max(len(rows)-1, 0))
		}
		return true, l.copyCommand(rows) // the command shown follows the selection: so does the clipboard
	case key.Matches(msg, k.Copy):
		l.showCmd = !l.showCmd
		return true, l.copyCommand(rows)
	case key.Matches(msg, k.FixTTL):
		if l.sel < len(rows) {
			return true, l.repair(rows[l.sel])
		}
	default:
		return false, nil
	}
	return true, nil
}

// copyCommand copies the selected window's redis-cli command while y shows it.
func (l *dimLevel) copyCommand(rows []scanner.WindowValue) tea.Cmd {
	if !l.showCmd || l.sel >= len(rows) || l.c.opt.Inspector == nil {
		return nil
	}
	return tea.SetClipboard(l.c.opt.Inspector.RedisCLI("GET", rows[l.sel].Key))
}

// repair asks to give the selected key its expiry, when it has none.
func (l *dimLevel) repair(w scanner.WindowValue) tea.Cmd {
	if w.TTLMS != -1 || w.Value == nil {
		l.c.flash(fmt.Sprintf("repair: %s has a TTL or holds no counter: nothing to repair", scanner.Escape(w.Key)))
		return nil
	}
	fam, k := l.family, w.Key
	return l.c.ask("Repair one key's TTL", []string{
		"Give " + scanner.Escape(w.Key),
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
	rows := l.rows()
	l.sel = min(l.sel, max(len(rows)-1, 0))
	t := &table{styles: l.c, selected: l.sel, cols: []column{
		{title: "WINDOW"}, {title: "VALUE", right: true}, {title: "TTL", right: true},
		{title: "EXPIRES"}, {title: "MEMORY", right: true, optional: true}, {title: "KEY", flex: true},
	}}
	for _, r := range rows {
		t.rows = append(t.rows, l.cells(r))
	}
	foot := l.footLines(rows, w)
	tl := t.render(w)
	room := max(h-len(lines)-len(foot)-2, 1)
	from, to := window(len(tl)-1, l.sel, room)
	lines = append(lines, "", tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(append(lines, foot...), "\n")
}

// cells are one window's row.
func (l *dimLevel) cells(r scanner.WindowValue) []string {
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
	return []string{r.Granularity[:1] + " " + r.Window, value, ttl, expires, mem, scanner.Escape(r.Key)}
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

// footLines are the selected window's expiry note, the redis-cli command when y showed it, and
// the level's keys.
func (l *dimLevel) footLines(rows []scanner.WindowValue, w int) []string {
	st := l.c.styles
	var out []string
	if l.sel < len(rows) {
		r := rows[l.sel]
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
	keys := []string{"y redis-cli command", "esc back"}
	if l.c.opt.KeyActions != nil {
		keys = []string{"y redis-cli command", "e repair this key's TTL", "esc back"}
	}
	return append(out, hints(l.c, w, keys...))
}

// valueText is a window's value, or why there is none.
func valueText(x scanner.WindowValue) string {
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
func sameHourYesterday(hours []scanner.WindowValue) string {
	cur := hours[len(hours)-1]
	want := cur.Start.AddDate(0, 0, -1)
	for _, h := range hours {
		if h.Start.Equal(want) {
			return valueText(h)
		}
	}
	return "not retained"
}
