package traffic

import (
	"context"
	"errors"
	"fmt"
	"hourglass/store"
	"sync/atomic"
	"time"
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

// Inject generates events on one goroutine and flushes on another, so Redis works while the next
// events are drawn. It stops at the event or time limit or when ctx ends, then flushes what is
// left, retrying a Redis that went away for up to giveUp before reporting what it could not send.
func Inject(ctx context.Context, st *store.Store, f *store.Family, opt InjectOptions) InjectResult {
	// How long a Redis that went away is retried before inject reports what it could not send:
	// shorter once the operator has asked to stop.
	const giveUp, giveUpStopping = 30 * time.Second, 5 * time.Second
	w := st.NewWriter(store.WriterOptions{})
	gen := NewGenerator(f, opt.Dims, 1)
	start := time.Now()
	var generated atomic.Int64
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
				n = int64(opt.Rate*now.Sub(start).Seconds()) - generated.Load()
			}
			if opt.Events > 0 && generated.Load()+n > opt.Events {
				n = opt.Events - generated.Load()
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
			if generated.Add(n); opt.Events > 0 && generated.Load() >= opt.Events {
				return
			}
			if opt.Rate > 0 {
				select {
				case <-tick.C:
				case <-ctx.Done():
				}
			}
		}
	}()

	var res InjectResult
	record := func(fr store.FlushResult, err error) {
		res.Events += fr.Events
		res.Keys += int64(fr.Keys)
		res.Increments += int64(fr.Calls)
		var ke *store.KeyError
		for _, e := range unjoin(err) {
			if !errors.As(e, &ke) {
				if !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) {
					res.SendErr = e
				}
				continue
			}
			if res.Refused++; res.RefusedErr == nil {
				res.RefusedErr = e
			}
		}
	}
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
		record(fr, err)
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
				break
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
			break
		}
		waitForBatch(w, genDone)
	}
	res.Elapsed = time.Since(start)
	return res
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
