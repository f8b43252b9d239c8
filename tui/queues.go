package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// queues shows the delay and list queues and the job libraries' queues; enter lists the
// selected queue's tasks.
type queues struct{ drillView }

func newQueues(c *common) *queues { return &queues{drillView{listView: listView{c: c}}} }

// queueRows counts the rows the selection runs over.
func queueRows(s *scanner.Snapshot) int {
	n := len(s.DelayQueues) + len(s.ListQueues)
	for _, e := range s.JobQueues {
		n += len(e.Queues)
		if e.Shared != nil && e.Shared.HasCounts() {
			n++
		}
	}
	return n
}

func (v *queues) key(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if l := v.d.top(); l != nil {
		return l.key(msg)
	}
	s := v.c.status.Snapshot
	if s == nil {
		return false, nil
	}
	if key.Matches(msg, v.c.keys.Enter) {
		ref, title, why := queueRefAt(s, v.filter, v.sel)
		if why != "" {
			v.c.flash(why)
			return true, nil
		}
		return true, v.d.push(newTaskLevel(v.c, ref, title))
	}
	return v.move(msg, queueRows(s))
}

func (v *queues) render(w, h int) string {
	if l := v.d.top(); l != nil {
		return l.render(w, h)
	}
	s := v.c.status.Snapshot
	if s == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep to complete…")
	}
	if queueRows(s) == 0 && len(s.JobQueues) == 0 {
		return newPlaceholder(v.c, queuesText).render(w, h)
	}
	row := 0 // the selection runs over the shown rows: delay queues, list queues, job queues
	var lines, notes []string
	if len(s.DelayQueues) > 0 {
		l, n := v.delayQueues(s.DelayQueues, w, h, &row)
		lines, notes = append(lines, l...), append(notes, n...)
	}
	if len(s.ListQueues) > 0 {
		lines = append(lines, v.listQueues(s.ListQueues, w, &row)...)
	}
	for _, e := range s.JobQueues {
		l, n := v.jobQueues(e, w, &row)
		lines, notes = append(lines, l...), append(notes, n...)
	}
	v.sel = min(v.sel, max(row-1, 0))
	st := v.c.styles
	for _, n := range notes {
		lines = append(lines, st.Warn.Render(fit(n, w)))
	}
	lines = append(lines, "", st.Muted.Render(fit("enter lists the selected queue's tasks · lag: how long the oldest due task has waited; in flight: claimed, not yet acknowledged; "+
		"? could not be read (see the note); — not kept by the library", w)))
	return strings.Join(lines, "\n")
}

// delayQueues renders the delay queues' table and sparklines, and the notes of those whose
// numbers are missing or suspect.
func (v *queues) delayQueues(qs []scanner.DelayQueue, w, h int, row *int) ([]string, []string) {
	// Every row names its key: a pattern's queues share the entry's name. On a narrow terminal the
	// schedule gives way first (the sparklines below keep the depth and lag).
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "DELAY QUEUE", flex: true}, {title: "KEY", flex: true}, {title: "DEPTH", right: true}, {title: "DUE", right: true},
		{title: "IN FLIGHT", right: true}, {title: "LAG", right: true}, {title: "NEXT IN", right: true}, {title: "UNIT", right: true},
		{title: "≤1M", right: true, optional: true}, {title: "≤10M", right: true, optional: true},
		{title: "≤1H", right: true, optional: true}, {title: "LATER", right: true, optional: true},
	}}
	var shown []scanner.DelayQueue
	var notes []string
	u := format.Unknown
	for _, q := range qs {
		key := keyOrPattern(q.Key, q.Pattern)
		if !v.shows(t, row, q.Name, key) {
			continue
		}
		switch {
		case q.Error != "":
			t.rows = append(t.rows, []string{q.Name, key, "error: " + q.Error})
			continue
		case q.Missing:
			t.rows = append(t.rows, []string{q.Name, key, "missing", "", "", "", "", q.Unit})
			continue
		}
		shown = append(shown, q)
		if q.Warning != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", q.Name, key, q.Warning))
		}
		sched := func(b string) string {
			if q.Due == nil {
				return u
			}
			return format.Commas(q.Schedule[b])
		}
		t.rows = append(t.rows, []string{q.Name, key, format.Commas(q.Depth), format.CommasOf(q.Due, u), format.Commas(q.InFlight),
			format.MillisOf(q.OldestDueAgeMS, u), format.MillisOf(q.NextDueInMS, u), q.Unit,
			sched("1m"), sched("10m"), sched("1h"), sched("later")})
	}
	lines := t.render(w)
	sw := max(w-30, 8)
	for _, q := range shown[:min(len(shown), max((h-8)/2, 1))] {
		lines = append(lines, fit(fmt.Sprintf("  %-18s depth %s", truncate(q.Key, 18), v.c.spark("dq.depth."+q.Key, sw)), w),
			fit(fmt.Sprintf("  %-18s lag   %s", "", v.c.spark("dq.lag."+q.Key, sw)), w))
	}
	return append(lines, ""), notes
}

func (v *queues) listQueues(qs []scanner.ListQueue, w int, row *int) []string {
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "LIST QUEUE", flex: true}, {title: "KEY", flex: true}, {title: "LENGTH", right: true},
		{title: "PROCESSING", right: true}, {title: "LENGTH OVER TIME", optional: true},
	}}
	for _, q := range qs {
		key := keyOrPattern(q.Key, q.Pattern)
		if !v.shows(t, row, q.Name, key) {
			continue
		}
		switch {
		case q.Missing:
			t.rows = append(t.rows, []string{q.Name, key, "missing", "", q.Error})
		case q.Error != "":
			t.rows = append(t.rows, []string{q.Name, key, "error: " + q.Error})
		default:
			t.rows = append(t.rows, []string{q.Name, key, format.Commas(q.Length), format.Commas(q.Processing), v.c.spark("lq.length."+q.Key, 30)})
		}
	}
	return append(t.render(w), "")
}

// jobQueues renders one job library's queues as the library counts them, with its warnings, and
// its notes when the selection is on one of its rows.
func (v *queues) jobQueues(e scanner.JobQueues, w int, row *int) ([]string, []string) {
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: strings.ToUpper(e.Layout) + " " + e.Name, flex: true}, {title: "WAITING", right: true}, {title: "ACTIVE", right: true},
		{title: "SCHEDULED", right: true}, {title: "DUE", right: true}, {title: "LAG", right: true}, {title: "NEXT IN", right: true},
		{title: "RETRY", right: true}, {title: "DEAD", right: true}, {title: "DONE", right: true, optional: true},
	}}
	rows := e.Queues
	if e.Shared != nil && e.Shared.HasCounts() {
		shared := *e.Shared
		shared.Queue = "(all queues)"
		rows = append(append([]scanner.JobQueue(nil), rows...), shared)
	}
	var notes []string
	first := *row
	for _, q := range rows {
		if !v.shows(t, row, e.Name, q.Queue) {
			continue
		}
		if q.Error != "" {
			t.rows = append(t.rows, []string{q.Queue, "error: " + q.Error})
			continue
		}
		if q.Warning != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", e.Name, q.Queue, q.Warning))
		}
		t.rows = append(t.rows, jobCells(q))
	}
	if len(rows) == 0 {
		t.rows = append(t.rows, []string{"(no queues found)"})
	}
	if e.QueuesFound > int64(len(e.Queues)) {
		notes = append(notes, fmt.Sprintf("%s: %s more queues not shown", e.Name, format.Commas(e.QueuesFound-int64(len(e.Queues)))))
	}
	if v.sel >= first && v.sel < *row { // the library's notes are long: the selected entry's only
		for _, n := range e.Notes {
			notes = append(notes, e.Name+": "+n)
		}
	}
	if e.Error != "" {
		notes = append(notes, e.Name+": error: "+e.Error)
	}
	return append(t.render(w), ""), notes
}

// jobCells are a job queue's cells: — for what the library does not keep, ? for what could not
// be read.
func jobCells(q scanner.JobQueue) []string {
	nk, timed := format.NotKept, format.Unknown
	if q.Scheduled == nil {
		timed = nk
	}
	name := q.Queue
	if q.Paused {
		name += " (paused)"
	}
	return []string{name, format.CommasOf(q.Waiting, nk), format.CommasOf(q.Active, nk), format.CommasOf(q.Scheduled, nk),
		format.CommasOf(q.Due, timed), format.MillisOf(q.OldestDueAgeMS, timed), format.MillisOf(q.NextDueInMS, timed),
		format.CommasOf(q.Retry, nk), format.CommasOf(q.Dead, nk), format.CommasOf(q.Completed, nk)}
}

// shows reports whether a row of name and key passes the filter; one that does takes the next
// row number, and is t's selected row when the selection is on it.
func (v *queues) shows(t *table, row *int, name, key string) bool {
	if !matches(v.filter, name, key) {
		return false
	}
	if *row == v.sel {
		t.selected = len(t.rows)
	}
	*row++
	return true
}

// keyOrPattern is a queue's key, or its entry's pattern for the row of a pattern that found no key.
func keyOrPattern(key, pattern string) string {
	if key == "" {
		return pattern
	}
	return key
}

// queueRefAt is the ref the selection's row carries, in the order render lists them, with its
// title; why says why a row opens nothing (a pattern that found no key, a queue not read).
func queueRefAt(s *scanner.Snapshot, filter string, sel int) (ref scanner.QueueRef, title, why string) {
	row := 0
	for _, q := range s.DelayQueues {
		if matches(filter, q.Name, keyOrPattern(q.Key, q.Pattern)) {
			if row == sel {
				return q.Ref, q.Name + " " + q.Key, rowWhy(q.Missing, q.Error)
			}
			row++
		}
	}
	for _, q := range s.ListQueues {
		if matches(filter, q.Name, keyOrPattern(q.Key, q.Pattern)) {
			if row == sel {
				return q.Ref, q.Name + " " + q.Key, rowWhy(q.Missing, q.Error)
			}
			row++
		}
	}
	for _, e := range s.JobQueues {
		rows := e.Queues
		if e.Shared != nil && e.Shared.HasCounts() {
			rows = append(append([]scanner.JobQueue(nil), rows...), scanner.JobQueue{Queue: "(all queues)", Ref: e.Shared.Ref})
		}
		for _, q := range rows {
			if matches(filter, e.Name, q.Queue) {
				if row == sel {
					return q.Ref, e.Name + " " + q.Queue, rowWhy(false, q.Error)
				}
				row++
			}
		}
	}
	return ref, "", "no queue selected"
}

// rowWhy says why a queue's row opens no tasks.
func rowWhy(missing bool, err string) string {
	switch {
	case missing:
		return "no key matches this queue's pattern: there are no tasks to list"
	case err != "":
		return "this queue could not be read: " + err
	}
	return ""
}
