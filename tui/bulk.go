package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The drill-down's bulk actions on a queue's section. N runs every task now (retry all, run all due
// now). X deletes every task. K archives (kills) every task, where the library has it. z undoes the
// last bulk action on this target. Each asks for a dry run first: its tasks, bytes and the time the
// budget makes it take, shown in the confirmation. With a filter on, it acts only on the section's
// tasks the filter keeps, and the confirmation says so. Those are all of them, read page by page,
// not just the page on screen. Then it runs off the Update loop, its progress in the footer. ctrl+c
// or esc stops it between chunks.

// BulkActions are the drill-down's bulk writes (nil when writes are off). Each runs in a tea.Cmd.
type BulkActions interface {
	// BulkCheck says whether ref's queue does a to every task of sec (nil), or why not. It reads
	// nothing.
	BulkCheck(ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction) error
	// PlanBulk is the dry run: the tasks, their bytes and the estimated time.
	PlanBulk(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction) (snapshot.BulkPlan, error)
	// Bulk does it, chunk by chunk, recording what undoes each before it runs; progress is
	// called after each chunk; when ctx ends it stops between chunks. It says what it did.
	Bulk(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction, plan snapshot.BulkPlan, progress func(snapshot.BulkResult)) (string, error)
	// UndoLast undoes the newest bulk action on this target not undone yet, and says what it
	// restored; progress is called after each chunk (Done of Planned undo records); when ctx
	// ends it stops between chunks, and undoing again finishes it.
	UndoLast(ctx context.Context, progress func(snapshot.BulkResult)) (string, error)
}

// FilteredBulk is a BulkActions that also acts on a filter's selection. The dry run counts the
// section's tasks match keeps: the whole section, not the page, read at the budget. It tells its
// progress after each page: Done tasks read of Planned. The run of that plan acts on those tasks
// alone.
type FilteredBulk interface {
	PlanBulkMatching(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction, match func(snapshot.Task) bool, progress func(snapshot.BulkResult)) (snapshot.BulkPlan, error)
}

// bulkRun is a bulk action under way: its progress, written by the run and read by the footer's
// tick.
type bulkRun struct {
	title  string
	cancel context.CancelFunc
	mu     sync.Mutex
	res    snapshot.BulkResult
}

func (b *bulkRun) set(r snapshot.BulkResult) { b.mu.Lock(); b.res = r; b.mu.Unlock() }
func (b *bulkRun) get() snapshot.BulkResult  { b.mu.Lock(); defer b.mu.Unlock(); return b.res }

// bulkPlanMsg is a dry run's answer; bulkTickMsg redraws the progress; bulkDoneMsg ends a run.
type (
	bulkPlanMsg struct {
		title string
		ref   snapshot.QueueRef
		sec   snapshot.TaskSection
		a     snapshot.TaskAction
		plan  snapshot.BulkPlan
		err   error
		after level
		// filter is the tasks view's filter the plan counted the matches of ("" none)
		filter string
		// run is the filtered dry run under way that answered (nil for a plain dry run)
		run *bulkRun
	}
	bulkTickMsg struct{ run *bulkRun }
	bulkDoneMsg struct {
		run   *bulkRun
		text  string
		err   error
		after level
	}
)

// bulkTitle names a bulk action on a section.
func bulkTitle(a snapshot.TaskAction, sec snapshot.TaskSection) string {
	switch {
	case a == snapshot.ActionDelete:
		return "Delete every " + sectionName(sec) + " task"
	case a == snapshot.ActionArchive:
		return "Archive every " + sectionName(sec) + " task"
	case sec == snapshot.SectionRetry || sec == snapshot.SectionDead:
		return "Retry every " + sectionName(sec) + " task"
	}
	return "Run every " + sectionName(sec) + " task now"
}

// bulk asks for the dry run of a on every task of the section on screen.
func (l *taskLevel) bulk(a snapshot.TaskAction) tea.Cmd {
	c, sec, ref := l.c, l.section(), l.ref
	title := bulkTitle(a, sec)
	if a == snapshot.ActionArchive && l.layout() == "sidekiq" {
		title = "Kill every " + sectionName(sec) + " task" // Sidekiq's word for it
	}
	switch {
	case c.opt.Bulk == nil:
		c.flash(title + " is off: " + readOnlyWhy(c))
		return nil
	case c.bulk != nil:
		c.flash("a bulk action is under way: ctrl+c stops it")
		return nil
	}
	if err := c.opt.Bulk.BulkCheck(ref, sec, a); err != nil {
		c.flash(oneLine(err.Error()))
		return nil
	}
	bulk, ctx, filter := c.opt.Bulk, c.ctx, l.filter
	var match func(snapshot.Task) bool
	if filter != "" {
		fb, ok := bulk.(FilteredBulk)
		if !ok {
			c.flash(title + ": not on a filter's selection here: clear the filter (esc) to act on the whole section")
			return nil
		}
		title += " matching " + strconv.Quote(filter)
		match = func(t snapshot.Task) bool { return matches(filter, format.Escape(t.ID), preview(t.Payload)) }
		// The whole section is read at the budget, which can take minutes: it runs as a bulk
		// action does, its progress in the footer, ctrl+c or esc ending it.
		ctx, cancel := context.WithCancel(ctx)
		run := &bulkRun{title: title + ": dry run, reading the whole section", cancel: cancel}
		c.bulk = run
		c.flash(run.title + "…")
		count := func() tea.Msg {
			defer cancel()
			plan, err := fb.PlanBulkMatching(ctx, ref, sec, a, match, run.set)
			return bulkPlanMsg{title: title, ref: ref, sec: sec, a: a, plan: plan, err: err, after: l, filter: filter, run: run}
		}
		return tea.Batch(count, bulkTick(run))
	}
	c.flash(title + ": dry run…")
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		plan, err := bulk.PlanBulk(ctx, ref, sec, a)
		return bulkPlanMsg{title: title, ref: ref, sec: sec, a: a, plan: plan, err: err, after: l}
	}
}

// undo asks to undo the newest bulk action on this target not undone yet; confirmed, it runs as
// a bulk action does: off the Update loop, its progress in the footer, ctrl+c stopping it between
// chunks.
func (l *taskLevel) undo() tea.Cmd {
	c := l.c
	switch {
	case c.opt.Bulk == nil:
		c.flash("undo is off: " + readOnlyWhy(c))
		return nil
	case c.bulk != nil:
		c.flash("a bulk action is under way: ctrl+c stops it, then z undoes what it did")
		return nil
	}
	bulk, title := c.opt.Bulk, "Undo the last bulk action"
	kc := &keyConfirm{title: title, after: l, lines: []string{
		"The newest bulk action on this target not undone yet, as the journal recorded it before each chunk ran, is put back:",
		"each deleted task returns to its set with its score, or to its list where the workers take it next; each moved job leaves its queue and returns, unless a worker has taken it since.",
		"ctrl+c stops between chunks; z again finishes it. Once it is undone, z takes the action before it.",
	}}
	kc.start = func() tea.Cmd {
		return c.startRun(title, 0, l, func(ctx context.Context, progress func(snapshot.BulkResult)) (string, error) {
			return bulk.UndoLast(ctx, progress)
		})
	}
	if c.opt.Mode != "embedded" {
		kc.confirm = c.opt.Target
		if c.opt.Name != "" {
			kc.confirm = c.opt.Name
		}
	}
	return func() tea.Msg { return askMsg{kc} }
}

// layout is the job library of the queue on screen, as its Snapshot row names it ("" when none).
func (l *taskLevel) layout() string {
	if s := l.c.status.Snapshot; s != nil && l.ref.Kind == snapshot.QueueJob {
		for _, e := range s.JobQueues {
			if e.Name == l.ref.Name {
				return e.Layout
			}
		}
	}
	return ""
}

func readOnlyWhy(c *console) string {
	if c.opt.ReadOnlyWhy != "" {
		return c.opt.ReadOnlyWhy
	}
	return "this console writes nothing"
}

// handleBulkPlan shows the dry run's figures in the confirmation.
func (m *Model) handleBulkPlan(msg bulkPlanMsg) tea.Cmd {
	if msg.run != nil {
		if m.c.bulk != msg.run {
			return nil // stopped, or another run since
		}
		m.c.bulk = nil
		if errors.Is(msg.err, context.Canceled) {
			m.flashf(msg.title + ": dry run stopped, nothing written")
			return nil
		}
	}
	if msg.err != nil {
		m.flashf(msg.title + ": dry run failed: " + oneLine(msg.err.Error()))
		return nil
	}
	p := msg.plan
	if p.Tasks == 0 {
		m.flashf(msg.title + ": no task to do it to, nothing to do")
		return nil
	}
	bytes := "unknown (" + p.BytesNote + ")"
	if p.Bytes >= 0 {
		bytes = format.BytesIEC(p.Bytes) + " (" + p.BytesNote + ")"
	}
	est := "no budget: as fast as Redis answers"
	switch {
	case p.Estimate >= time.Second:
		est = "about " + format.Age(p.Estimate) + " at the sweep's keys/s budget"
	case p.Estimate >= 0:
		est = "under a second at the sweep's keys/s budget"
	}
	lines := []string{
		fmt.Sprintf("%s, %s; %s.", format.Count(p.Tasks, "task", "tasks"), bytes, est),
		"Done in chunks of one script each, as the library's own API does each task; a task gone meanwhile is skipped.",
		"What undoes each chunk is written to the journal before it runs: z (or hourglass undo) puts it back. ctrl+c stops between chunks.",
	}
	if p.Note != "" {
		lines = append(lines, p.Note)
	}
	if msg.filter != "" {
		lines = append([]string{fmt.Sprintf("The filter %q keeps %s of the section's %s tasks (the whole section read, not just this page): only those are acted on.",
			msg.filter, format.Commas(p.Tasks), format.Commas(p.Scanned))}, lines...)
	}
	kc := &keyConfirm{title: msg.title, lines: lines, after: msg.after, start: func() tea.Cmd { return m.startBulk(msg) }}
	if m.c.opt.Mode != "embedded" {
		kc.confirm = m.c.opt.Target
		if m.c.opt.Name != "" {
			kc.confirm = m.c.opt.Name
		}
	}
	m.keyConfirm = kc
	return nil
}

// startBulk runs a confirmed bulk action off the Update loop, and ticks its progress.
func (m *Model) startBulk(msg bulkPlanMsg) tea.Cmd {
	bulk := m.c.opt.Bulk
	return m.c.startRun(msg.title, msg.plan.Tasks, msg.after, func(ctx context.Context, progress func(snapshot.BulkResult)) (string, error) {
		return bulk.Bulk(ctx, msg.ref, msg.sec, msg.a, msg.plan, progress)
	})
}

// startRun runs do (a bulk action or an undo) off the Update loop as the run under way, and
// ticks its progress; ctrl+c or esc ends its context, which stops it between chunks.
func (c *console) startRun(title string, planned int64, after level, do func(ctx context.Context, progress func(snapshot.BulkResult)) (string, error)) tea.Cmd {
	ctx, cancel := context.WithCancel(c.ctx)
	run := &bulkRun{title: title, cancel: cancel, res: snapshot.BulkResult{Planned: planned}}
	c.bulk = run
	c.flash(title + "…")
	work := func() tea.Msg {
		defer cancel()
		text, err := do(ctx, run.set)
		return bulkDoneMsg{run: run, text: text, err: err, after: after}
	}
	return tea.Batch(work, bulkTick(run))
}

func bulkTick(run *bulkRun) tea.Cmd {
	return tea.Tick(200*time.Millisecond, func(time.Time) tea.Msg { return bulkTickMsg{run} })
}

// handleBulkTick says how far the run is.
func (m *Model) handleBulkTick(msg bulkTickMsg) tea.Cmd {
	if m.c.bulk != msg.run {
		return nil
	}
	r := msg.run.get()
	if r.Planned == 0 {
		m.flashf(msg.run.title + "… · ctrl+c stops it")
		return bulkTick(msg.run)
	}
	line := fmt.Sprintf("%s: %s of %s done", msg.run.title, format.Commas(r.Done), format.Commas(r.Planned))
	if r.Gone > 0 {
		line += ", " + format.Commas(r.Gone) + " gone"
	}
	if r.Fault != "" {
		line += " · waiting out " + r.Fault
	}
	m.flashf(line + " · ctrl+c stops between chunks")
	return bulkTick(msg.run)
}

// handleBulkDone says what the run did, and reads the level again.
func (m *Model) handleBulkDone(msg bulkDoneMsg) tea.Cmd {
	if m.c.bulk == msg.run {
		m.c.bulk = nil
	}
	if msg.err != nil {
		line := msg.text + ": stopped: " + msg.err.Error()
		if msg.text == "" {
			line = msg.run.title + ": " + msg.err.Error()
		}
		m.flashf(oneLine(line))
	} else {
		m.flashf(msg.text)
	}
	if msg.after != nil {
		return msg.after.refresh()
	}
	return nil
}

// stopBulk ends the run under way between chunks.
func (m *Model) stopBulk() tea.Cmd {
	m.c.bulk.cancel()
	m.flashf(m.c.bulk.title + ": stopping after the chunk under way…")
	return nil
}
