package inspect

import (
	"context"
	"errors"
	"strings"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// Pausing a job queue from the console: as the owning library pauses it (jobs.PauserOf), only on
// a queue a Snapshot's row opens. Whether writes are allowed is the console's to decide before it
// calls SetQueuePaused; pausing moves no task, so it asks for no typed confirmation.

// PauseRefusal says in one line why ref's queue cannot be paused ("" when its library pauses
// it): Sidekiq without Pro, RQ, Celery and hourglass's own queues have no pause. It reads
// nothing.
func (in *Inspector) PauseRefusal(ref snapshot.QueueRef) string {
	q := in.open(ref)
	if q == nil {
		return errNoQueue.Error()
	}
	_, err := jobs.PauserOf(q)
	if err == nil {
		return ""
	}
	why := strings.TrimPrefix(err.Error(), "store: ")
	return strings.TrimSuffix(why, ": "+jobs.ErrNotSupported.Error())
}

// QueuePaused reads whether ref's queue is paused now, as its library reads it.
func (in *Inspector) QueuePaused(ctx context.Context, ref snapshot.QueueRef) (bool, error) {
	p, err := in.pauser(ref)
	if err != nil {
		return false, err
	}
	in.w.Charge(1)
	paused, err := p.Paused(ctx, in.rdb)
	return paused, in.refusal(err, where(ref))
}

// SetQueuePaused pauses (pause) or resumes ref's queue as its library does, at the server's
// clock, and says what it did in one line.
func (in *Inspector) SetQueuePaused(ctx context.Context, ref snapshot.QueueRef, pause bool) (string, error) {
	p, err := in.pauser(ref)
	if err != nil {
		return "", err
	}
	if !pause {
		line, err := p.Resume(ctx, in.rdb)
		return line, in.refusal(err, where(ref))
	}
	now, err := in.w.ServerTime(ctx)
	if err != nil {
		return "", err
	}
	line, err := p.Pause(ctx, in.rdb, now)
	return line, in.refusal(err, where(ref))
}

func (in *Inspector) pauser(ref snapshot.QueueRef) (jobs.Pauser, error) {
	q := in.open(ref)
	if q == nil {
		return nil, errNoQueue
	}
	p, err := jobs.PauserOf(q)
	if err != nil {
		return nil, errors.New(in.PauseRefusal(ref))
	}
	return p, nil
}
