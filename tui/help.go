package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// The keys and their help. The root declares its own bindings: views, filter, back, pause, quit,
// the console's writes. Each view and drill-down level declares its own. The footer and the ?
// overlay are composed from the root's and the active screen's. So a key added to a level shows in
// its help with no other edit.

// globalBindings are the root's keys, with what each does.
func (m *Model) globalBindings() []binding {
	k, v := m.c.keys, m.views[m.active]
	readOnly := m.c.opt.Actions == nil
	_, onUnclaimed := v.(*unclaimed)
	bs := []binding{
		{Binding: k.Next, short: true, do: func() tea.Cmd { m.setActive((m.active + 1) % len(m.views)); return nil }},
		bind(k.Prev, func() tea.Cmd { m.setActive((m.active + len(m.views) - 1) % len(m.views)); return nil }),
		{Binding: k.Back, short: true, do: func() tea.Cmd {
			if !v.back() && m.filter != "" {
				m.setFilter("")
			}
			m.filter = v.filterText() // the level now on screen kept its own
			return nil
		}},
		{Binding: k.Pause, short: true, do: m.togglePause},
		{Binding: k.Help, short: true, do: func() tea.Cmd { m.showHelp = true; return nil }},
		// handleKey quits before it gets here (even from an overlay); q is declared for its help.
		{Binding: k.Quit, short: true, do: func() tea.Cmd { return tea.Quit }},
		{Binding: k.Inject, write: readOnly, do: m.inject},
		{Binding: k.Traffic, write: readOnly, do: m.toggleTraffic},
		{Binding: k.Repair, write: readOnly, do: m.repair},
		// a and w act on the Unclaimed view's groups: its footer names them; elsewhere they say so,
		// but for w when the entries are inferred, which writes them from any view.
		{Binding: k.Claim, short: true, hidden: !onUnclaimed, do: func() tea.Cmd { return m.unclaimedKey(false) }},
		{Binding: k.Propose, short: true, hidden: !onUnclaimed && m.c.status.Inferred == nil, do: func() tea.Cmd { return m.unclaimedKey(true) }},
	}
	if v.filterable() {
		bs = append(bs, binding{Binding: k.Filter, short: true, do: func() tea.Cmd { m.filtering = true; return nil }})
	}
	for i, b := range k.Tabs {
		bs = append(bs, bind(b, func() tea.Cmd { m.setActive(i); return nil }))
	}
	return bs
}

// helpKey names a binding by its keys.
func helpKey(b key.Binding) string { return strings.Join(b.Keys(), " ") }

// helpOf finds the binding of gs whose keys are b's.
func helpOf(gs []binding, b key.Binding) (binding, bool) {
	for _, g := range gs {
		if helpKey(g.Binding) == helpKey(b) {
			return g, true
		}
	}
	return binding{}, false
}

// shown reports whether the footer shows b: a key the footer names, that is not hidden, nor a
// write while writes are off.
func shown(b binding) bool { return b.short && !b.hidden && !b.write }

// footerHelp is the short help: the active screen's own keys between the root's. At a view's
// table: tab, the view's keys, /, p, ? and q. In a drill-down level: the level's keys, /, esc, ?
// and q. When they do not fit, the root's least needed go first, then the screen's own from the
// last, so esc and ? always show.
func (m *Model) footerHelp(w int) string {
	v, k := m.views[m.active], m.c.keys
	g := m.globalBindings()
	inLevel := len(v.crumbs()) > 0
	type item struct {
		b    key.Binding
		keep int // the higher, the later it is dropped
	}
	var items []item
	add := func(b key.Binding, keep int) {
		if gb, ok := helpOf(g, b); ok && shown(gb) {
			items = append(items, item{b, keep})
		}
	}
	if !inLevel {
		add(k.Next, 2)
	}
	own := 0
	for _, b := range v.bindings() {
		switch {
		case !shown(b):
		case helpKey(b.Binding) == helpKey(k.Up): // the arrows are the first guess: ↑ gives way early
			items = append(items, item{b.Binding, 4})
		default:
			items = append(items, item{b.Binding, 100 - own})
			own++
		}
	}
	add(k.Claim, 50)
	add(k.Propose, 49)
	add(k.Filter, 5)
	if inLevel {
		add(k.Back, 1000)
	} else {
		add(k.Pause, 1)
	}
	add(k.Help, 1001)
	add(k.Quit, 3)
	h := m.help
	h.SetWidth(0)
	for {
		bs := make([]key.Binding, len(items))
		for i, it := range items {
			bs[i] = it.b
		}
		line := h.ShortHelpView(bs)
		if lipgloss.Width(line) <= w || len(items) <= 1 {
			return line
		}
		low := 0
		for i, it := range items {
			if it.keep < items[low].keep {
				low = i
			}
		}
		items = append(items[:low], items[low+1:]...)
	}
}

// helpLines is the ? overlay's body. It has a column of the views' keys, one of the active screen's
// and one of the console's. As many as fit in w cells sit side by side, and the rest below. Then it
// says which keys are off and why.
func (m *Model) helpLines(w int) []string {
	k, st := m.c.keys, m.c.styles
	g := m.globalBindings()
	views := append(k.Tabs[:len(viewNames):len(viewNames)], k.Next, k.Prev)
	var screen, global []key.Binding
	var off, screenOff []string // the write keys that are off: the console's, then the screen's
	for _, b := range m.views[m.active].bindings() {
		if !b.hidden {
			screen = append(screen, b.Binding)
		}
		if b.write && !b.hidden {
			screenOff = append(screenOff, b.Help().Key)
		}
	}
	for _, b := range []key.Binding{k.Back, k.Filter, k.Pause, k.Help, k.Quit, k.Inject, k.Traffic, k.Repair, k.Claim, k.Propose} {
		if gb, ok := helpOf(g, b); ok && !gb.hidden {
			global = append(global, b)
			if gb.write {
				off = append(off, b.Help().Key)
			}
		}
	}
	off = append(off, screenOff...)
	h := m.help
	h.SetWidth(0)
	var blocks []string
	for _, col := range [][]key.Binding{views, screen, global} {
		if len(col) > 0 {
			blocks = append(blocks, h.FullHelpView([][]key.Binding{col}))
		}
	}
	lines := append([]string{st.Title.Render("Keys"), ""}, packColumns(blocks, w)...)
	if len(off) > 0 {
		why := m.c.opt.ReadOnlyWhy
		if why == "" {
			why = "this console writes nothing"
		}
		lines = append(lines, "")
		for _, l := range wrapWords(joinAnd(off)+" write, and are off: "+why, w) {
			lines = append(lines, st.Muted.Render(l))
		}
	}
	return append(lines, "", st.Muted.Render("? or esc closes"))
}

// packColumns lays blocks side by side, four cells apart, as many to a row as fit in w cells;
// rows are a blank line apart.
func packColumns(blocks []string, w int) []string {
	var out []string
	var row []string
	width := 0
	flush := func() {
		if len(row) == 0 {
			return
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, row...), "\n")...)
		row, width = nil, 0
	}
	for _, b := range blocks {
		bw := lipgloss.Width(b)
		if len(row) > 0 && width+4+bw > w {
			flush()
		}
		if len(row) > 0 {
			row = append(row, "    ")
			width += 4
		}
		row = append(row, b)
		width += bw
	}
	flush()
	for i, l := range out {
		out[i] = strings.TrimRight(l, " ")
	}
	return out
}

// joinAnd is "a, b and c".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
