package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// Pausing a job queue from its tasks. P reads whether the queue is paused now, and asks y to pause
// or resume it, as its library does (BullMQ, asynq). Where the library has no pause, P says why in
// one line: Sidekiq without Pro, RQ, Celery, hourglass's own queues. Pausing moves no task, so no
// name is typed. But it writes, so it needs writes allowed.

// QueuePauseReader is the part of an Inspector that reads a queue's pause. internal/inspect's
// Inspector has it; a console whose Inspector has not answers P with that.
type QueuePauseReader interface {
	// PauseRefusal says why the queue cannot be paused, "" when it can (no Redis I/O).
	PauseRefusal(ref snapshot.QueueRef) string
	// QueuePaused reads whether the queue is paused now.
	QueuePaused(ctx context.Context, ref snapshot.QueueRef) (bool, error)
}

// QueuePauser is the part of KeyActions that pauses (pause) or resumes a queue and says what it
// did in one line.
type QueuePauser interface {
	SetQueuePaused(ctx context.Context, ref snapshot.QueueRef, pause bool) (string, error)
}

// togglePause reads whether the queue is paused and asks to pause or resume it.
func (l *taskLevel) togglePause() tea.Cmd {
	c := l.c
	r, ok := c.opt.Inspector.(QueuePauseReader)
	if !ok {
		c.flash("this console cannot pause a queue")
		return nil
	}
	if why := r.PauseRefusal(l.ref); why != "" {
		c.flash(why)
		return nil
	}
	w, ok := c.opt.KeyActions.(QueuePauser)
	if !ok {
		why := c.opt.ReadOnlyWhy
		if why == "" {
			why = "this console writes nothing"
		}
		c.flash("pause is off: " + why)
		return nil
	}
	ref, title, ctx, after := l.ref, l.title, c.ctx, level(l)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, readTimeout)
		defer cancel()
		paused, err := r.QueuePaused(ctx, ref)
		if err != nil {
			return keyActionMsg{err: fmt.Errorf("pause: reading whether %s is paused: %w", title, err)}
		}
		what, then := "Pause queue", "Its workers take none of its tasks until it is resumed; its tasks stay where they are."
		if paused {
			what, then = "Resume queue", "It is paused now; resumed, its workers take its tasks again."
		}
		kc := &keyConfirm{title: what + " " + title, lines: []string{then, "It is done as the queue's library does it."}, after: after,
			run: func(ctx context.Context, _ KeyActions) (string, error) { return w.SetQueuePaused(ctx, ref, !paused) }}
		return askMsg{kc}
	}
}

// pausedMark is " paused" when the last Snapshot's row of the queue says it is paused.
func (l *taskLevel) pausedMark() string {
	s := l.c.status.Snapshot
	if s == nil || l.ref.Kind != snapshot.QueueJob {
		return ""
	}
	for _, e := range s.JobQueues {
		for _, q := range e.Queues {
			if e.Name == l.ref.Name && q.Queue == l.ref.Queue && q.Paused {
				return "  " + l.c.styles.Warn.Render("paused")
			}
		}
	}
	return ""
}
