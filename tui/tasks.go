package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// taskPageSize is how many tasks a page asks for; the Inspector bounds it by the sweep's budget.
const taskPageSize = 50

// taskLevel lists one queue's tasks, a section at a time (due, later, in flight; a library's
// own states) and a page at a time, and acts on the selected task.
type taskLevel struct {
	c        *console
	ref      snapshot.QueueRef
	title    string
	sections []snapshot.TaskSection
	sec      int
	offset   int64
	// back are the offsets of the pages ] left, so [ returns to each: a page may hold fewer than
	// taskPageSize tasks (the Inspector holds it to the sweep's budget).
	back   []int64
	totals map[snapshot.TaskSection]int64 // each section's size when last read
	fetch
	page   *snapshot.TaskPage
	rows   list[taskRow] // the page's tasks the filter keeps
	filter string
	d      *drill // the view's, where s opens a search
}

// taskRow is a task of the page, with its place in the page (its number in the section is the
// page's offset plus that place).
type taskRow struct {
	at   int
	task snapshot.Task
}

func newTaskLevel(c *console, ref snapshot.QueueRef, title string) *taskLevel {
	l := &taskLevel{c: c, ref: ref, title: title, totals: map[snapshot.TaskSection]int64{},
		// The selection follows the task as the page is read again and tasks move under it.
		rows: list[taskRow]{id: func(r taskRow) string { return r.task.Member }}}
	if c.opt.Inspector != nil {
		l.sections = c.opt.Inspector.TaskSections(ref)
	}
	return l
}

func (l *taskLevel) crumb() string { return crumbText(l.title) }
func (l *taskLevel) setFilter(text string) {
	l.filter = text
	l.rows.reset()
	l.build()
}
func (l *taskLevel) filterText() string { return l.filter }

func (l *taskLevel) section() snapshot.TaskSection {
	if l.sec < len(l.sections) {
		return l.sections[l.sec]
	}
	return ""
}

func (l *taskLevel) loaded(seq int, val any, err error) {
	if !l.end(seq, err, l.c.now()) || err != nil {
		return
	}
	p := val.(snapshot.TaskPage)
	if p.Section != l.section() {
		return
	}
	l.page = &p
	l.totals[p.Section] = p.Total
	l.build()
}

func (l *taskLevel) refresh() tea.Cmd {
	in, sec := l.c.opt.Inspector, l.section()
	if in == nil || sec == "" {
		return nil
	}
	ref, off := l.ref, l.offset
	return load(l.c.ctx, l, l.begin(), func(ctx context.Context) (any, error) {
		return in.Tasks(ctx, ref, sec, off, taskPageSize)
	})
}

// build sets the rows: the page's tasks the filter keeps.
func (l *taskLevel) build() {
	var rows []taskRow
	if l.page != nil {
		for i, t := range l.page.Tasks {
			if matches(l.filter, format.Escape(t.ID), preview(t.Payload)) {
				rows = append(rows, taskRow{at: i, task: t})
			}
		}
	}
	l.rows.set(rows)
}

func (l *taskLevel) bindings() []binding {
	k, off := l.c.keys, l.c.opt.KeyActions == nil
	section := func(step int) func() tea.Cmd {
		return func() tea.Cmd {
			n := len(l.sections)
			if n < 2 {
				return nil
			}
			l.sec, l.offset, l.back, l.page = (l.sec+step+n)%n, 0, nil, nil
			l.rows.reset()
			return l.refresh()
		}
	}
	act := func(a key.Binding) func() tea.Cmd {
		return func() tea.Cmd {
			if r, ok := l.rows.selected(); ok {
				return l.act(a, r.task)
			}
			return nil
		}
	}
	return append(moveBindings(k, &l.rows, nil),
		binding{Binding: k.RunNow, short: true, write: off, do: act(k.RunNow)},
		binding{Binding: k.Return, short: true, write: off, do: act(k.Return)},
		binding{Binding: k.DeleteTask, short: true, write: off, do: act(k.DeleteTask)},
		binding{Binding: k.BulkRunNow, write: l.c.opt.Bulk == nil, do: func() tea.Cmd { return l.bulk(snapshot.ActionRunNow) }},
		binding{Binding: k.BulkDelete, write: l.c.opt.Bulk == nil, do: func() tea.Cmd { return l.bulk(snapshot.ActionDelete) }},
		binding{Binding: k.BulkArchive, write: l.c.opt.Bulk == nil, do: func() tea.Cmd { return l.bulk(snapshot.ActionArchive) }},
		binding{Binding: k.Undo, write: l.c.opt.Bulk == nil, do: l.undo},
		binding{Binding: k.PauseQueue, write: off, do: l.togglePause},
		binding{Binding: k.Search, do: l.search},
		// A queue that keeps one section has none to turn to: its help leaves ← and → out.
		binding{Binding: k.NextSection, short: true, do: section(1), hidden: len(l.sections) < 2},
		binding{Binding: k.PrevSection, do: section(-1), hidden: len(l.sections) < 2},
		binding{Binding: k.NextPage, short: true, do: l.nextPage, hidden: !l.hasNextPage()},
		binding{Binding: k.PrevPage, do: l.prevPage, hidden: len(l.back) == 0})
}

// hasNextPage reports whether the section holds tasks past the page on screen.
func (l *taskLevel) hasNextPage() bool {
	return l.page != nil && len(l.page.Tasks) > 0 && l.offset+int64(len(l.page.Tasks)) < l.page.Total
}

// nextPage reads the page after this one, when the section holds more.
func (l *taskLevel) nextPage() tea.Cmd {
	if !l.hasNextPage() {
		return nil
	}
	l.back = append(l.back, l.offset)
	l.offset += int64(len(l.page.Tasks))
	l.page = nil
	l.rows.reset()
	return l.refresh()
}

// prevPage goes back to the page ] left.
func (l *taskLevel) prevPage() tea.Cmd {
	n := len(l.back)
	if n == 0 {
		return nil
	}
	l.offset, l.back = l.back[n-1], l.back[:n-1]
	l.page = nil
	l.rows.reset()
	return l.refresh()
}

// act asks to run the selected task now, return it, or delete it.
func (l *taskLevel) act(b key.Binding, t snapshot.Task) tea.Cmd {
	k, sec := l.c.keys, l.section()
	a, title := snapshot.ActionDelete, "Delete one task"
	switch b.Help().Key {
	case k.RunNow.Help().Key:
		if sec == snapshot.SectionDue || sec == snapshot.SectionWaiting || sec == snapshot.SectionInFlight {
			l.c.flash("n runs a task that is not yet due (later, retry or dead); this one is " + sectionName(sec))
			return nil
		}
		a, title = snapshot.ActionRunNow, "Run one task now"
	case k.Return.Help().Key:
		if sec != snapshot.SectionInFlight {
			l.c.flash("b returns an in-flight task to its queue; this one is " + sectionName(sec))
			return nil
		}
		a, title = snapshot.ActionReturn, "Return one in-flight task to its queue"
	}
	lines := []string{
		fmt.Sprintf("%s, %s section:", l.title, sectionName(sec)),
		"task " + taskName(t),
		"payload " + truncate(preview(t.Payload), 200),
		"It is checked again where it is written: a task taken, acknowledged or moved meanwhile is left as it is.",
	}
	ref := l.ref
	return l.c.ask(title, lines, l, func(ctx context.Context, act KeyActions) (string, error) {
		return act.ActOnTask(ctx, ref, sec, t, a)
	})
}

// taskName is a task's id, or its entry when the entry is the task.
func taskName(t snapshot.Task) string {
	if t.ID != "" {
		return format.Escape(t.ID)
	}
	return truncate(format.Escape(t.Member), 120)
}

// sectionName is a section as the screen names it.
func sectionName(s snapshot.TaskSection) string { return strings.ReplaceAll(string(s), "_", " ") }

// preview is a payload as one line: JSON compacted, everything escaped.
func preview(payload string) string {
	var b bytes.Buffer
	if len(payload) > 0 && (payload[0] == '{' || payload[0] == '[') && json.Compact(&b, []byte(payload)) == nil {
		payload = b.String()
	}
	return format.Escape(payload)
}

func (l *taskLevel) render(w, h int) string {
	st := l.c.styles
	lines := []string{st.Title.Render(l.title) + l.pausedMark() + "  " + l.sectionBar()}
	if s := l.status(l.c); s != "" {
		lines = append(lines, s)
	}
	switch {
	case l.c.opt.Inspector == nil:
		return strings.Join(append(lines, st.Muted.Render(noInspector)), "\n")
	case len(l.sections) == 0:
		return strings.Join(append(lines, st.Muted.Render("this queue's tasks cannot be listed")), "\n")
	case l.page == nil:
		return strings.Join(lines, "\n")
	}
	t := l.table()
	tl := t.render(w)
	foot := l.footLines(w)
	room := max(h-len(lines)-len(foot)-1, 1)
	from, to := l.rows.window(room)
	lines = append(lines, tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(append(lines, foot...), "\n")
}

// sectionBar names the sections, the one on screen marked, each with its size when read.
func (l *taskLevel) sectionBar() string {
	var parts []string
	for i, s := range l.sections {
		label := sectionName(s)
		if n, ok := l.totals[s]; ok && n >= 0 {
			label += " " + format.Commas(n)
		}
		if i == l.sec {
			label = l.c.styles.ActiveTab.Render(label)
		}
		parts = append(parts, label)
	}
	return strings.Join(parts, "  ")
}

// table lays out the page's tasks the filter keeps: each one's place in the section, when it is
// due (or its deadline), how long ago or until then, its size and a one-line preview.
func (l *taskLevel) table() *table {
	sec := l.section()
	when, rel := "DUE", "WHEN"
	switch sec {
	case snapshot.SectionInFlight:
		when = "DEADLINE"
	case snapshot.SectionWaiting:
		when = "QUEUED"
	case snapshot.SectionDead: // when it failed for good where the layout keeps it, else when it was queued
		when = "AT"
	}
	t := &table{styles: l.c, selected: l.rows.sel, cols: []column{
		{title: "#", right: true}, {title: when}, {title: rel, right: true},
		{title: "SIZE", right: true}, {title: "PAYLOAD", flex: true},
	}}
	now := l.page.ReadAt
	for _, r := range l.rows.rows {
		task := r.task
		at := task.Due
		switch {
		case sec == snapshot.SectionInFlight:
			at = task.Deadline
		case sec == snapshot.SectionWaiting || at.IsZero():
			at = task.Enqueued
		}
		body := preview(task.Payload)
		if body == "" && task.Note != "" {
			body = task.Note
		}
		size := "?"
		if task.PayloadBytes >= 0 {
			size = format.BytesIEC(task.PayloadBytes)
		}
		t.rows = append(t.rows, []string{fmt.Sprint(l.page.Offset + int64(r.at) + 1), l.c.clock(at), relative(at, now), size, body})
	}
	return t
}

// footLines are the page's place in the section and the selected task's note.
func (l *taskLevel) footLines(w int) []string {
	st := l.c.styles
	var out []string
	p := l.page
	switch {
	case len(p.Tasks) == 0 && p.Offset > 0 && p.Total > 0: // the section shrank below this page
		out = append(out, st.Muted.Render(fit(fmt.Sprintf("no tasks from #%s on: the %s section holds %s now ([ goes back)",
			format.Commas(p.Offset+1), sectionName(p.Section), format.Commas(p.Total)), w)))
	case len(p.Tasks) == 0:
		out = append(out, st.Muted.Render("no "+sectionName(p.Section)+" tasks"))
	default:
		out = append(out, st.Muted.Render(fit(fmt.Sprintf("tasks %s–%s of %s in %s", format.Commas(p.Offset+1),
			format.Commas(p.Offset+int64(len(p.Tasks))), format.Commas(p.Total), format.Escape(p.Key)), w)))
	}
	if r, ok := l.rows.selected(); ok && r.task.Note != "" {
		out = append(out, st.Warn.Render(fit(r.task.Note, w)))
	}
	return out
}

// clock is an instant to the second: the time alone today, with the date otherwise.
func (c *console) clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	t = t.In(c.opt.Location)
	if y, m, d := t.Date(); y == c.now().In(c.opt.Location).Year() && m == c.now().In(c.opt.Location).Month() && d == c.now().In(c.opt.Location).Day() {
		return t.Format("15:04:05")
	}
	return t.Format("01-02 15:04:05")
}

// relative is how far t lies from now: "3m00s ago" for the past, "in 3m00s" for the future.
func relative(t, now time.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case t.After(now):
		return "in " + format.Age(t.Sub(now))
	}
	return format.Age(now.Sub(t)) + " ago"
}
