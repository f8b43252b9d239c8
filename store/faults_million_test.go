package store

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestMillionEventsThroughAFaultyNetwork sends 1M events through a proxy that cuts 5% of the
// replies (after Redis ran the command) and holds every reply up to 2 ms: the hour and day totals
// are exactly 1M, no more, no less.
func TestMillionEventsThroughAFaultyNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("1M events")
	}
	srv := redistest.Start(t)
	proxy, rdb := faultyClient(t, srv, 3)
	s := newStore(t, rdb, Options{})
	f := adRevenue(t)
	w := s.NewWriter(WriterOptions{})
	at := s.Now()
	proxy.SetCutRate(50_000)
	proxy.SetDelay(2 * time.Millisecond)
	const adders, each, dims = 4, 250_000, 2000
	var stop atomic.Bool
	flusher := make(chan struct{})
	go func() {
		defer close(flusher)
		for !stop.Load() {
			_, _ = w.Flush(t.Context())
		}
	}()
	var wg sync.WaitGroup
	for g := range adders {
		wg.Go(func() {
			for i := range each {
				if err := w.Add(f, []string{"m", strconv.Itoa((g*7919 + i*31) % dims)}, 1, at); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	<-flusher
	flushUntilDone(t, w) // still through the faults
	if proxy.Cuts() == 0 {
		t.Fatal("the proxy cut nothing; the test tested nothing")
	}
	t.Logf("%d replies cut on the way", proxy.Cuts())
	wantTotals(t, s, "m", dims, at, adders*each)
}

// TestLimiterAndQueueThroughAFaultyNetwork: retried limiter hits are counted once (each hit's
// member is its own, so a script run twice adds it once), and a delay queue loses no task when
// claims and acknowledgements are cut (a claim whose reply was lost comes back after its deadline).
func TestLimiterAndQueueThroughAFaultyNetwork(t *testing.T) {
	srv := redistest.Start(t)
	proxy, rdb := faultyClient(t, srv, 3)
	s := newStore(t, rdb, Options{})
	direct := srv.Client(t)
	ctx := t.Context()
	proxy.SetCutRate(20_000)
	proxy.SetDelay(time.Millisecond)

	l, err := s.NewLimiter(LimiterSpec{Name: "f", Pattern: "rl:f:<u>", Kind: Sliding, Window: time.Hour, Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	const hits = 5000
	var ok, failed int
	for range hits {
		if _, err := l.Allow(ctx, "u"); err != nil {
			failed++
		} else {
			ok++
		}
	}
	n := int(direct.ZCard(ctx, "rl:f:u").Val())
	if n < ok || n > ok+failed {
		t.Fatalf("the limiter holds %d hits; %d calls succeeded and %d failed, so between %d and %d", n, ok, failed, ok, ok+failed)
	}
	t.Logf("limiter: %d hits held for %d successful calls (%d failed), %d replies cut", n, ok, failed, proxy.Cuts())

	q := s.DelayQueue("delay:faulty", Milliseconds)
	const tasks = 3000
	for i := 0; i < tasks; i += 100 {
		batch := make([]string, 100)
		for j := range batch {
			batch[j] = fmt.Sprint("t", i+j)
		}
		for try := 0; q.Enqueue(ctx, time.Time{}, batch...) != nil; try++ { // ZADD again until confirmed: it is idempotent
			if try == 100 {
				t.Fatal("an enqueue failed 100 times")
			}
		}
	}
	if got := direct.ZCard(ctx, "delay:faulty").Val(); got != tasks {
		t.Fatalf("%d tasks queued, want %d", got, tasks)
	}
	seen := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	dq := (&Store{rdb: direct, loc: s.loc, clock: s.clock}).DelayQueue("delay:faulty", Milliseconds)
	for len(seen) < tasks {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d tasks ran", len(seen), tasks)
		}
		c, err := q.Claim(ctx, 50, 200*time.Millisecond)
		if err == nil {
			for _, task := range c.Tasks {
				seen[task]++
			}
			_, _ = q.Ack(ctx, c) // a lost ack: the task comes back and runs again (at least once)
		}
		if _, err := dq.Reap(ctx, 1000); err != nil { // the reaper talks to Redis directly
			t.Fatal(err)
		}
	}
	again := 0
	for _, n := range seen {
		again += n - 1
	}
	t.Logf("queue: all %d tasks ran, %d ran twice after a cut reply", tasks, again)
}
