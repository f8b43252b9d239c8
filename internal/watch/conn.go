package watch

import (
	"context"
	"errors"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// When a sweep is late: once the sweep under way has taken LateFactor times the time the last
// complete sweep took, and at least MinLate. Both count only the time Polls spent on it, so a
// paused console or a long refresh interval is never taken for a slow Redis. A small keyspace
// completes a sweep within one Poll, so MinLate is what holds there. Until a first sweep has
// completed there is no usual time: the sweep is late when MinLate of Polls has passed with no
// key seen.
const (
	LateFactor = 3
	MinLate    = 10 * time.Second
)

// connTrack follows the watcher's Polls: how long sweeps take, and the condition of the last Poll.
type connTrack struct {
	now       func() time.Time
	cond      snapshot.Condition
	since     time.Time
	lastSweep time.Time
	usual     time.Duration // Polls' time the last complete sweep took; 0 until one has
	busy      time.Duration // Polls' time the sweep under way has taken
	stuck     time.Duration // Polls' time since the sweep under way last saw a key
	seen      int64         // keys the sweep under way had seen at the last Poll
}

// began starts the count of a new sweep.
func (h *connTrack) began() { h.busy, h.stuck, h.seen = 0, 0, 0 }

// completed records a sweep that took busy more of Polls' time than counted so far.
func (h *connTrack) completed(busy time.Duration) {
	h.usual, h.lastSweep = h.busy+busy, h.now()
}

// polled adds a Poll's time spent on the sweep under way, which has seen keysSeen keys.
func (h *connTrack) polled(d time.Duration, keysSeen int64) {
	h.busy += d
	if keysSeen > h.seen {
		h.seen, h.stuck = keysSeen, 0
	} else {
		h.stuck += d
	}
}

// lateAfter is the Polls' time the sweep under way may take before it is late (0: no usual time).
func (h *connTrack) lateAfter() time.Duration {
	if h.usual == 0 {
		return 0
	}
	return max(LateFactor*h.usual, MinLate)
}

// status says what the Poll that ended on err found, and notes when its condition began.
func (h *connTrack) status(ctx context.Context, err error) snapshot.ConnState {
	hs := snapshot.ConnState{LastSweep: h.lastSweep, LateAfter: h.lateAfter()}
	switch {
	case err != nil:
		hs.Err, hs.Class = err, store.ClassOf(err)
		switch {
		case hs.Class == store.ClassPermanent && store.Refused(err) != "":
			hs.Condition, hs.Refused = snapshot.Denied, store.Refused(err)
		case hs.Class == store.ClassPermanent:
			hs.Condition = snapshot.Failing
		case hs.Class == store.ClassCanceled && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
			hs.Condition = snapshot.Unreachable // the console is closing: nothing to say of Redis
		default:
			hs.Condition = snapshot.Unreachable // a Poll out of time counts: no answer came in time
			hs.Class = store.ClassTransient
		}
	case hs.LateAfter > 0 && h.busy > hs.LateAfter, hs.LateAfter == 0 && h.stuck > MinLate:
		hs.Condition = snapshot.Late
	}
	if hs.Condition != h.cond || h.since.IsZero() {
		h.cond, h.since = hs.Condition, h.now()
	}
	hs.Since = h.since
	return hs
}
