package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// queues shows the delay and list queues and the job libraries' queues; enter lists the
// selected queue's tasks.
type queues struct {
	drillView
	rows list[queueRow]
}

// queueRow is one row the selection runs over, in the order the tables show them: delay queues,
// list queues, then each job library's queues (and its shared counts).
type queueRow struct {
	ref   snapshot.QueueRef
	title string
	why   string // why the row opens nothing (a pattern that found no key, a queue not read)
	entry int    // the job library's place in the Snapshot; -1 for a delay or list queue
	dq    *snapshot.DelayQueue
	lq    *snapshot.ListQueue
	jq    *snapshot.JobQueue
}

func newQueues(c *console) *queues {
	v := &queues{rows: list[queueRow]{id: func(r queueRow) string { return r.title }}}
	v.drillView = drillView{c: c, build: v.build, reset: v.rows.reset}
	return v
}

// build sets the rows the filter keeps.
func (v *queues) build() {
	s := v.c.snapshot()
	if s == nil {
		v.rows.set(nil)
		return
	}
	var rows []queueRow
	for i, q := range s.DelayQueues {
		if matches(v.filter, q.Name, cells.KeyOrPattern(q.Key, q.Pattern)) {
			rows = append(rows, queueRow{ref: q.Ref,
				title: q.Name + " " + q.Key, why: rowWhy(q.Missing, q.Error), entry: -1, dq: &s.DelayQueues[i]})
		}
	}
	for i, q := range s.ListQueues {
		if matches(v.filter, q.Name, cells.KeyOrPattern(q.Key, q.Pattern)) {
			rows = append(rows, queueRow{ref: q.Ref,
				title: q.Name + " " + q.Key, why: rowWhy(q.Missing, q.Error), entry: -1, lq: &s.ListQueues[i]})
		}
	}
	for ei, e := range s.JobQueues {
		for _, q := range jobRows(e) {
			if matches(v.filter, e.Name, q.Queue) {
				rows = append(rows, queueRow{ref: q.Ref,
					title: e.Name + " " + q.Queue, why: rowWhy(false, q.Error), entry: ei, jq: &q})
			}
		}
	}
	v.rows.set(rows)
}

// jobRows are a job library's queues, and its shared counts as a last row when it keeps any.
func jobRows(e snapshot.JobQueues) []snapshot.JobQueue {
	rows := e.Queues
	if e.Shared != nil && e.Shared.HasCounts() {
		shared := *e.Shared
		shared.Queue = "(all queues)"
		rows = append(append([]snapshot.JobQueue(nil), rows...), shared)
	}
	return rows
}

func (v *queues) bindings() []binding {
	return v.levelBindings(func() []binding {
		return append(moveBindings(v.c.keys, &v.rows, nil), binding{Binding: v.c.keys.Enter, short: true, do: v.open},
			binding{Binding: v.c.keys.Workers, do: func() tea.Cmd { return v.d.push(newWorkersLevel(v.c)) }})
	})
}

// soFarQueues says what the Queues view holds while the first sweep is under way.
const soFarQueues = "first sweep under way: each queue is read live every refresh; a pattern's queues are those found so far"

// open lists the selected queue's tasks, or says why its row has none.
func (v *queues) open() tea.Cmd {
	r, ok := v.rows.selected()
	switch {
	case !ok:
		v.c.flash("no queue selected")
		return nil
	case r.why != "":
		v.c.flash(r.why)
		return nil
	}
	tl := newTaskLevel(v.c, r.ref, r.title)
	tl.d = &v.d
	return v.d.push(tl)
}

func (v *queues) render(w, h int) string {
	if l := v.d.top(); l != nil {
		return l.render(w, h)
	}
	s := v.c.snapshot()
	if s == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep's first page…")
	}
	if len(s.DelayQueues)+len(s.ListQueues) == 0 && len(s.JobQueues) == 0 {
		return newPlaceholder(v.c, queuesText).render(w, h)
	}
	var lines, notes []string
	if v.c.soFar() {
		lines = append(lines, v.c.styles.Muted.Render(fit(soFarQueues, w)))
	}
	if len(s.DelayQueues) > 0 {
		l, n := v.delayQueues(w, h)
		lines, notes = append(lines, l...), append(notes, n...)
	}
	if len(s.ListQueues) > 0 {
		l, n := v.listQueues(w)
		lines, notes = append(lines, l...), append(notes, n...)
	}
	for ei, e := range s.JobQueues {
		l, n := v.jobQueues(ei, e, w)
		lines, notes = append(lines, l...), append(notes, n...)
	}
	st := v.c.styles
	for _, n := range notes {
		lines = append(lines, st.Warn.Render(fit(n, w)))
	}
	lines = append(lines, "", st.Muted.Render(fit("enter lists the selected queue's tasks · W the job libraries' workers · latency: how long the oldest waiting task has waited; "+
		"lag: how long the oldest due task has waited past its due time; in flight: claimed, not yet acknowledged; "+
		"run/s: jobs run a second (failed or not) by the library's own count, over the last minute; days: UTC, oldest first; "+
		"measuring: a rate still being measured; ? could not be read (see the note); — not kept by the library", w)))
	return strings.Join(lines, "\n")
}

// delayQueues renders the delay queues' table and sparklines, and the notes of those whose
// numbers are missing or suspect.
func (v *queues) delayQueues(w, h int) ([]string, []string) {
	// Every row names its key: a pattern's queues share the entry's name. On a narrow terminal the
	// schedule gives way first (the sparklines below keep the depth and lag).
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "DELAY QUEUE", flex: true}, {title: "KEY", flex: true}, {title: "DEPTH", right: true}, {title: "DUE", right: true},
		{title: "IN FLIGHT", right: true}, {title: "LAG", right: true}, {title: "NEXT IN", right: true}, {title: "UNIT", right: true},
		{title: "≤1M", right: true, optional: true}, {title: "≤10M", right: true, optional: true},
		{title: "≤1H", right: true, optional: true}, {title: "LATER", right: true, optional: true},
	}}
	var shown []snapshot.DelayQueue
	var notes []string
	u := format.Unknown
	for i, r := range v.rows.rows {
		if r.dq == nil {
			continue
		}
		q := *r.dq
		key := cells.KeyOrPattern(q.Key, q.Pattern)
		v.mark(t, i)
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
		t.rows = append(t.rows, []string{q.Name, key, format.Commas(q.Depth), format.CommasOf(q.Due, u), format.CommasOf(q.InFlight, format.NotKept),
			format.MillisOf(q.OldestDueAgeMS, u), format.MillisOf(q.NextDueInMS, u), q.Unit,
			cells.Schedule(q, "1m"), cells.Schedule(q, "10m"), cells.Schedule(q, "1h"), cells.Schedule(q, "later")})
	}
	lines := t.render(w)
	sw := max(w-30, 8)
	for _, q := range shown[:min(len(shown), max((h-8)/2, 1))] {
		lines = append(lines, fit(fmt.Sprintf("  %-18s depth %s", truncate(q.Key, 18), v.c.spark("dq.depth."+q.Key, sw)), w),
			fit(fmt.Sprintf("  %-18s lag   %s", "", v.c.spark("dq.lag."+q.Key, sw)), w))
	}
	return append(lines, ""), notes
}

// listQueues renders the list queues' table, and why the selected one's latency is unknown.
func (v *queues) listQueues(w int) ([]string, []string) {
	var notes []string
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "LIST QUEUE", flex: true}, {title: "KEY", flex: true}, {title: "LENGTH", right: true}, {title: "LATENCY", right: true},
		{title: "PROCESSING", right: true}, {title: "LENGTH OVER TIME", optional: true},
	}}
	for i, r := range v.rows.rows {
		if r.lq == nil {
			continue
		}
		q := *r.lq
		key := cells.KeyOrPattern(q.Key, q.Pattern)
		v.mark(t, i)
		switch {
		case q.Missing:
			t.rows = append(t.rows, []string{q.Name, key, "missing", "", q.Error})
		case q.Error != "":
			t.rows = append(t.rows, []string{q.Name, key, "error: " + q.Error})
		default:
			t.rows = append(t.rows, []string{q.Name, key, format.Commas(q.Length), cells.Latency(q.LatencyMS, q.LatencyNote),
				format.CommasOf(q.Processing, format.NotKept), v.c.spark("lq.length."+q.Key, 30)})
			if q.LatencyNote != "" && i == v.rows.sel {
				notes = append(notes, fmt.Sprintf("%s %s: latency unknown: %s", q.Name, key, q.LatencyNote))
			}
		}
	}
	return append(t.render(w), ""), notes
}

// jobQueues renders one job library's queues as the library counts them, with its warnings, and
// its notes when the selection is on one of its rows.
func (v *queues) jobQueues(ei int, e snapshot.JobQueues, w int) ([]string, []string) {
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: strings.ToUpper(e.Layout) + " " + e.Name, flex: true}, {title: "WAITING", right: true}, {title: "LATENCY", right: true}, {title: "ACTIVE", right: true},
		{title: "SCHEDULED", right: true}, {title: "DUE", right: true}, {title: "LAG", right: true}, {title: "NEXT IN", right: true},
		{title: "RETRY", right: true}, {title: "DEAD", right: true}, {title: "DONE", right: true, optional: true},
	}}
	var notes []string
	selected := false
	for i, r := range v.rows.rows {
		if r.jq == nil || r.entry != ei {
			continue
		}
		q := *r.jq
		v.mark(t, i)
		selected = selected || i == v.rows.sel
		if q.Error != "" {
			t.rows = append(t.rows, []string{q.Queue, "error: " + q.Error})
			continue
		}
		if q.Warning != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", e.Name, q.Queue, q.Warning))
		}
		if q.LatencyNote != "" && i == v.rows.sel {
			notes = append(notes, fmt.Sprintf("%s %s: latency unknown: %s", e.Name, q.Queue, q.LatencyNote))
		}
		t.rows = append(t.rows, cells.JobQueue(q))
	}
	if len(jobRows(e)) == 0 {
		t.rows = append(t.rows, []string{"(no queues found)"})
	}
	if e.QueuesFound > int64(len(e.Queues)) {
		notes = append(notes, fmt.Sprintf("%s: %s not shown", e.Name, format.Count(e.QueuesFound-int64(len(e.Queues)), "more queue", "more queues")))
	}
	if selected { // the library's notes are long: the selected entry's only
		for _, n := range e.Notes {
			notes = append(notes, e.Name+": "+n)
		}
	}
	if e.Error != "" {
		notes = append(notes, e.Name+": error: "+e.Error)
	}
	lines := t.render(w)
	tl, tn := v.throughput(e, selected, w)
	return append(append(lines, tl...), ""), append(notes, tn...)
}

// maxThroughputRows bounds the throughput rows shown of one library counting per queue: the
// busiest, by processed a second (else in total); the report lists them all.
const maxThroughputRows = 5

// throughput renders what the library counts of the jobs it ran: a row a queue (the busiest
// few) or one for all, and, when the entry is selected, how it counts and why a rate is unknown.
func (v *queues) throughput(e snapshot.JobQueues, selected bool, w int) ([]string, []string) {
	var notes []string
	if selected && e.ThroughputNote != "" {
		notes = append(notes, e.Name+": "+e.ThroughputNote)
	}
	if len(e.Throughput) == 0 {
		if e.ThroughputNote != "" && !selected {
			return []string{v.c.styles.Muted.Render(fit("  jobs run: not in Redis (select the entry for why)", w))}, notes
		}
		return nil, notes
	}
	counted, silent := splitSilent(e.Throughput)
	var lines []string
	if len(silent) > 0 { // queues whose library keeps no count: one line, not rows of "—"
		lines = append(lines, v.c.styles.Muted.Render(fit(fmt.Sprintf("  jobs run not kept for %s: %s",
			strings.Join(silent, ", "), e.Throughput[slices.IndexFunc(e.Throughput, isSilent)].Note), w)))
	}
	if len(counted) == 0 {
		return lines, notes
	}
	rows := busiest(counted, maxThroughputRows)
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "JOBS RUN " + e.Name, flex: true}, {title: "RUN/S", right: true}, {title: "FAILED/S", right: true}, {title: "TODAY", right: true},
		{title: "FAILED", right: true}, {title: "TOTAL", right: true, optional: true}, {title: "FAILED TOTAL", right: true, optional: true},
		{title: "DAYS (UTC)", optional: true},
	}}
	for _, r := range rows {
		t.rows = append(t.rows, cells.Throughput(r))
		if selected && r.RateNote != "" && (r.ProcessedPerSec == nil || r.FailedPerSec == nil) {
			state := "rate unknown"
			if r.RateMeasuring != nil { // the note says how far: "measuring: 4s of reads so far; …"
				state = "rate"
			}
			notes = append(notes, fmt.Sprintf("%s %s: %s: %s", e.Name, cells.Throughput(r)[0], state, r.RateNote))
		}
		if selected && r.Note != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", e.Name, cells.Throughput(r)[0], r.Note))
		}
	}
	lines = append(t.render(w), lines...)
	if more := len(counted) - len(rows); more > 0 {
		lines = append(lines, v.c.styles.Muted.Render(fit(fmt.Sprintf("  %s counts in the report (hourglass snapshot)", format.Count(more, "more queue's", "more queues'")), w)))
	}
	return lines, notes
}

// isSilent reports whether a row is of a queue whose library keeps no count of its jobs run.
func isSilent(r snapshot.JobThroughput) bool {
	return r.ProcessedTotal == nil && r.FailedTotal == nil && r.Note != ""
}

// splitSilent parts rows into those with a count and the names of the queues with none.
func splitSilent(rows []snapshot.JobThroughput) (counted []snapshot.JobThroughput, silent []string) {
	for _, r := range rows {
		if isSilent(r) {
			silent = append(silent, r.Queue)
			continue
		}
		counted = append(counted, r)
	}
	return counted, silent
}

// busiest is at most n of rows, the busiest first: by processed a second where known, else by
// the running total.
func busiest(rows []snapshot.JobThroughput, n int) []snapshot.JobThroughput {
	out := slices.Clone(rows)
	key := func(r snapshot.JobThroughput) (float64, int64) {
		rate, total := -1.0, int64(-1)
		if r.ProcessedPerSec != nil {
			rate = *r.ProcessedPerSec
		}
		if r.ProcessedTotal != nil {
			total = *r.ProcessedTotal
		}
		return rate, total
	}
	slices.SortStableFunc(out, func(a, b snapshot.JobThroughput) int {
		ra, ta := key(a)
		rb, tb := key(b)
		if c := cmp.Compare(rb, ra); c != 0 {
			return c
		}
		return cmp.Compare(tb, ta)
	})
	return out[:min(n, len(out))]
}

// mark makes the next row of t its selected one when row i of the list is the selection.
func (v *queues) mark(t *table, i int) {
	if i == v.rows.sel {
		t.selected = len(t.rows)
	}
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
