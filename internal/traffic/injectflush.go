package traffic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// flusher flushes inject's writer until the generator is done and nothing is pending, or until it
// gives up on Redis.
type flusher struct {
	ctx     context.Context // ends giveUpStopping after ctrl+c
	w       *store.Writer
	genDone <-chan struct{}
	stopGen context.CancelFunc
	giveUp  time.Duration
	user    string // the Redis user, for the line of a permanent error

	res      InjectResult
	failedAt time.Time // the start of the first flush of the failures under way; zero when none
	stopped  bool      // the generator was stopped for a refusal
	// left is how many key pairs the flush still under way took, when inject stopped waiting
	// for it (-1 when none is): they are not confirmed.
	left int
}

// run flushes until done and returns what was written, without Elapsed.
func (fl *flusher) run() InjectResult {
	backoff := 50 * time.Millisecond
	for {
		done := closed(fl.genDone)
		began := time.Now()
		fr, err := fl.flush(began)
		fl.res.record(fr, err)
		ce := fl.w.Blame(err, fl.user)
		if ce != nil && fl.res.Err == nil {
			fl.res.Err = ce
		}
		if fr.Failed == 0 {
			fl.failedAt, backoff = time.Time{}, 50*time.Millisecond
			if fl.res.Refused > 0 && !fl.stopped {
				// A key Redis refuses stays refused: stop generating, and write what was drawn.
				fl.stopped = true
				fl.stopGen()
			}
			if done && fl.w.Pending() == 0 {
				return fl.res
			}
			waitForBatch(fl.w, fl.genDone)
			continue
		}
		if fl.failedAt.IsZero() {
			fl.failedAt = began
		}
		if why := fl.why(ce != nil); why != "" {
			fl.res.GaveUp = why
			fl.stopGen()
			<-fl.genDone
			fl.settle()
			return fl.res
		}
		select { // wait, but not past the last flush's deadline or the end of flushing
		case <-time.After(min(backoff, time.Until(fl.deadline(time.Now())))):
		case <-fl.ctx.Done():
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// deadline is when flushes must end so inject gives up within giveUp of the first failure, the
// reading of the records included. A flush when all is well gets as long, from its own start.
func (fl *flusher) deadline(now time.Time) time.Time {
	from := fl.failedAt
	if from.IsZero() {
		from = now
	}
	return from.Add(fl.giveUp - recordCheck)
}

// errAbandoned is a flush inject stopped waiting for: its deadline, or the end of flushing, came
// while a read was still waiting for Redis (a deadline stops the client's retries, not a read
// under way).
var errAbandoned = errors.New("no answer by the deadline")

// flush flushes once, held to the deadline and to the end of flushing. A flush still waiting
// then is left to end by itself: its pairs are counted in fl.left, and it reports every pair
// held as failed with errAbandoned.
func (fl *flusher) flush(now time.Time) (store.FlushResult, error) {
	deadline := fl.deadline(now)
	ctx, cancel := context.WithDeadline(fl.ctx, deadline)
	sent, waiting := fl.w.Held()
	type outcome struct {
		fr  store.FlushResult
		err error
	}
	got := make(chan outcome, 1)
	go func() {
		defer cancel()
		fr, err := fl.w.Flush(ctx)
		got <- outcome{fr, err}
	}()
	select {
	case o := <-got:
		return o.fr, o.err
	case <-ctx.Done():
	}
	select { // a flush that ends at its deadline, as it should, is not abandoned
	case o := <-got:
		return o.fr, o.err
	case <-time.After(10 * time.Millisecond):
	}
	fl.left = sent + waiting
	return store.FlushResult{Failed: max(fl.left, 1)}, errAbandoned
}

// why says why to give up after a failed flush, or "" to try again.
func (fl *flusher) why(permanent bool) string {
	switch {
	case permanent:
		return "Redis refuses them"
	case fl.ctx.Err() != nil:
		return fmt.Sprintf("Redis did not take them within %v of ctrl+c", giveUpStopping)
	case !time.Now().Before(fl.deadline(time.Now())):
		return fmt.Sprintf("Redis failed for %v", fl.giveUp)
	}
	return ""
}

// settle asks the sequence records about the calls whose answer never came, and sorts what the
// writer holds into written after all, not written and not confirmed. It waits recordCheck at
// most: a read under way may outlast its deadline, and then every call sent is not confirmed.
func (fl *flusher) settle() {
	sent, waiting := fl.w.Held()
	if fl.left >= 0 { // a flush is still under way: it holds the writer, and what it took is unknown
		fl.res.NotConfirmed, fl.res.NotWritten = fl.left, waiting
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(fl.ctx), recordCheck)
	defer cancel()
	got := make(chan store.RecordCheck, 1)
	go func() { got <- fl.w.CheckRecords(ctx) }()
	select {
	case rc := <-got:
		fl.res.Events += rc.Applied.Events
		fl.res.Keys += int64(rc.Applied.Keys)
		fl.res.Increments += int64(rc.Applied.Calls)
		fl.res.ConfirmedByRecord = rc.AppliedPairs
		fl.res.NotConfirmed = rc.Unknown
		fl.res.NotWritten = rc.NotApplied + waiting
	case <-ctx.Done():
		fl.res.NotConfirmed, fl.res.NotWritten = sent, waiting
	}
}

// record adds one flush's outcome: what it wrote, the keys Redis refused, and the last error
// that was not a refusal nor inject's own cancelling.
func (r *InjectResult) record(fr store.FlushResult, err error) {
	r.Events += fr.Events
	r.Keys += int64(fr.Keys)
	r.Increments += int64(fr.Calls)
	var ke *store.KeyError
	for _, e := range unjoin(err) {
		if !errors.As(e, &ke) {
			if !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) && (e != errAbandoned || r.SendErr == nil) {
				r.SendErr = e // inject's own deadlines are not what went wrong
			}
			continue
		}
		if r.Refused++; r.RefusedErr == nil {
			r.RefusedErr = e
		}
	}
}

// Inject flushes every flushInterval, or sooner once flushPending key pairs wait: the pause lets
// events on hot dims fold into one increment, and the bound keeps a flush's pipeline short.
const (
	flushInterval = 50 * time.Millisecond
	flushPending  = 8192
	maxPending    = 8 * flushPending // the generator waits above this
)

// waitForBatch returns when it is time for the next flush.
func waitForBatch(w *store.Writer, genDone <-chan struct{}) {
	deadline := time.Now().Add(flushInterval)
	for time.Now().Before(deadline) && w.Pending() < flushPending {
		select {
		case <-genDone:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// unjoin lists the errors joined into err.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
