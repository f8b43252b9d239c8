package scanner

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// fillFlow writes n flow counters of value 1 in the current hour, and returns their sum.
func fillFlow(t *testing.T, rdb redis.UniversalClient, n int) int64 {
	t.Helper()
	f := families(t)[0]
	hour := time.Now().In(shanghai)
	pipe := rdb.Pipeline()
	for i := range n {
		pipe.Set(t.Context(), key(t, f, store.Hour, hour, "app", "dev", fmt.Sprint(i)), "1", time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	return int64(n)
}

// sumFlow sweeps rdb with opt and adds up the flow keys' values.
func sumFlow(t *testing.T, rdb redis.UniversalClient, opt Options) (int64, error) {
	var sum int64
	opt.Location, opt.Count = shanghai, 50
	err := New(rdb, families(t)[:1], opt).Run(t.Context(), func(p Page) {
		for _, k := range p.Keys {
			if k.Value == "1" {
				sum++
			}
		}
	})
	return sum, err
}

// Replies lost on the way are ridden out: the sweep resumes where it was, each fault is
// reported while it lasts, and the total is exact.
func TestRetryRidesOutLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	want := fillFlow(t, srv.Client(t), 2000)
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })

	var faults atomic.Int64
	opt := Options{Retry: &Retry{Report: func(err error, wait time.Duration) {
		if store.ClassOf(err) != store.ClassTransient || wait <= 0 {
			t.Errorf("reported %v (class %v) with wait %v", err, store.ClassOf(err), wait)
		}
		faults.Add(1)
	}}}
	proxy.SetCutRate(20_000) // one reply in 50
	got, err := sumFlow(t, rdb, opt)
	if err != nil {
		t.Fatalf("sweep ended on %v after %d faults", err, faults.Load())
	}
	if faults.Load() == 0 || proxy.Cuts() == 0 {
		t.Errorf("%d faults reported for %d cuts", faults.Load(), proxy.Cuts())
	}
	if got != want {
		t.Errorf("summed %d after %d faults, want %d", got, faults.Load(), want)
	}
}

// restartOnceScanning restarts srv (its data kept) as soon as a SCAN has reached it.
func restartOnceScanning(t *testing.T, srv *redistest.Server, args ...string) <-chan struct{} {
	done := make(chan struct{})
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	go func() {
		defer close(done)
		defer admin.Close()
		scanned := redistest.Until(20*time.Second, func() bool {
			stats, err := admin.Info(t.Context(), "commandstats").Result()
			return err == nil && strings.Contains(stats, "cmdstat_scan:")
		})
		if !scanned {
			t.Error("no SCAN reached the server")
			return
		}
		srv.Restart(t, args...)
	}()
	return done
}

// A restart under a sweep, even one the client's own retries hide, is caught by the server's new
// run_id: Run says so, since its cursor means nothing to the new process, and Take starts over
// and counts every key once.
func TestARestartStartsTheSweepOver(t *testing.T) {
	persist := []string{"--appendonly", "yes", "--appendfsync", "always"}
	srv := redistest.Start(t, persist...)
	want := fillFlow(t, srv.Client(t), 2000)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr}) // go-redis's own retries on
	t.Cleanup(func() { _ = rdb.Close() })
	opt := Options{KeysPerSecond: 1000, Location: shanghai, Count: 50, Retry: &Retry{}}

	restarted := restartOnceScanning(t, srv, persist...)
	err := New(rdb, families(t)[:1], opt).Run(t.Context(), func(Page) {})
	<-restarted
	if !errors.Is(err, ErrRestarted) {
		t.Fatalf("a sweep across a restart ended with %v, want ErrRestarted", err)
	}

	srv.Client(t).ConfigResetStat(t.Context())
	restarted = restartOnceScanning(t, srv, persist...)
	snap, err := Take(t.Context(), rdb, families(t)[:1], opt)
	<-restarted
	if err != nil {
		t.Fatal(err)
	}
	if f := snap.Family("flow"); f == nil || f.Keys != want || !snap.Scan.Complete {
		t.Errorf("Take across a restart: %+v, complete %v; want %d keys", f, snap.Scan.Complete, want)
	}
}

// A server that stays down ends the sweep once no page has got through for GiveUp.
func TestRetryGivesUp(t *testing.T) {
	srv := redistest.Start(t)
	fillFlow(t, srv.Client(t), 10)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	srv.Stop()
	start := time.Now()
	reports := 0
	_, err := sumFlow(t, rdb, Options{Retry: &Retry{GiveUp: 1500 * time.Millisecond, Report: func(error, time.Duration) { reports++ }}})
	took := time.Since(start)
	var gave *GaveUpError
	if !errors.As(err, &gave) {
		t.Fatalf("got %v, want a GaveUpError", err)
	}
	// Not before GiveUp (it keeps trying that long), and within ten times it: a liveness bound.
	if took < 1500*time.Millisecond || took > 15*time.Second || reports < 2 {
		t.Errorf("gave up after %v and %d reports; want 1.5 s to 15 s and at least 2", took, reports)
	}
}

// A refusal is not retried: the sweep ends with no retry reported, naming the command and the user.
func TestRetryEndsOnARefusal(t *testing.T) {
	srv := redistest.Start(t)
	fillFlow(t, srv.Client(t), 10)
	if err := srv.Client(t).Do(t.Context(), "ACL", "SETUSER", "noscan", "on", ">pw", "~*", "+@all", "-scan").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "noscan", Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	start := time.Now()
	_, err := sumFlow(t, rdb, Options{Retry: &Retry{Report: func(err error, _ time.Duration) { t.Errorf("retried %v", err) }}})
	var ce *store.CommandError
	if !errors.As(err, &ce) || ce.Command != "SCAN" || ce.User != "noscan" || store.Refused(err) != "scan" {
		t.Fatalf("got %v, want SCAN refused to noscan", err)
	}
	// Report above fails the test on any retry; the bound is liveness only, ten times the second
	// the docs give a refusal to end a command in.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a refusal took %v to end the sweep", took)
	}
}
