package scanner

import (
	"context"
	"errors"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// Condition is what a Poll found of the watched Redis: what the console's header says of it.
type Condition int

const (
	// Connected: Redis answered the Poll and the sweep keeps to its usual time.
	Connected Condition = iota
	// Late: Redis answers, but the sweep under way has run well past its usual time (see
	// LateFactor): its replies come slowly, or the keyspace grew.
	Late
	// Unreachable: a fault that may pass (a connection refused, lost or timed out, LOADING,
	// TRYAGAIN, CLUSTERDOWN, or no answer within the Poll's time). The console tries again with
	// backoff.
	Unreachable
	// Denied: Redis refused a command to the user hourglass logs in as (NOPERM); ConnState.Refused
	// names it. Polls go on, so the console sees the right given back.
	Denied
	// Failing: another answer that sending again cannot change (WRONGPASS, a script error, an
	// unknown command); ConnState.Err is its one line.
	Failing
)

func (c Condition) String() string {
	switch c {
	case Late:
		return "late"
	case Unreachable:
		return "unreachable"
	case Denied:
		return "denied"
	case Failing:
		return "failing"
	}
	return "connected"
}

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

// ConnState is the state of the watched Redis as the last Poll found it.
type ConnState struct {
	Condition Condition
	// Err is the fault that ended the Poll (nil when Connected or Late), Class its class, and
	// Refused the command a NOPERM refusal named ("scan"; "key" for a key the user may not touch).
	Err     error
	Class   store.ErrorClass
	Refused string
	// Since is when the Condition began (the snapshot options' clock: the server's time in the
	// console).
	Since time.Time
	// LastSweep is when the last sweep completed; zero when none has yet.
	LastSweep time.Time
	// LateAfter is how long the sweep under way may run (in Polls' time) before it is late; zero
	// while no sweep has completed.
	LateAfter time.Duration
}

// connTrack follows the watcher's Polls: how long sweeps take, and the condition of the last Poll.
type connTrack struct {
	now       func() time.Time
	cond      Condition
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
func (h *connTrack) status(ctx context.Context, err error) ConnState {
	hs := ConnState{LastSweep: h.lastSweep, LateAfter: h.lateAfter()}
	switch {
	case err != nil:
		hs.Err, hs.Class = err, store.ClassOf(err)
		switch {
		case hs.Class == store.ClassPermanent && store.Refused(err) != "":
			hs.Condition, hs.Refused = Denied, store.Refused(err)
		case hs.Class == store.ClassPermanent:
			hs.Condition = Failing
		case hs.Class == store.ClassCanceled && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
			hs.Condition = Unreachable // the console is closing: nothing to say of Redis
		default:
			hs.Condition = Unreachable // a Poll out of time counts: no answer came in time
			hs.Class = store.ClassTransient
		}
	case hs.LateAfter > 0 && h.busy > hs.LateAfter, hs.LateAfter == 0 && h.stuck > MinLate:
		hs.Condition = Late
	}
	if hs.Condition != h.cond || h.since.IsZero() {
		h.cond, h.since = hs.Condition, h.now()
	}
	hs.Since = h.since
	return hs
}
