package traffic

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hourglass/internal/config"
	"hourglass/store"
)

// profileResult counts what one entry of a profile did.
type profileResult struct {
	entry config.ProfileEntry
	ops   atomic.Int64 // events, hits, tasks, members, locks
	extra string       // a kind's own detail, filled at the end

	mu  sync.Mutex
	err error // the first error
}

// fail keeps the first error.
func (r *profileResult) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// RunProfile drives every entry of p at its rate until d has passed or ctx ends, then prints
// one summary line per entry. It returns an error when any entry failed.
//
// On a real Redis (embedded false) queue traffic goes to a test queue beside each configured one
// ("{key}:hourglass-test"): a consumer there can only claim and acknowledge its own tasks, never
// the real ones waiting in the queue.
func RunProfile(ctx context.Context, st *store.Store, cfg *config.Config, p config.Profile, d time.Duration, embedded bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	results := make([]*profileResult, len(p.Entries))
	var wg sync.WaitGroup
	start := time.Now()
	for i, e := range p.Entries {
		r := &profileResult{entry: e}
		results[i] = r
		w, err := profileWork(ctx, st, cfg, e, r, embedded)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			paced(ctx, e.Rate, func(n int) bool {
				if err := w.batch(n); err != nil && ctx.Err() == nil {
					r.fail(err)
					return false
				}
				r.ops.Add(int64(n))
				return true
			})
			fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer fcancel()
			if err := w.finish(fctx); err != nil {
				r.fail(err)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "inject profile %s: seconds=%.2f\n", p.Name, secs)
	var failed []string
	for _, r := range results {
		n := r.ops.Load()
		fmt.Fprintf(out, "  %s %s: ops=%d ops/s=%.1f target/s=%g%s\n", r.entry.Kind, r.entry.Name, n, float64(n)/secs, r.entry.Rate, r.extra)
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s %s: %v", r.entry.Kind, r.entry.Name, r.err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("inject profile %s: %s", p.Name, strings.Join(failed, "; "))
	}
	return nil
}

// paced calls work with the number of operations owed every 10 ms, holding rate per second over
// the run, until ctx ends or work says stop. Falling behind, it catches up by two ticks at most.
func paced(ctx context.Context, rate float64, work func(n int) bool) {
	const tick = 10 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start, done := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			owed := int(rate*now.Sub(start).Seconds()) - done
			if owed <= 0 {
				continue
			}
			// When Redis falls behind, what could not be done is dropped rather than owed: at most
			// two ticks' worth a batch, so one batch never runs far past the end.
			if limit := int(rate*2*tick.Seconds()) + 1; owed > limit {
				done += owed - limit
				owed = limit
			}
			if !work(owed) {
				return
			}
			done += owed
		}
	}
}

// RunDemoProfile is the built-in demo profile: the embedded mode's traffic, for d.
func RunDemoProfile(ctx context.Context, st *store.Store, cfg *config.Config, rate float64, d time.Duration, embedded bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	dm := NewDemo(st, cfg.Counters, rate)
	sd, err := newStructDemo(st, cfg.Structures, cfg.Counters, rate/10)
	if err != nil {
		return err
	}
	sd.anomalies = embedded
	if !embedded {
		sd.useTestQueues()
	}
	var mu sync.Mutex
	var firstErr error
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sd.run(ctx, report)
	}()
	dm.Run(ctx, func(error) {})
	wg.Wait()
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer fcancel()
	if _, err := dm.w.Flush(fctx); err != nil {
		report(err)
	}
	fmt.Fprintf(out, "inject profile demo: seconds=%.2f\n  counter (all families): events=%d\n  %s\n",
		time.Since(start).Seconds(), dm.events.Load(), sd.summary())
	if firstErr != nil {
		return fmt.Errorf("inject profile demo: %w", firstErr)
	}
	return nil
}
