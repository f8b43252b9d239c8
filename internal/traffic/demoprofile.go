package traffic

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// demoErrors counts the errors of one part of the demo profile and keeps the first; a permanent
// one ends the run through refuse.
type demoErrors struct {
	refuse context.CancelCauseFunc
	n      atomic.Int64
	mu     sync.Mutex
	first  error
}

func (e *demoErrors) report(err error) {
	if err == nil {
		return // a fault that passed
	}
	e.n.Add(1)
	e.mu.Lock()
	if e.first == nil {
		e.first = err
	}
	e.mu.Unlock()
	if store.Permanent(err) {
		e.refuse(err)
	}
}

func (e *demoErrors) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		return "errors=0"
	}
	return fmt.Sprintf("errors=%d (first: %v)", e.n.Load(), e.first)
}

// RunDemoProfile is the built-in demo profile: the embedded mode's traffic, for d. It prints the
// counter events Redis confirmed and what the structures did, a line each with its errors; a
// permanent error ends the run at once.
func RunDemoProfile(ctx context.Context, st *store.Store, cfg *config.Config, rate float64, d time.Duration, embedded bool, out io.Writer) error {
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	runCtx, refuse := context.WithCancelCause(runCtx)
	defer refuse(nil)
	dm := NewDemo(st, cfg.Counters, rate)
	sd, err := newStructDemo(st, cfg.Structures, cfg.Counters, rate/10)
	if err != nil {
		return err
	}
	sd.anomalies = embedded
	if !embedded {
		sd.useTestQueues()
	}
	counterErrs, structErrs := &demoErrors{refuse: refuse}, &demoErrors{refuse: refuse}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { sd.run(runCtx, structErrs.report) })
	dm.Run(runCtx, func(err error) { counterErrs.report(refusal(err, "EVALSHA", "", store.UserOf(st.Client()))) })
	wg.Wait()
	limit := finishTime
	if ctx.Err() != nil {
		limit = finishStopping
	}
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer fcancel()
	fr, err := dm.w.Flush(fctx)
	dm.written.Add(fr.Events)
	counterErrs.report(err)
	fmt.Fprintf(out, "inject profile demo: seconds=%.2f\n  counter (all families): events=%d %s\n",
		time.Since(start).Seconds(), dm.Written(), counterErrs)
	for _, part := range strings.Split(sd.summary(), " · ") {
		fmt.Fprintf(out, "  %s\n", part)
	}
	fmt.Fprintf(out, "  structures: %s\n", structErrs)
	switch cause := context.Cause(runCtx); {
	case cause != nil && store.Permanent(cause):
		return fmt.Errorf("inject profile demo: %w", cause)
	case counterErrs.first != nil || structErrs.first != nil:
		return fmt.Errorf("inject profile demo: counters %s; structures %s", counterErrs, structErrs)
	}
	return nil
}
