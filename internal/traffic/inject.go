package traffic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"hourglass/store"
)

// InjectOptions say what Inject writes.
type InjectOptions struct {
	Events   int64         // stop after this many events (0: no limit)
	Duration time.Duration // stop after this long (0: no limit)
	Rate     float64       // events per second (0: as fast as possible)
	Dims     int           // distinct dims tuples
}

// InjectResult is what Inject wrote.
type InjectResult struct {
	Events     int64 // events written
	Keys       int64 // key updates sent (an hour and a day key are two)
	Increments int64 // script calls, each adding to many keys
	Elapsed    time.Duration
	Unsent     int    // key pairs still pending when inject gave up
	Refused    int64  // key updates Redis refused (wrong type, not an integer)
	RefusedErr error  // the first refusal, for the summary
	SendErr    error  // the last error from Redis or the network
	GaveUp     string // why inject stopped retrying, when it did
}

// Summary is inject's one line: what it wrote into family, how fast, and what it could not.
func (r InjectResult) Summary(family string) string {
	secs := r.Elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	s := fmt.Sprintf("inject %s: events=%d increments=%d keys=%d seconds=%.2f events/s=%.0f increments/s=%.0f",
		family, r.Events, r.Increments, r.Keys, secs, float64(r.Events)/secs, float64(r.Increments)/secs)
	if r.Refused > 0 {
		s += fmt.Sprintf(" refused=%d (first: %v)", r.Refused, r.RefusedErr)
	}
	if r.Unsent > 0 {
		s += fmt.Sprintf(" unsent_pairs=%d", r.Unsent)
	}
	return s
}

// How long a Redis that went away is retried before inject reports what it could not send:
// shorter once the operator has asked to stop.
const giveUp, giveUpStopping = 30 * time.Second, 5 * time.Second

// Inject generates events on one goroutine and flushes on another, so Redis works while the next
// events are drawn. It stops at the event or time limit or when ctx ends, then flushes what is
// left, retrying a Redis that went away for up to giveUp before reporting what it could not send.
func Inject(ctx context.Context, st *store.Store, f *store.Family, opt InjectOptions) InjectResult {
	w := st.NewWriter(store.WriterOptions{})
	gen := NewGenerator(f, opt.Dims, 1)
	start := time.Now()
	genDone := make(chan struct{})
	// The generator stops at ctx's end, or when the flusher gives up on Redis. Flushes outlive
	// ctx by up to giveUpStopping, so ctrl+c stops generating but what was generated is still
	// written, unless Redis cannot take it by then.
	flushCtx, stopFlushing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFlushing()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(giveUpStopping, stopFlushing)
		context.AfterFunc(flushCtx, func() { t.Stop() })
	})
	defer stop()
	ctx, stopGen := context.WithCancel(ctx)
	defer stopGen()

	go func() {
		defer close(genDone)
		generate(ctx, w, f, gen, opt, start)
	}()
	res := flushUntilDone(flushCtx, w, genDone, stopGen)
	res.Elapsed = time.Since(start)
	return res
}

// generate adds gen's events to w at opt's rate, counted from start, until opt's event or time
// limit or ctx's end. It holds back while more than maxPending key pairs wait for Redis.
func generate(ctx context.Context, w *store.Writer, f *store.Family, gen *Generator, opt InjectOptions, start time.Time) {
	var generated int64
	deadline := time.Time{}
	if opt.Duration > 0 {
		deadline = start.Add(opt.Duration)
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		if ctx.Err() != nil || (!deadline.IsZero() && !now.Before(deadline)) {
			return
		}
		n := int64(4096)
		if opt.Rate > 0 {
			n = int64(opt.Rate*now.Sub(start).Seconds()) - generated
		}
		if opt.Events > 0 && generated+n > opt.Events {
			n = opt.Events - generated
		}
		n = max(n, 0)
		for w.Pending() >= maxPending && ctx.Err() == nil {
			time.Sleep(time.Millisecond) // Redis is behind: hold back rather than pile up
		}
		for range n {
			if err := w.Add(f, gen.Next(), 1, time.Time{}); err != nil {
				return // dims always fit; only a clock far off could expire "now"
			}
		}
		if generated += n; opt.Events > 0 && generated >= opt.Events {
			return
		}
		if opt.Rate > 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}
}

// flushUntilDone flushes w until the generator is done (genDone) and nothing is pending, or until
// it gives up on a failing Redis: then it stops the generator with stopGen and reports what it
// could not send. It returns what was written, without Elapsed.
func flushUntilDone(flushCtx context.Context, w *store.Writer, genDone <-chan struct{}, stopGen context.CancelFunc) InjectResult {
	var res InjectResult
	// While Redis is failing, each flush and each pause between flushes is held to the give-up
	// deadline, so inject ends on time whatever a single attempt would take.
	backoff := 50 * time.Millisecond
	var deadline time.Time // while failing: when to give up
	for {
		done := false
		select {
		case <-genDone:
			done = true
		default:
		}
		fr, err := flushBy(flushCtx, w, deadline)
		res.record(fr, err)
		if fr.Failed > 0 {
			if deadline.IsZero() {
				deadline = time.Now().Add(giveUp)
			}
			switch {
			case store.Permanent(err):
				res.GaveUp = "Redis refuses them"
			case flushCtx.Err() != nil:
				res.GaveUp = fmt.Sprintf("Redis did not take them within %v of ctrl+c", giveUpStopping)
			case !time.Now().Before(deadline):
				res.GaveUp = fmt.Sprintf("Redis failed for %v", giveUp)
			}
			if res.GaveUp != "" {
				stopGen()
				<-genDone
				res.Unsent = w.Pending()
				return res
			}
			select { // wait, but not past the deadline or the end of flushing
			case <-time.After(min(backoff, time.Until(deadline))):
			case <-flushCtx.Done():
			}
			backoff = min(backoff*2, 2*time.Second)
			continue
		}
		deadline, backoff = time.Time{}, 50*time.Millisecond
		if done && w.Pending() == 0 {
			return res
		}
		waitForBatch(w, genDone)
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
			if !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) {
				r.SendErr = e
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

// flushBy flushes with deadline as the context's deadline when it is set.
func flushBy(ctx context.Context, w *store.Writer, deadline time.Time) (store.FlushResult, error) {
	if deadline.IsZero() {
		return w.Flush(ctx)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return w.Flush(ctx)
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
