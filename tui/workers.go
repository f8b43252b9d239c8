package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// workersLevel lists each job library's live processes as the library records them (Sidekiq's
// processes, RQ's workers, asynq's servers, BullMQ's worker connections), from the last sweep,
// stale ones marked; a library that records none, or no beat, says so. The Queues view opens it.
type workersLevel struct {
	c      *console
	rows   list[workerRow]
	filter string
}

// workerRow is one process, or an entry's row saying it lists none.
type workerRow struct {
	entry string // the [[job_queue]] entry's name
	lib   string // its layout
	w     *snapshot.JobWorker
	kept  bool // the library records its processes in Redis
}

func newWorkersLevel(c *console) *workersLevel {
	l := &workersLevel{c: c, rows: list[workerRow]{id: func(r workerRow) string {
		if r.w == nil {
			return r.entry
		}
		return r.entry + " " + r.w.Identity
	}}}
	l.sync()
	return l
}

func (l *workersLevel) crumb() string      { return "Workers" }
func (l *workersLevel) filterText() string { return l.filter }
func (l *workersLevel) refresh() tea.Cmd   { return nil } // the Snapshot's; each poll brings it

func (l *workersLevel) setFilter(text string) {
	l.filter = text
	l.rows.reset()
	l.sync()
}

func (l *workersLevel) bindings() []binding { return moveBindings(l.c.keys, &l.rows, nil) }

// sync sets the rows from the last Snapshot: each entry's processes, or one row when it lists
// none.
func (l *workersLevel) sync() {
	var rows []workerRow
	if s := l.c.status.Snapshot; s != nil {
		for _, e := range s.JobQueues {
			ws := e.Workers
			if ws == nil || len(ws.List) == 0 {
				if matches(l.filter, e.Name, e.Layout) {
					rows = append(rows, workerRow{entry: e.Name, lib: e.Layout, kept: ws != nil && ws.Found != nil})
				}
				continue
			}
			for i, w := range ws.List {
				if matches(l.filter, e.Name, e.Layout, w.Identity, w.Host, w.State, strings.Join(w.Queues, " ")) {
					rows = append(rows, workerRow{entry: e.Name, lib: e.Layout, w: &ws.List[i]})
				}
			}
		}
	}
	l.rows.set(rows)
}

func (l *workersLevel) render(w, h int) string {
	st := l.c.styles
	s := l.c.status.Snapshot
	if s == nil {
		return st.Muted.Render("Waiting for the first sweep to complete…")
	}
	if len(s.JobQueues) == 0 {
		return st.Muted.Render(fit("No [[job_queue]] is configured: the Workers view lists the processes of the job libraries hourglass reads.", w))
	}
	t := &table{styles: l.c, selected: l.rows.sel, cols: []column{
		{title: "LIBRARY"}, {title: "PROCESS", flex: true}, {title: "HEALTH"}, {title: "BUSY", right: true},
		{title: "STATE", flex: true}, {title: "LAST BEAT", right: true}, {title: "EXPIRES", right: true},
		{title: "HOST:PID", flex: true, optional: true}, {title: "QUEUES", flex: true, optional: true}, {title: "STARTED", right: true, optional: true},
	}}
	var notes []string
	for i, r := range l.rows.rows {
		t.rows = append(t.rows, l.cells(r))
		if i == l.rows.sel && r.w != nil && r.w.Stale {
			notes = append(notes, fmt.Sprintf("%s %s: stale: %s", r.entry, r.w.Identity, r.w.StaleWhy))
		}
	}
	lines := []string{fit(l.summary(s), w), ""}
	tl := t.render(w)
	from, to := l.rows.window(max(h-len(lines)-4-len(s.JobQueues), 1))
	lines = append(lines, tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	lines = append(lines, "")
	for _, n := range append(notes, l.entryNotes(s)...) {
		lines = append(lines, st.Muted.Render(fit(n, w)))
	}
	lines = append(lines, st.Muted.Render(fit("BUSY: jobs running / concurrency · LAST BEAT and STARTED: how long ago · EXPIRES: until the library "+
		"takes the process for gone · STALE: its beat is past that · — not recorded by the library · esc back", w)))
	return strings.Join(lines, "\n")
}

// summary counts the processes listed, live and stale, over every entry.
func (l *workersLevel) summary(s *snapshot.Snapshot) string {
	var live, stale tally // "—" where no library records the figure, never 0
	for _, e := range s.JobQueues {
		if e.Workers == nil {
			continue
		}
		if e.Workers.Error != "" {
			live.unread()
			stale.unread()
			continue
		}
		live.add(e.Workers.Live)
		stale.add(e.Workers.Stale)
	}
	text := fmt.Sprintf("%s live, %s stale", live.text(), stale.text())
	if n, _, _ := stale.sum.Value(); n > 0 {
		return l.c.styles.Title.Render("Workers") + "  " + l.c.styles.Warn.Render(text)
	}
	return l.c.styles.Title.Render("Workers") + "  " + text
}

// entryNotes are what each entry cannot show (the library's notes), what it left out, and why
// it could not be read.
func (l *workersLevel) entryNotes(s *snapshot.Snapshot) []string {
	var notes []string
	for _, e := range s.JobQueues {
		ws := e.Workers
		switch {
		case ws == nil:
			notes = append(notes, e.Name+": not read yet")
			continue
		case ws.Error != "":
			notes = append(notes, e.Name+": error: "+ws.Error)
		case ws.More() > 0:
			notes = append(notes, fmt.Sprintf("%s: %s not shown", e.Name, format.Count(ws.More(), "more process", "more processes")))
		}
		for _, n := range ws.Notes {
			notes = append(notes, e.Name+": "+n)
		}
	}
	return notes
}

// cells are one row's cells: the library's entry, then the cells the report shows too.
func (l *workersLevel) cells(r workerRow) []string {
	lib := strings.ToLower(r.lib) + " " + r.entry
	if r.w == nil {
		if !r.kept {
			return []string{lib, format.NotKept, "", "", "not recorded"}
		}
		return []string{lib, "(none)"}
	}
	c := cells.Worker(*r.w)
	if c[1] == cells.Stale {
		c[1] = l.c.styles.Warn.Render(c[1])
	}
	return append([]string{lib}, c...)
}
