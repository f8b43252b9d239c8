package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// fakeBulk answers the dry run with fixed figures; its Bulk does one chunk, reports it, and
// waits for its context to end (a long action the operator stops).
type fakeBulk struct {
	mu      sync.Mutex
	started chan struct{}
	undone  int
	matched func(snapshot.Task) bool
	// slowCount: the filtered dry run waits for its context to end
	slowCount bool
}

func (f *fakeBulk) BulkCheck(ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction) error {
	if sec == snapshot.SectionInFlight {
		return fmt.Errorf("no bulk action on in flight tasks here")
	}
	return nil
}

func (f *fakeBulk) PlanBulk(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction) (snapshot.BulkPlan, error) {
	return snapshot.BulkPlan{Tasks: 60_000, Bytes: 3 << 20, BytesNote: "MEMORY USAGE, sampled", KeysEach: 1, Estimate: 12 * time.Second}, nil
}

func (f *fakeBulk) Bulk(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction, plan snapshot.BulkPlan, progress func(snapshot.BulkResult)) (string, error) {
	progress(snapshot.BulkResult{Planned: plan.Tasks, Done: 100, Chunks: 1})
	close(f.started)
	<-ctx.Done()
	return "100 of 60000 deleted; stopped", nil
}

func (f *fakeBulk) UndoLast(ctx context.Context, progress func(snapshot.BulkResult)) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.undone++
	progress(snapshot.BulkResult{Planned: 200, Done: 100})
	return "undid delete of 100 due tasks: 100 tasks restored", nil
}

// typeName types the target's name and enter, and returns what enter returned.
func typeName(m *Model) tea.Cmd {
	for _, r := range "10.0.0.5:6379" {
		drive(m, string(r))
	}
	_, cmd := m.Update(drillKey("enter"))
	return cmd
}

// TestBulkDeleteShowsItsDryRunAndStopsOnCtrlC: X shows the dry run's tasks, bytes and time in a
// typed confirmation; confirmed, the action runs with its progress in the footer, and ctrl+c
// stops it (between chunks) instead of quitting; z undoes the last action after its own
// confirmation. A read-only console refuses X and z with the reason.
func TestBulkDeleteShowsItsDryRunAndStopsOnCtrlC(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter", "X")
	if m.keyConfirm != nil || !strings.Contains(screen(m), "Delete every due task is off: read-only") {
		t.Fatalf("a read-only console asked to delete all:\n%s", screen(m))
	}
	drive(m, "z")
	if !strings.Contains(screen(m), "undo is off: read-only") {
		t.Fatalf("a read-only console offered undo:\n%s", screen(m))
	}

	bulk := &fakeBulk{started: make(chan struct{})}
	m, _ = drillModel(t, &fakeKeyActions{}, 120, 36)
	m.c.opt.Bulk = bulk
	drive(m, "4", "enter")
	_, cmd := m.Update(drillKey("X"))
	_, cmd = m.Update(cmd()) // the dry run's answer opens the confirmation
	if cmd != nil || m.keyConfirm == nil {
		t.Fatal("X did not ask")
	}
	for _, want := range []string{"Delete every due task", "60,000 tasks, 3.0 MiB (MEMORY USAGE, sampled)", "about 12s at the sweep's keys/s budget", "Type the target's name"} {
		if !strings.Contains(screen(m), want) {
			t.Fatalf("the confirmation does not say %q:\n%s", want, screen(m))
		}
	}
	batch, ok := typeName(m)().(tea.BatchMsg)
	if !ok || m.c.bulk == nil {
		t.Fatal("the confirmed action did not start")
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	<-bulk.started
	m.Update(bulkTickMsg{m.c.bulk})
	if !strings.Contains(screen(m), "100 of 60,000 done") {
		t.Fatalf("no progress line:\n%s", screen(m))
	}
	if _, cmd := m.Update(drillKey("ctrl+c")); cmd != nil {
		t.Fatal("ctrl+c during a bulk action quit instead of stopping it")
	}
	select {
	case msg := <-done:
		m.Update(msg)
	case <-time.After(10 * time.Second):
		t.Fatal("ctrl+c did not stop the bulk action")
	}
	if m.c.bulk != nil || !strings.Contains(screen(m), "stopped") {
		t.Fatalf("the stop is not said:\n%s", screen(m))
	}

	drive(m, "z")
	if m.keyConfirm == nil {
		t.Fatal("z did not ask")
	}
	batch, ok = typeName(m)().(tea.BatchMsg)
	if !ok || m.c.bulk == nil {
		t.Fatal("the confirmed undo did not start as a run")
	}
	if drive(m, "z"); !strings.Contains(screen(m), "a bulk action is under way") {
		t.Fatalf("z during an undo did not refuse:\n%s", screen(m))
	}
	undone := batch[0]()
	m.Update(bulkTickMsg{m.c.bulk})
	if !strings.Contains(screen(m), "Undo the last bulk action: 100 of 200 done") {
		t.Fatalf("no undo progress line:\n%s", screen(m))
	}
	m.Update(undone)
	if bulk.undone != 1 || m.c.bulk != nil || !strings.Contains(screen(m), "100 tasks restored") {
		t.Fatalf("z: %d undos:\n%s", bulk.undone, screen(m))
	}
}

func (f *fakeBulk) PlanBulkMatching(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction, match func(snapshot.Task) bool, progress func(snapshot.BulkResult)) (snapshot.BulkPlan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.matched = match
	progress(snapshot.BulkResult{Planned: 60_000, Done: 20_000})
	if f.slowCount {
		<-ctx.Done()
		return snapshot.BulkPlan{}, ctx.Err()
	}
	return snapshot.BulkPlan{Tasks: 3, Scanned: 60_000, Bytes: 3 << 10, BytesNote: "MEMORY USAGE, sampled", KeysEach: 1, Match: match}, nil
}

// TestBulkOnAFiltersSelection: with a filter on, X's dry run counts the section's tasks the
// filter keeps (the whole section, through PlanBulkMatching, with the filter's own test), and
// the confirmation says the filter and how many of the section's tasks it keeps.
func TestBulkOnAFiltersSelection(t *testing.T) {
	bulk := &fakeBulk{started: make(chan struct{})}
	m, _ := drillModel(t, &fakeKeyActions{}, 140, 36)
	m.c.opt.Bulk = bulk
	drive(m, "4", "enter", "/", "z", "z", "enter")
	_, cmd := m.Update(drillKey("X"))
	batch, ok := cmd().(tea.BatchMsg)
	if !ok || m.c.bulk == nil {
		t.Fatalf("X with a filter did not start its dry run as a run:\n%s", screen(m))
	}
	counted := batch[0]()
	m.Update(bulkTickMsg{m.c.bulk})
	if !strings.Contains(screen(m), "dry run, reading the whole section: 20,000 of 60,000 done") {
		t.Fatalf("no dry run progress line:\n%s", screen(m))
	}
	m.Update(counted)
	if m.keyConfirm == nil || bulk.matched == nil || m.c.bulk != nil {
		t.Fatalf("X with a filter: no confirmation, or the dry run was not of the filter's selection:\n%s", screen(m))
	}
	for _, want := range []string{`Delete every due task matching "zz"`, `The filter "zz" keeps 3 of the section's 60,000 tasks`} {
		if !strings.Contains(screen(m), want) {
			t.Fatalf("the confirmation does not say %q:\n%s", want, screen(m))
		}
	}
	if !bulk.matched(snapshot.Task{ID: "job-zz-1"}) || bulk.matched(snapshot.Task{ID: "job-1"}) {
		t.Fatal("the dry run's test is not the filter's")
	}

	// A long count is stopped by ctrl+c, which neither quits nor asks.
	drive(m, "esc")
	bulk.slowCount = true
	_, cmd = m.Update(drillKey("X"))
	batch = cmd().(tea.BatchMsg)
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	if _, cmd := m.Update(drillKey("ctrl+c")); cmd != nil {
		t.Fatal("ctrl+c during the dry run quit instead of stopping it")
	}
	select {
	case msg := <-done:
		m.Update(msg)
	case <-time.After(10 * time.Second):
		t.Fatal("ctrl+c did not stop the dry run")
	}
	if m.keyConfirm != nil || m.c.bulk != nil || !strings.Contains(screen(m), "dry run stopped, nothing written") {
		t.Fatalf("the stopped dry run:\n%s", screen(m))
	}
}

// TestBulkKillIsSidekiqsWord: K on a Sidekiq queue's section asks to kill its tasks, as Sidekiq
// names it; on another library's, to archive them.
func TestBulkKillIsSidekiqsWord(t *testing.T) {
	m, _ := drillModel(t, &fakeKeyActions{}, 120, 36)
	m.c.opt.Bulk = &fakeBulk{started: make(chan struct{})}
	for _, c := range []struct {
		ref  snapshot.QueueRef
		want string
	}{
		{snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "jobs"}, "Kill every"},
		{snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "orders"}, "Archive every"},
	} {
		l := newTaskLevel(m.c, c.ref, c.ref.Name)
		cmd := l.bulk(snapshot.ActionArchive)
		msg, ok := cmd().(bulkPlanMsg)
		if !ok || !strings.HasPrefix(msg.title, c.want) {
			t.Errorf("K on %s: %+v, want a title starting %q", c.ref.Name, msg, c.want)
		}
	}
}
