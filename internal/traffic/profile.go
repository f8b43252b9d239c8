package traffic

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// profileResult counts what one entry of a profile did.
type profileResult struct {
	entry  config.ProfileEntry
	ops    atomic.Int64 // events, hits, tasks, members, locks written (confirmed by Redis)
	errors atomic.Int64 // batches that failed
	extra  string       // a kind's own detail, filled at the end

	mu    sync.Mutex
	first error // the first error
}

// fail counts err and keeps the first.
func (r *profileResult) fail(err error) {
	r.errors.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		r.first = err
	}
}

// line is the entry's line of the summary: what it wrote, how fast, its errors and the first.
func (r *profileResult) line(secs float64) string {
	n := r.ops.Load()
	s := fmt.Sprintf("  %s %s: ops=%d ops/s=%.1f target/s=%g%s errors=%d", r.entry.Kind, r.entry.Name, n, float64(n)/secs, r.entry.Rate, r.extra, r.errors.Load())
	if r.first != nil {
		s += fmt.Sprintf(" (first: %v)", r.first)
	}
	return s
}

// After the run, what is left (a last flush of counters and limiter decisions) gets finishTime,
// or finishStopping once the operator has asked to stop. A batch under way when the run ends
// finishes its Redis calls within grace, and starts no more.
const (
	finishTime, finishStopping = 5 * time.Second, 300 * time.Millisecond
	grace                      = 300 * time.Millisecond
)

// RunProfile drives every entry of p at its rate until d has passed or ctx ends, then prints
// one summary line per entry: what it wrote (only what Redis confirmed), its errors and the first
// of them. An error that may pass is counted and the entry goes on after a pause; a permanent one
// (a refusal, a missing right) ends the whole run at once. It returns an error when any entry
// failed: the permanent error, said as the command, the key and the user, or the entries that had
// errors.
//
// On a real Redis (embedded false) queue traffic goes to a test queue beside each configured one
// ("{key}:hourglass-test"): a consumer there can only claim and acknowledge its own tasks, never
// the real ones waiting in the queue.
func RunProfile(ctx context.Context, st *store.Store, cfg *config.Config, p config.Profile, d time.Duration, embedded bool, out io.Writer) error {
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	runCtx, refuse := context.WithCancelCause(runCtx)
	defer refuse(nil)
	opCtx, stopOps := graceful(runCtx, grace)
	defer stopOps()
	user := store.UserOf(st.Client())
	results := make([]*profileResult, len(p.Entries))
	works := make([]work, len(p.Entries))
	for i, e := range p.Entries {
		results[i] = &profileResult{entry: e}
		w, err := profileWork(opCtx, st, cfg, e, results[i], embedded, user)
		if err != nil {
			return err
		}
		works[i] = w
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i, r := range results {
		wg.Go(func() { runEntry(ctx, runCtx, refuse, works[i], r) })
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "inject profile %s: seconds=%.2f\n", p.Name, secs)
	failed, first := 0, ""
	for _, r := range results {
		fmt.Fprintln(out, r.line(secs))
		if r.errors.Load() > 0 {
			if failed++; first == "" {
				first = fmt.Sprintf("%s %s: %v", r.entry.Kind, r.entry.Name, r.first)
			}
		}
	}
	if cause := context.Cause(runCtx); cause != nil && store.Permanent(cause) {
		return fmt.Errorf("inject profile %s: %w", p.Name, cause)
	}
	if failed > 0 {
		return fmt.Errorf("inject profile %s: %d of %d structures had errors, each counted on its line; the first: %s", p.Name, failed, len(results), first)
	}
	return nil
}

// runEntry paces one entry's work until runCtx ends, then finishes it: within finishTime, or
// finishStopping when ctx (the operator) ended it. A permanent error ends the run through refuse.
func runEntry(ctx, runCtx context.Context, refuse context.CancelCauseFunc, w work, r *profileResult) {
	backoff := time.Duration(0)
	paced(runCtx, r.entry.Rate, func(n int) bool {
		done, err := w.batch(runCtx, n)
		r.ops.Add(done)
		switch {
		case err == nil:
			backoff = 0
			return true
		case runCtx.Err() != nil && !store.Permanent(err):
			return false // the run ended under the batch
		}
		r.fail(err)
		if store.Permanent(err) {
			refuse(err)
			return false
		}
		backoff = min(max(2*backoff, 50*time.Millisecond), time.Second)
		select { // Redis is failing: try again after a pause, dropping what falls due meanwhile
		case <-time.After(backoff):
		case <-runCtx.Done():
		}
		return true
	})
	limit := finishTime
	if ctx.Err() != nil {
		limit = finishStopping
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	done, err := w.finish(fctx)
	r.ops.Add(done)
	if err != nil {
		r.fail(err)
	}
}

// graceful is a context for Redis calls that outlives ctx by d: a call under way when the run
// ends completes (no task left pushed and not popped), but nothing runs on past d.
func graceful(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(d, cancel) })
	return g, func() { stop(); cancel() }
}

// paced calls work with the number of operations owed every 10 ms, holding rate per second over
// the run, until ctx ends or work says stop. Falling behind, it catches up by two ticks at most.
// The sums are in floating point, so no rate overflows them; a rate that is not a positive
// finite number does nothing.
func paced(ctx context.Context, rate float64, work func(n int) bool) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		<-ctx.Done()
		return
	}
	const tick = 10 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start, done := time.Now(), 0.0
	limit := math.Floor(rate*2*tick.Seconds()) + 1
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			owed := math.Floor(rate*now.Sub(start).Seconds() - done)
			if owed < 1 {
				continue
			}
			// When Redis falls behind, what could not be done is dropped rather than owed: at most
			// two ticks' worth a batch, so one batch never runs far past the end.
			if owed > limit {
				done += owed - limit
				owed = limit
			}
			if ctx.Err() != nil || !work(int(owed)) {
				return
			}
			done += owed
		}
	}
}
