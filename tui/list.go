package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// list is the rows a view or level shows and the selection over them. Its owner sets the rows
// once per poll or read (and when its filter changes), never while drawing; the selection is
// clamped whenever the rows or the selection change, so render only reads it.
type list[T any] struct {
	rows []T
	sel  int
	// id names a row, so that set keeps the selection on the same row when rows come and go
	// between polls; nil keeps the selection's place instead.
	id func(T) string
}

// set replaces the rows: the selection stays on the row it was on (by id) when that row is still
// there, else at its place, clamped to the rows.
func (l *list[T]) set(rows []T) {
	if l.id != nil && l.sel < len(l.rows) {
		was := l.id(l.rows[l.sel])
		for i, r := range rows {
			if l.id(r) == was {
				l.sel = i
				break
			}
		}
	}
	l.rows = rows
	l.clamp()
}

// reset puts the selection on the first row and forgets the rows, as a new filter does: the
// next set starts from the top, whichever row was selected.
func (l *list[T]) reset() { l.rows, l.sel = nil, 0 }

// move moves the selection by delta rows, within the rows; it reports whether it moved.
func (l *list[T]) move(delta int) bool {
	was := l.sel
	l.sel += delta
	l.clamp()
	return l.sel != was
}

func (l *list[T]) clamp() { l.sel = min(max(l.sel, 0), max(len(l.rows)-1, 0)) }

// selected is the selected row; false when there are no rows.
func (l *list[T]) selected() (T, bool) {
	if l.sel < len(l.rows) {
		return l.rows[l.sel], true
	}
	var zero T
	return zero, false
}

// window is the rows to draw in h lines so that the selection stays in view.
func (l *list[T]) window(h int) (from, to int) { return window(len(l.rows), l.sel, h) }

// moveBindings are up and down over l, declared once for every list; after runs when the
// selection moved (the dims level copies the selected key's command), and may be nil.
func moveBindings[T any](k KeyMap, l *list[T], after func() tea.Cmd) []binding {
	step := func(d int) func() tea.Cmd {
		return func() tea.Cmd {
			if l.move(d) && after != nil {
				return after()
			}
			return nil
		}
	}
	return []binding{
		{Binding: k.Up, short: true, do: step(-1)},
		{Binding: k.Down, do: step(1)},
	}
}

// window returns the rows to show so that sel stays in view within h rows.
func window(n, sel, h int) (from, to int) {
	if n <= h || h <= 0 {
		return 0, n
	}
	from = max(0, min(sel-h/2, n-h))
	return from, from + h
}

// binding is one key a view, level or the root answers to: its keys and help (the key.Binding),
// what it does, and how the help shows it. The owner declares all three in one place, so the
// footer and ? are built from what the keys do and cannot drift from it.
type binding struct {
	key.Binding
	do    func() tea.Cmd
	short bool // the footer shows it too, not only ?
	// write marks a key that writes to Redis: while writes are off the footer leaves it out, and
	// ? names it among the keys that are off, with the reason (its handler still says why).
	write bool
	// hidden keeps a key out of the help while it has nothing to act on (u on a lock that has a
	// TTL); it still answers, saying why it does nothing.
	hidden bool
}

// bind declares a binding that ? shows.
func bind(b key.Binding, do func() tea.Cmd) binding { return binding{Binding: b, do: do} }

// withHelp is b with the help text desc, for a level where the key does something more precise
// than the console's default word for it.
func withHelp(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// handle runs the first binding of bs that matches msg; it reports whether one did.
func handle(bs []binding, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	for _, b := range bs {
		if b.do != nil && key.Matches(msg, b.Binding) {
			return true, b.do()
		}
	}
	return false, nil
}
