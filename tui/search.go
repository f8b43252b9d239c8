package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// Searching a queue's tasks. On a queue's tasks, / types what to look for and filters the page on
// screen. That is a substring of the payload, or path=value for a JSON field: args.0.user_id=42,
// data.email=x. Then s searches every task of every section of the queue for it. The search is a
// level of its own. It reads a step at a time in tea.Cmds: a quarter second of pages, within the
// sweep's budget. Each step's matches and progress show as they come, with no cap on how far it
// reaches. The s key stops it and goes on; esc stops it and goes back. It keeps the first
// searchKept matches and counts the rest.

// TaskSearcher is the part of an Inspector that searches a queue's tasks. internal/inspect's
// Inspector has it.
type TaskSearcher interface {
	// StartSearch is a search of sections secs of ref's queue for query, run a step at a time by
	// the function it returns (calls never overlap); no Redis I/O. An error refuses the query.
	StartSearch(ref snapshot.QueueRef, secs []snapshot.TaskSection, query string) (func(context.Context) ([]snapshot.Found, snapshot.SearchProgress, error), error)
}

// searchKept is how many matches the search level keeps; it counts the others.
const searchKept = 1000

// searchMsg is a search step's answer, for the level that asked.
type searchMsg struct {
	to    *searchLevel
	found []snapshot.Found
	prog  snapshot.SearchProgress
	err   error
}

// searchLevel is one search of a queue's tasks and its matches so far.
type searchLevel struct {
	c       *console
	d       *drill // the view's: the search goes on while it is the level on screen
	title   string
	query   string
	step    func(context.Context) ([]snapshot.Found, snapshot.SearchProgress, error)
	started bool
	running bool // a step is under way
	stopped bool // s stopped it
	closed  bool // esc left it
	cancel  context.CancelFunc
	prog    snapshot.SearchProgress
	err     error
	kept    []snapshot.Found
	rows    list[snapshot.Found]
	filter  string
}

// search opens the search of every section of the queue for the filter's text.
func (l *taskLevel) search() tea.Cmd {
	c := l.c
	s, ok := c.opt.Inspector.(TaskSearcher)
	switch {
	case !ok:
		c.flash("this console cannot search a queue's tasks")
		return nil
	case l.d == nil:
		return nil
	case strings.TrimSpace(l.filter) == "":
		c.flash("type what to look for with / first (text, or path=value such as args.0.user_id=42); s then searches every task")
		return nil
	}
	step, err := s.StartSearch(l.ref, l.sections, l.filter)
	if err != nil {
		c.flash("search: " + format.OneLine(err))
		return nil
	}
	sl := &searchLevel{c: c, d: l.d, title: l.title, query: l.filter, step: step,
		rows: list[snapshot.Found]{id: func(f snapshot.Found) string { return string(f.Section) + "\x00" + f.Task.Member }}}
	return l.d.push(sl)
}

func (l *searchLevel) crumb() string      { return crumbText("search " + l.query) }
func (l *searchLevel) filterText() string { return l.filter }
func (l *searchLevel) setFilter(text string) {
	l.filter = text
	l.rows.reset()
	l.build()
}

// refresh starts the search when the level opens; the polls leave it to its own steps.
func (l *searchLevel) refresh() tea.Cmd {
	if l.started {
		return nil
	}
	l.started = true
	return l.next()
}

// close stops the search when the level is left.
func (l *searchLevel) close() {
	l.closed = true
	if l.cancel != nil {
		l.cancel()
	}
}

// next runs one step.
func (l *searchLevel) next() tea.Cmd {
	ctx, cancel := context.WithTimeout(l.c.ctx, readTimeout)
	l.running, l.cancel = true, cancel
	l.c.searching = l
	step := l.step
	return func() tea.Msg {
		defer cancel()
		found, prog, err := step(ctx)
		return searchMsg{to: l, found: found, prog: prog, err: err}
	}
}

// advance takes a step's answer and runs the next, while the search is on screen, not stopped
// and not done.
func (l *searchLevel) advance(msg searchMsg) tea.Cmd {
	l.running = false
	if l.closed {
		return nil
	}
	if errors.Is(msg.err, context.Canceled) && !l.stopped { // stopped and gone on meanwhile
		msg.err = nil
	}
	l.prog, l.err = msg.prog, msg.err
	if room := searchKept - len(l.kept); room > 0 {
		l.kept = append(l.kept, msg.found[:min(room, len(msg.found))]...)
		l.build()
	}
	if msg.err != nil || l.prog.Done || l.stopped || l.d.top() != level(l) {
		return nil
	}
	return l.next()
}

// under reports whether the search is under way: a step running, not stopped or left.
func (l *searchLevel) under() bool { return l.running && !l.stopped && !l.closed }

// toggle stops the search, or goes on with it from where it stopped.
func (l *searchLevel) toggle() tea.Cmd {
	if l.prog.Done {
		return nil
	}
	l.stopped = !l.stopped
	if l.stopped {
		if l.cancel != nil {
			l.cancel()
		}
		return nil
	}
	if l.running {
		return nil
	}
	l.err = nil
	return l.next()
}

func (l *searchLevel) build() {
	l.rows.set(kept(l.kept, func(f snapshot.Found) bool {
		return matches(l.filter, format.Escape(f.Task.ID), preview(f.Task.Payload))
	}))
}

func (l *searchLevel) bindings() []binding {
	return append(moveBindings(l.c.keys, &l.rows, nil),
		binding{Binding: withHelp(l.c.keys.Search, "stop/go on"), short: true, do: l.toggle, hidden: l.prog.Done})
}

func (l *searchLevel) render(w, h int) string {
	st := l.c.styles
	lines := []string{st.Title.Render(l.title) + "  search: " + format.Escape(l.query), fit(l.progressLine(), w)}
	if s := l.stateLine(); s != "" {
		lines = append(lines, s)
	}
	t := &table{styles: l.c, selected: l.rows.sel, cols: []column{
		{title: "SECTION"}, {title: "#", right: true}, {title: "TASK"}, {title: "SIZE", right: true}, {title: "PAYLOAD", flex: true},
	}}
	for _, f := range l.rows.rows {
		size := "?"
		if f.Task.PayloadBytes >= 0 {
			size = format.BytesIEC(f.Task.PayloadBytes)
		}
		t.rows = append(t.rows, []string{sectionName(f.Section), format.Commas(f.At + 1), truncate(taskName(f.Task), 24), size, preview(f.Task.Payload)})
	}
	tl := t.render(w)
	var foot []string
	if n := l.prog.Matched; n > int64(len(l.kept)) {
		foot = append(foot, st.Muted.Render(fit(fmt.Sprintf("the first %s of %s matches are listed", format.Commas(int64(len(l.kept))), format.Commas(n)), w)))
	}
	from, to := l.rows.window(max(h-len(lines)-len(foot)-1, 1))
	lines = append(lines, tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(append(lines, foot...), "\n")
}

// progressLine is how far the search is: the section under way, what it has tested of it and
// of all, the matches, the keys read, and what could not be tested in full.
func (l *searchLevel) progressLine() string {
	p := l.prog
	var b strings.Builder
	if p.Section != "" {
		total := "?"
		if p.SectionTotal >= 0 {
			total = format.Commas(p.SectionTotal)
		}
		fmt.Fprintf(&b, "%s: %s of %s scanned · ", sectionName(p.Section), format.Commas(p.SectionScanned), total)
	}
	fmt.Fprintf(&b, "%s in %s · %s read", format.Count(p.Matched, "match", "matches"), format.Count(p.Scanned, "task", "tasks"), format.Count(p.Keys, "key", "keys"))
	for _, n := range []struct {
		n    int64
		what string
	}{{p.Cut, "searched in their first 4 KiB"}, {p.Unreadable, "unreadable"}, {p.NotJSON, "not JSON"}, {p.Restarts, "restarts (the queue moved: tasks seen again)"}} {
		if n.n > 0 {
			fmt.Fprintf(&b, " · %s %s", format.Commas(n.n), n.what)
		}
	}
	return b.String()
}

// stateLine says whether the search runs, stopped, ended or failed.
func (l *searchLevel) stateLine() string {
	st := l.c.styles
	switch {
	case l.err != nil && !l.stopped:
		return st.Bad.Render("search failed: " + format.OneLine(l.err) + " (s tries again from there)")
	case l.prog.Done:
		return st.Muted.Render("done: every task of every section tested")
	case l.stopped:
		return st.Warn.Render("stopped (s goes on, esc goes back)")
	}
	return st.Muted.Render("searching… (s stops, esc stops and goes back)")
}
