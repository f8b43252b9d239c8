package store

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// Faults between the writer and a real Redis: replies lost after the script ran, error replies in
// the middle of a pipeline, restarts, go-redis resending pipelines by itself. In every case each
// increment added must be applied exactly once.

// faultyClient is a client to srv through a fault proxy, with go-redis's own retries as given
// (-1 off, 3 its default).
func faultyClient(t *testing.T, srv *redistest.Server, maxRetries int) (*redistest.FaultProxy, *redis.Client) {
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: maxRetries, PoolSize: 8})
	t.Cleanup(func() { _ = rdb.Close() })
	return proxy, rdb
}

// threeCalls returns a store and a writer holding three units that go out as three calls of one
// sequence (one lane, one pair a call).
func threeCalls(t *testing.T, rdb redis.UniversalClient, tag string) (*Store, *Writer, time.Time) {
	s := newStore(t, rdb, Options{})
	if err := s.LoadScripts(t.Context()); err != nil {
		t.Fatal(err)
	}
	w := s.NewWriter(WriterOptions{KeysPerCall: 2, Lanes: 1})
	at := s.Now()
	for i := range 3 {
		if err := w.Add(adRevenue(t), []string{tag, strconv.Itoa(i)}, 1, at); err != nil {
			t.Fatal(err)
		}
	}
	return s, w, at
}

// flushUntilDone flushes until nothing is pending, with a deadline.
func flushUntilDone(t *testing.T, w *Writer) (written int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for w.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pairs still pending after 20s", w.Pending())
		}
		res, _ := w.Flush(t.Context())
		written += res.Events
	}
	return written
}

// totals sums the hour and day windows at at of dims (tag, 0..n-1).
func totals(t *testing.T, s *Store, tag string, n int, at time.Time) (hour, day int64) {
	t.Helper()
	f := adRevenue(t)
	for i := range n {
		for _, g := range []Granularity{Hour, Day} {
			v, err := s.Get(t.Context(), f, g, []string{tag, strconv.Itoa(i)}, at)
			if err != nil {
				t.Fatal(err)
			}
			if g == Hour {
				hour += v.Value
			} else {
				day += v.Value
			}
		}
	}
	return hour, day
}

func wantTotals(t *testing.T, s *Store, tag string, n int, at time.Time, want int64) {
	t.Helper()
	if hour, day := totals(t, s, tag, n, at); hour != want || day != want {
		t.Fatalf("hour total %d, day total %d; want %d each", hour, day, want)
	}
}

// TestLostRepliesAreNotCountedTwice loses replies after the script ran, with new events added
// behind the unconfirmed calls, and the calls sent again by the next flush or by go-redis.
func TestLostRepliesAreNotCountedTwice(t *testing.T) {
	srv := redistest.Start(t)
	for _, c := range []struct {
		name       string
		maxRetries int
		drops      int
	}{
		{"writer resends", -1, 3},
		{"go-redis retries", 3, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			proxy, rdb := faultyClient(t, srv, c.maxRetries)
			s := newStore(t, rdb, Options{})
			if err := s.LoadScripts(t.Context()); err != nil {
				t.Fatal(err)
			}
			f := adRevenue(t)
			w := s.NewWriter(WriterOptions{KeysPerCall: 4, Lanes: 2, CallsPerPipeline: 5})
			at := s.Now()
			tag := strings.ReplaceAll(c.name, " ", "-")
			add := func(from, to int) {
				for i := from; i < to; i++ {
					if err := w.Add(f, []string{tag, strconv.Itoa(i % 50)}, 1, at); err != nil {
						t.Fatal(err)
					}
				}
			}
			add(0, 1500)
			proxy.DropReplies(c.drops)
			res, _ := w.Flush(t.Context())
			add(1500, 3000) // new events while calls are unconfirmed
			written := res.Events + flushUntilDone(t, w)
			if proxy.Cuts() != c.drops {
				t.Fatalf("the proxy lost %d replies, want %d", proxy.Cuts(), c.drops)
			}
			if written != 3000 {
				t.Errorf("flushes reported %d events written, want 3000", written)
			}
			wantTotals(t, s, tag, 50, at, 3000)
		})
	}
}

// TestResentCallAfterScriptCacheLoss loses a reply, then empties the script cache as a restart
// from persistence or a failover does while keeping the data: the resend gets NOSCRIPT, the
// scripts are loaded again, and the call that already ran is recognised, not applied again.
func TestResentCallAfterScriptCacheLoss(t *testing.T) {
	srv := redistest.Start(t)
	proxy, rdb := faultyClient(t, srv, -1)
	s, w, at := threeCalls(t, rdb, "noscript")
	proxy.Arm(nil, 2) // the third call runs; its reply is lost
	if _, err := w.Flush(t.Context()); err == nil || w.Pending() == 0 {
		t.Fatalf("flush with a lost reply: err %v, pending %d; want an error and the call kept", err, w.Pending())
	}
	if err := srv.Client(t).ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	flushUntilDone(t, w)
	wantTotals(t, s, "noscript", 3, at, 3)
}

// TestRestartWithAOFDoesNotCountTwice is the same with a real restart of a Redis that persists
// every write: the data and the sequence key survive, the script cache does not.
func TestRestartWithAOFDoesNotCountTwice(t *testing.T) {
	aof := []string{"--appendonly", "yes", "--appendfsync", "always"}
	srv := redistest.Start(t, aof...)
	proxy, rdb := faultyClient(t, srv, -1)
	s, w, at := threeCalls(t, rdb, "aof")
	proxy.Arm(nil, 2)
	if _, err := w.Flush(t.Context()); err == nil {
		t.Fatal("flush with a lost reply reported no error")
	}
	srv.Restart(t, aof...)
	flushUntilDone(t, w)
	wantTotals(t, s, "aof", 3, at, 3)
}

// TestRefusedFirstCallIsNotLost has Redis refuse the first call of a pipeline with a retryable
// error (NOREPLICAS) and accept the rest: go-redis resends the whole pipeline, and the refused
// call must be applied then, not taken for a duplicate of the calls that ran after it.
func TestRefusedFirstCallIsNotLost(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	proxy, rdb := faultyClient(t, srv, 3)
	s, w, at := threeCalls(t, rdb, "noreplicas")
	ctx := t.Context()
	direct.ConfigSet(ctx, "min-replicas-to-write", "1")
	t.Cleanup(func() { direct.ConfigSet(ctx, "min-replicas-to-write", "0") })
	proxy.Arm(func(i int) {
		if i == 1 { // the first call was refused; the replica is back for the rest
			direct.ConfigSet(ctx, "min-replicas-to-write", "0")
		}
	}, 0)
	flushUntilDone(t, w)
	if n := errorCount(t, direct, "NOREPLICAS"); n < 1 {
		t.Fatal("Redis never refused a call; the test tested nothing")
	}
	wantTotals(t, s, "noreplicas", 3, at, 3)
}

// errorCount reads how many errors of a kind Redis has answered (INFO errorstats).
func errorCount(t *testing.T, rdb redis.UniversalClient, kind string) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "errorstat_"+kind+":count=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	return n
}

// TestErrorThenCutIsNotLost has one call answered NOSCRIPT (the cache emptied, then reloaded by
// someone else before the next call), the next one run, and the connection cut before the last
// reply: go-redis resends the pipeline; every call must end up applied once.
func TestErrorThenCutIsNotLost(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	proxy, rdb := faultyClient(t, srv, 3)
	s, w, at := threeCalls(t, rdb, "cut")
	ctx := t.Context()
	proxy.Arm(func(i int) {
		switch i {
		case 1:
			direct.ScriptFlush(ctx)
		case 2:
			direct.ScriptLoad(ctx, luaSource(t, "incr_windows"))
		}
	}, 2)
	flushUntilDone(t, w)
	if errorCount(t, direct, "NOSCRIPT") < 1 || proxy.Cuts() != 1 {
		t.Fatalf("NOSCRIPT answered %d times, %d replies cut; want both faults", errorCount(t, direct, "NOSCRIPT"), proxy.Cuts())
	}
	wantTotals(t, s, "cut", 3, at, 3)
}

// TestRefusingRedisHoldsMemoryFlat keeps Redis refusing writes (NOREPLICAS) while events keep
// coming: the writer keeps one flush of calls and one entry per key, however many flushes fail,
// and writes everything once Redis accepts writes again.
func TestRefusingRedisHoldsMemoryFlat(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	_, rdb := faultyClient(t, srv, -1) // no faults injected; go-redis's retries off to keep it quick
	s := newStore(t, rdb, Options{})
	f := adRevenue(t)
	w := s.NewWriter(WriterOptions{})
	at := s.Now()
	direct.ConfigSet(t.Context(), "min-replicas-to-write", "1")
	var after10 int
	for flush := range 30 {
		for i := range 200 {
			if err := w.Add(f, []string{"flat", strconv.Itoa(i)}, 1, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Flush(t.Context()); err == nil {
			t.Fatal("a flush to a Redis refusing writes reported no error")
		}
		if flush == 9 {
			after10 = w.Pending()
		}
	}
	if w.Pending() != after10 || w.Pending() > 2*200 {
		t.Fatalf("pending %d after 30 failed flushes, %d after 10: want it flat, at most 400", w.Pending(), after10)
	}
	direct.ConfigSet(t.Context(), "min-replicas-to-write", "0")
	flushUntilDone(t, w)
	wantTotals(t, s, "flat", 200, at, 200*30)
}

// TestRandomCutsUnderConcurrentAdds cuts 2% of replies at random while six goroutines add and
// another flushes in a loop, with and without go-redis's retries.
func TestRandomCutsUnderConcurrentAdds(t *testing.T) {
	for _, retries := range []int{-1, 3} {
		t.Run("max_retries="+strconv.Itoa(retries), func(t *testing.T) {
			srv := redistest.Start(t)
			proxy, rdb := faultyClient(t, srv, retries)
			s := newStore(t, rdb, Options{})
			f := adRevenue(t)
			w := s.NewWriter(WriterOptions{KeysPerCall: 6, Lanes: 3, CallsPerPipeline: 7})
			at := s.Now()
			proxy.SetCutRate(20_000)
			var stop atomic.Bool
			var written atomic.Int64
			flusher := make(chan struct{})
			go func() {
				defer close(flusher)
				for !stop.Load() {
					res, _ := w.Flush(t.Context())
					written.Add(res.Events)
				}
			}()
			// Each adder adds at least `each` events, and goes on until the proxy has cut a few
			// replies (or a deadline passes), so the faults happen however fast adding is.
			const adders, each = 6, 5000
			var added atomic.Int64
			deadline := time.Now().Add(30 * time.Second)
			var wg sync.WaitGroup
			for g := range adders {
				wg.Go(func() {
					for i := 0; i < each || (proxy.Cuts() < 3 && time.Now().Before(deadline)); i++ {
						if err := w.Add(f, []string{"rnd", strconv.Itoa((g*7919 + i) % 300)}, 1, at); err != nil {
							t.Error(err)
							return
						}
						added.Add(1)
					}
				})
			}
			wg.Wait()
			stop.Store(true)
			<-flusher
			proxy.SetCutRate(0)
			written.Add(flushUntilDone(t, w))
			if proxy.Cuts() == 0 {
				t.Fatal("the proxy cut nothing; the test tested nothing")
			}
			if written.Load() != added.Load() {
				t.Errorf("flushes reported %d events written, want %d", written.Load(), added.Load())
			}
			wantTotals(t, s, "rnd", 300, at, added.Load())
		})
	}
}

// TestFarFutureEventIsRefused gives an event time in the wrong unit (nanoseconds taken for
// seconds): it is refused at Add, so no call can fail halfway.
func TestFarFutureEventIsRefused(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Client(t), Options{})
	w := s.NewWriter(WriterOptions{})
	at := time.Unix(1_700_000_000_000_000_000, 0)
	if err := w.Add(adRevenue(t), []string{"far", "x"}, 5, at); !errors.Is(err, ErrFuture) {
		t.Fatalf("Add: %v, want ErrFuture", err)
	}
	if _, err := s.Incr(t.Context(), adRevenue(t), []string{"far", "x"}, 5, at); !errors.Is(err, ErrFuture) {
		t.Fatalf("Incr: %v, want ErrFuture", err)
	}
	if w.Pending() != 0 {
		t.Fatal("a refused event is pending")
	}
}

// TestShortSeqTTLStillWrites asks for a sequence record shorter than a second: it is raised to a
// minute instead of breaking every call.
func TestShortSeqTTLStillWrites(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Client(t), Options{})
	w := s.NewWriter(WriterOptions{SeqTTL: 500 * time.Millisecond})
	at := s.Now()
	for range 3 {
		if err := w.Add(adRevenue(t), []string{"ttl", "0"}, 1, at); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	wantTotals(t, s, "ttl", 1, at, 3)
	if ttl := srv.Client(t).TTL(t.Context(), seqKey(w.id, 0, 0)).Val(); ttl < 50*time.Second {
		t.Fatalf("sequence key TTL %v, want about a minute", ttl)
	}
}
