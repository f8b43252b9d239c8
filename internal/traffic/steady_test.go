package traffic

import (
	"context"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// Steady's report hears each failed flush while Redis is away, and nil once writes go through
// again, so the console can say both while the fault lasts and when it passed.
func TestSteadyReportsAFaultAndItsEnd(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	st := store.New(rdb, store.Options{Location: time.UTC})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	f, err := config.Builtin(redistest.Shipped(t)).Counter("flow")
	if err != nil {
		t.Fatal(err)
	}
	heard := make(chan error, 1000)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Steady(ctx, st, f, 200, func(err error) { heard <- err })
	}()
	defer func() { cancel(); <-done }()

	// next waits until report hears what want accepts.
	next := func(what string, want func(error) bool) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case err := <-heard:
				if want(err) {
					return
				}
			case <-deadline:
				t.Fatalf("report never heard %s", what)
			}
		}
	}
	redistest.Eventually(t, "traffic to reach Redis", 10*time.Second, func() bool { return rdb.DBSize(t.Context()).Val() >= 20 })
	select { // flushes that went through: nothing to report
	case err := <-heard:
		t.Fatalf("report heard %v while Redis was up", err)
	default:
	}
	srv.Stop()
	next("a failed flush", func(err error) bool { return err != nil })
	srv.Restart(t)
	next("nil once writes went through again", func(err error) bool { return err == nil })
}
