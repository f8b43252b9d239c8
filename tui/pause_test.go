package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
)

// pausingInspector is the fake Inspector that also reads a queue's pause.
type pausingInspector struct {
	*fakeInspector
	refusal string
	paused  bool
}

func (p *pausingInspector) PauseRefusal(snapshot.QueueRef) string { return p.refusal }
func (p *pausingInspector) QueuePaused(context.Context, snapshot.QueueRef) (bool, error) {
	return p.paused, nil
}

// pausingActions are the fake KeyActions that also pause, and say so on the inspector.
type pausingActions struct {
	fakeKeyActions
	in *pausingInspector
}

func (a *pausingActions) SetQueuePaused(_ context.Context, ref snapshot.QueueRef, pause bool) (string, error) {
	a.in.paused = pause
	return a.record(map[bool]string{true: "pause ", false: "resume "}[pause] + ref.Key + ref.Queue)
}

func pauseModel(t *testing.T, in Inspector, acts KeyActions) *Model {
	t.Helper()
	opt := Options{Target: "10.0.0.5:6379", Mode: "standalone", Source: &fakeSource{status: testStatus(t)}, Refresh: time.Second,
		Now: func() time.Time { return clock }, Location: time.UTC, ReadOnlyWhy: "read-only: start with --allow-writes",
		Inspector: in, KeyActions: acts}
	m := New(opt, theme.New(theme.Dark))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	poll(t, m)
	return m
}

// P on a queue's tasks asks y (no name typed: pausing moves no task) to pause it when it runs and
// to resume it when paused, and does it through KeyActions; a queue whose library has no pause
// says why, and a read-only console says writes are off.
func TestPauseKey(t *testing.T) {
	in := &pausingInspector{fakeInspector: &fakeInspector{pages: hostilePages()}}
	acts := &pausingActions{in: in}
	m := pauseModel(t, in, acts)
	drive(m, "4", "enter", "P")
	if m.keyConfirm == nil || !strings.Contains(screen(m), "Pause queue") || !strings.Contains(screen(m), "y does it") {
		t.Fatalf("P did not ask y to pause:\n%s", screen(m))
	}
	drive(m, "y")
	if len(acts.done) != 1 || acts.done[0] != "pause delay:orders" || !strings.Contains(screen(m), "did pause") {
		t.Fatalf("y wrote %v:\n%s", acts.done, screen(m))
	}
	drive(m, "P")
	if !strings.Contains(screen(m), "Resume queue") {
		t.Fatalf("P on a paused queue did not ask to resume:\n%s", screen(m))
	}
	drive(m, "esc")
	if len(acts.done) != 1 {
		t.Errorf("esc wrote %v", acts.done)
	}

	in.refusal = "pausing a queue is Sidekiq Pro's"
	drive(m, "P")
	if m.keyConfirm != nil || !strings.Contains(screen(m), "pausing a queue is Sidekiq Pro's") {
		t.Errorf("P on a queue without pause:\n%s", screen(m))
	}
	in.refusal = ""
	ro := pauseModel(t, in, nil)
	drive(ro, "4", "enter", "P")
	if ro.keyConfirm != nil || !strings.Contains(screen(ro), "pause is off: read-only") {
		t.Errorf("P on a read-only console:\n%s", screen(ro))
	}
	plain := pauseModel(t, &fakeInspector{pages: hostilePages()}, &fakeKeyActions{})
	drive(plain, "4", "enter", "P")
	if !strings.Contains(screen(plain), "cannot pause") {
		t.Errorf("P with an Inspector that cannot pause:\n%s", screen(plain))
	}
}

// A queue's tasks say paused when the last Snapshot's row of the queue does, and only then.
func TestTasksSayPaused(t *testing.T) {
	m := pauseModel(t, &fakeInspector{pages: hostilePages()}, nil)
	ref := m.c.status.Snapshot.JobQueues[0].Queues[0].Ref
	l := newTaskLevel(m.c, ref, "jobs critical")
	if strings.Contains(l.render(120, 30), "paused") {
		t.Fatalf("a running queue's tasks say paused:\n%s", l.render(120, 30))
	}
	m.c.status.Snapshot.JobQueues[0].Queues[0].Paused = true
	if !strings.Contains(l.render(120, 30), "paused") {
		t.Errorf("a paused queue's tasks do not say so:\n%s", l.render(120, 30))
	}
}
