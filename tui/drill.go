package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The drill-down: below a view's table, enter opens levels that read one structure's keys on
// demand through the Inspector (a dims tuple, a queue's tasks, a limiter's keys, a lock). Each
// level keeps its own selection, scroll and filter, so esc comes back to exactly where the
// operator was. Reads run in tea.Cmds; their answers come back as loadedMsgs to the level that
// asked, and a level that was left meanwhile just drops them.

// level is one screen of a drill-down.
type level interface {
	crumb() string // its place in the breadcrumb
	// bindings are the level's keys, each with what it does and its help: the footer and ?
	// show them while the level is on screen.
	bindings() []binding
	render(w, h int) string
	setFilter(text string)
	filterText() string
	// refresh reads the level's keys again: when it opens, after each poll and after an action.
	refresh() tea.Cmd
}

// drill is a view's stack of open levels, deepest last.
type drill struct{ stack []level }

func (d *drill) top() level {
	if len(d.stack) == 0 {
		return nil
	}
	return d.stack[len(d.stack)-1]
}

// push opens l and starts its first read.
func (d *drill) push(l level) tea.Cmd {
	d.stack = append(d.stack, l)
	return l.refresh()
}

// pop closes the deepest level; it reports whether there was one.
func (d *drill) pop() bool {
	if len(d.stack) == 0 {
		return false
	}
	if c, ok := d.top().(interface{ close() }); ok { // a level with work under way stops it
		c.close()
	}
	d.stack = d.stack[:len(d.stack)-1]
	return true
}

func (d *drill) crumbs() []string {
	out := make([]string, len(d.stack))
	for i, l := range d.stack {
		out[i] = l.crumb()
	}
	return out
}

// loadedMsg carries an on-demand read's answer to the level that asked for it.
type loadedMsg struct {
	to  loader
	seq int
	val any
	err error
}

// loader is a level that reads on demand.
type loader interface {
	loaded(seq int, val any, err error)
}

// readTimeout bounds one on-demand read: a page or a tuple's windows, never a sweep.
const readTimeout = 10 * time.Second

// load runs read off the UI goroutine and sends its answer to to.
func load(ctx context.Context, to loader, seq int, read func(context.Context) (any, error)) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, readTimeout)
		defer cancel()
		v, err := read(ctx)
		return loadedMsg{to: to, seq: seq, val: v, err: err}
	}
}

// fetch is the state of a level's reads: the newest asked for is the one kept.
type fetch struct {
	seq     int
	loading bool
	err     error
	at      time.Time // when the last read answered (server clock)
}

// begin numbers a new read.
func (f *fetch) begin() int {
	f.seq++
	f.loading = true
	return f.seq
}

// busy reports whether a read is under way.
func (f *fetch) busy() bool { return f.loading }

// end records a read's answer; false for an older read's, which is dropped.
func (f *fetch) end(seq int, err error, now time.Time) bool {
	if seq != f.seq {
		return false
	}
	f.loading, f.err, f.at = false, err, now
	return true
}

// status is the line that says a level is reading, or why its last read failed (the last
// answer stays on screen under it).
func (f *fetch) status(c *console) string {
	switch {
	case f.err != nil:
		return c.styles.Bad.Render("read failed: " + format.OneLine(f.err))
	case f.loading && f.at.IsZero():
		return c.styles.Muted.Render("reading…")
	}
	return ""
}

// noInspector is what a level says when the console has no Inspector to read with.
const noInspector = "this console reads no keys on demand"

// crumbText is a key or dims text made short enough for the breadcrumb.
func crumbText(s string) string { return truncate(s, 40) }

// syncer is a level whose rows come from the Snapshot (a limiter's keys, a lock pattern's
// holders, a family's top dims): each poll sets them again, whether or not it is on screen.
type syncer interface{ sync() }

// sync sets the rows of every open level that shows the Snapshot's.
func (d *drill) sync() {
	for _, l := range d.stack {
		if s, ok := l.(syncer); ok {
			s.sync()
		}
	}
}

// drillView is what the structure views share: the filter of the view's own table and the
// drill-down below it; the table keeps its selection and filter while a level is open, and each
// level its own. Each view builds its rows in build.
type drillView struct {
	c      *console
	filter string
	d      drill
	build  func() // sets the view's own rows from the Snapshot and the filter
	reset  func() // puts the view's selection on its first row
}

func (v *drillView) family() string { return "" }

// sync sets the view's rows and its open levels' from the new Snapshot.
func (v *drillView) sync() {
	v.build()
	v.d.sync()
}

func (v *drillView) setFilter(text string) {
	if l := v.d.top(); l != nil {
		l.setFilter(text)
		return
	}
	v.filter = text
	v.reset()
	v.build()
}

func (v *drillView) filterText() string {
	if l := v.d.top(); l != nil {
		return l.filterText()
	}
	return v.filter
}

func (v *drillView) crumbs() []string { return v.d.crumbs() }
func (v *drillView) back() bool       { return v.d.pop() }

func (v *drillView) refresh() tea.Cmd { return pollRefresh(v.d.top()) }

// filterable: a level that shows one key has nothing to filter.
func (v *drillView) filterable() bool {
	if l, ok := v.d.top().(interface{ filterable() bool }); ok {
		return l.filterable()
	}
	return true
}

// levelBindings are the open level's keys, or own when the view's table is on screen.
func (v *drillView) levelBindings(own func() []binding) []binding {
	if l := v.d.top(); l != nil {
		return l.bindings()
	}
	return own()
}

// pollRefresh reads l again after a poll, unless a read of it is still under way: that read's
// answer is then the one to show. (A new read would make it stale, so reads slower than the polls
// would never show, and each poll would leave one more read running.)
func pollRefresh(l level) tea.Cmd {
	if b, ok := l.(interface{ busy() bool }); l == nil || ok && b.busy() {
		return nil
	}
	return l.refresh()
}

// field is a label and its value, left-aligned after it: a drill-down's read of one key.
func field(label, value string) string { return fit(label, 22) + value }

// wrapWords breaks prose into lines of at most w cells at spaces (a word longer than w is cut
// across lines).
func wrapWords(s string, w int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
		for len([]rune(line)) > w && w > 0 {
			out = append(out, string([]rune(line)[:w]))
			line = string([]rune(line)[w:])
		}
	}
	return append(out, line)
}

// oneKey is what a level showing one key read now holds: the key's name for the breadcrumb, the
// read's state and answer, and whether y's command is shown. It takes no filter.
type oneKey[T any] struct {
	c    *console
	name string // escaped
	// read reads the key through the Inspector; refresh runs it in a tea.Cmd.
	read func(ctx context.Context, in Inspector) (T, error)
	// command is the redis-cli command line of a read's answer, which y copies.
	command func(*T) string
	fetch
	d       *T
	showCmd bool
}

// refresh reads the key again (nothing without an Inspector).
func (o *oneKey[T]) refresh() tea.Cmd {
	in, read := o.c.opt.Inspector, o.read
	if in == nil {
		return nil
	}
	return load(o.c.ctx, o, o.begin(), func(ctx context.Context) (any, error) { return read(ctx, in) })
}

func (o *oneKey[T]) crumb() string      { return crumbText(o.name) }
func (o *oneKey[T]) setFilter(string)   {}
func (o *oneKey[T]) filterText() string { return "" }
func (o *oneKey[T]) filterable() bool   { return false }

func (o *oneKey[T]) loaded(seq int, val any, err error) {
	if o.end(seq, err, o.c.now()) && err == nil {
		d := val.(T)
		o.d = &d
	}
}

// toggleCommand shows or hides the redis-cli command that reads the key, copying it when shown.
func (o *oneKey[T]) toggleCommand() tea.Cmd {
	o.showCmd = !o.showCmd
	if o.showCmd && o.d != nil {
		return tea.SetClipboard(o.command(o.d))
	}
	return nil
}

// snapLevel is a level whose rows come from one entry of the last Snapshot, such as a limiter's
// busiest keys or a lock pattern's held locks. Each poll brings them, so it reads nothing itself.
// find picks the entry by name; keep gives the rows of it the filter keeps.
type snapLevel[E, R any] struct {
	c      *console
	d      *drill // the view's, where enter opens a row
	name   string
	entry  *E // in the last Snapshot; nil when it has none of that name
	rows   list[R]
	filter string
	find   func(s *snapshot.Snapshot, name string) *E
	keep   func(e *E, filter string) []R
}

func (l *snapLevel[E, R]) crumb() string      { return l.name }
func (l *snapLevel[E, R]) filterText() string { return l.filter }
func (l *snapLevel[E, R]) refresh() tea.Cmd   { return nil } // the Snapshot's; each poll brings it

func (l *snapLevel[E, R]) setFilter(text string) {
	l.filter = text
	l.rows.reset()
	l.sync()
}

// sync finds the entry in the last Snapshot and sets the rows the filter keeps.
func (l *snapLevel[E, R]) sync() {
	l.entry = nil
	var rows []R
	if s := l.c.snapshot(); s != nil {
		if l.entry = l.find(s, l.name); l.entry != nil {
			rows = l.keep(l.entry, l.filter)
		}
	}
	l.rows.set(rows)
}

// named is the entry of entries whose name (nameOf) is name, or nil.
func named[E any](entries []E, name string, nameOf func(E) string) *E {
	for i := range entries {
		if nameOf(entries[i]) == name {
			return &entries[i]
		}
	}
	return nil
}

// kept are the rows keep keeps, in order.
func kept[R any](rows []R, keep func(R) bool) []R {
	var out []R
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
