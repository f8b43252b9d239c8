package traffic

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// realStore is a store over rdb in UTC, its clock measured.
func realStore(t *testing.T, rdb redis.UniversalClient) *store.Store {
	t.Helper()
	st := store.New(rdb, store.Options{Location: time.UTC})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// dayTotal sums today's day windows of f over the first dims tuples, read directly.
func dayTotal(t *testing.T, st *store.Store, f *store.Family, dims int) int64 {
	t.Helper()
	vals, err := st.GetMany(t.Context(), f, store.Day, NewGenerator(f, dims, 1).Tuples(), st.Now())
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, v := range vals {
		total += v.Value
	}
	return total
}

// seqSum adds up every writer's sequence records: it grows with each call Redis applies.
func seqSum(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	var sum int64
	iter := rdb.Scan(t.Context(), 0, "hourglass:seq:*", 100).Iterator()
	for iter.Next(t.Context()) {
		n, _ := rdb.Get(t.Context(), iter.Val()).Int64()
		sum += n
	}
	return sum
}

// TestInjectConfirmsLostAnswersByRecord: Redis applies calls whose answers are lost on the way
// back, then the user's right to run the script is revoked. Inject ends at once on the refusal,
// naming EVALSHA, a key and the user, and asks the sequence records about the calls whose
// answer never came: those Redis applied are counted written ("confirmed by their record"), not
// reported as lost, so the events inject reports are exactly what Redis holds.
func TestInjectConfirmsLostAnswersByRecord(t *testing.T) {
	redistest.ClearOfHourEnd(t, time.Minute)
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "writer", "on", ">pw", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, Username: "writer", Password: "pw", ReadTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	st := realStore(t, rdb)
	f, _ := config.Builtin(redistest.Shipped(t)).Counter("ad_revenue")

	got := make(chan InjectResult, 1)
	go func() {
		got <- Inject(t.Context(), st, f, InjectOptions{Duration: 2 * time.Minute, Rate: 2000, Dims: 20, GiveUp: 20 * time.Second})
	}()
	waitFor(t, "inject to write", func() bool { return admin.DBSize(t.Context()).Val() > 0 })
	before := seqSum(t, admin)
	proxy.DropReplies(1 << 30) // from now on Redis runs the calls and their answers are lost
	after, dropped := seqSum(t, admin), time.Now()
	waitFor(t, "a call applied with its answer lost", func() bool {
		// A call applied since the drop lost its answer. So did one applied as the drop began
		// when inject, waiting on its answer (its read timeout is a second), sends nothing more.
		n := seqSum(t, admin)
		return n > after || n > before && time.Since(dropped) > 2*time.Second
	})
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "writer", "-evalsha").Err(); err != nil {
		t.Fatal(err)
	}
	proxy.DropReplies(-(1 << 30)) // answers come through again: the next is the refusal
	refused := time.Now()

	var res InjectResult
	select {
	case res = <-got:
	case <-time.After(10 * time.Second): // liveness: ten times the second a refusal ends inject in
		t.Fatal("inject still running 10s after Redis refused it")
	}
	var ce *store.CommandError
	if !errors.As(res.Err, &ce) || ce.Command != "EVALSHA" || ce.User != "writer" || ce.Key == "" {
		t.Fatalf("after %v: error %v; want EVALSHA's refusal naming a key and the user", time.Since(refused), res.Err)
	}
	if res.ConfirmedByRecord == 0 || !strings.Contains(res.Problem().Error(), "confirmed by their sequence record") {
		t.Fatalf("no pair confirmed by its record: %+v\n%v", res, res.Problem())
	}
	if total := dayTotal(t, realStore(t, admin), f, 20); total != res.Events {
		t.Fatalf("Redis holds %d events; inject reported %d written (%s)", total, res.Events, res.Summary(f.Name()))
	}
	t.Logf("%s\n%v", res.Summary(f.Name()), res.Problem())
}

// TestInjectHugeRateEnds: a rate far past what an int64 of events holds (1e300) is a ceiling
// like any other: the events asked for are written, and inject ends (it drew nothing and ran on
// forever).
func TestInjectHugeRateEnds(t *testing.T) {
	srv := redistest.Start(t)
	st := realStore(t, srv.Client(t))
	f, _ := config.Builtin(redistest.Shipped(t)).Counter("flow")
	got := make(chan InjectResult, 1)
	go func() { got <- Inject(t.Context(), st, f, InjectOptions{Events: 5000, Rate: 1e300, Dims: 10}) }()
	select {
	case res := <-got:
		if res.Events != 5000 || res.Problem() != nil {
			t.Fatalf("%s: %v", res.Summary("flow"), res.Problem())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("inject at a rate of 1e300 still running after 10s")
	}
}

// TestInjectDimsWatchContext: drawing a huge number of dims tuples stops at the next look at the
// context once ctrl+c comes (it allocated 4.8 GB for 100,000,000 first, deaf to SIGINT). The
// context ends itself at the drawing's third look, so ctrl+c comes with 8,192 tuples drawn and
// hundreds of looks to go: the drawing must stop right there, and inject must write nothing.
func TestInjectDimsWatchContext(t *testing.T) {
	srv := redistest.Start(t)
	st := realStore(t, srv.Client(t))
	f, _ := config.Builtin(redistest.Shipped(t)).Counter("flow")
	ctx := newEndsAtLook(t.Context(), 3)
	got := make(chan InjectResult, 1)
	go func() { got <- Inject(ctx, st, f, InjectOptions{Events: 1, Dims: 100_000_000}) }()
	select {
	case res := <-got:
		// 3 or 4 looks: the one that sees ctrl+c may be followed by one for the error it returns.
		if looks := ctx.looks.Load(); looks < 3 || looks > 4 || res.Events != 0 {
			t.Fatalf("ctrl+c at the drawing's third look: it looked %d times (want 3 or 4: it stops at once) "+
				"and wrote %d events (want 0)", looks, res.Events)
		}
	case <-time.After(10 * time.Second): // liveness: ten times the second ctrl+c is promised in
		t.Fatalf("inject drawing dims tuples still running 10s after ctrl+c (%d looks at the context)", ctx.looks.Load())
	}
	if n := srv.Client(t).DBSize(t.Context()).Val(); n != 0 {
		t.Errorf("inject stopped while drawing wrote %d keys", n)
	}
	done, stop := context.WithCancel(t.Context())
	stop()
	if _, err := NewGeneratorContext(done, f, MaxDims, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
}

// endsAtLook is a context that is cancelled by its own at-th call of Err: ctrl+c pressed at a
// known point of a loop that looks at its context, rather than after some time.
type endsAtLook struct {
	context.Context
	cancel context.CancelFunc
	at     int64
	looks  atomic.Int64
}

func newEndsAtLook(parent context.Context, at int64) *endsAtLook {
	ctx, cancel := context.WithCancel(parent)
	return &endsAtLook{Context: ctx, cancel: cancel, at: at}
}

func (c *endsAtLook) Err() error {
	if c.looks.Add(1) == c.at {
		c.cancel()
	}
	return c.Context.Err()
}

// TestInjectEndsWithin1sOfCtrlC: replies stop coming, then the operator presses ctrl+c while a
// flush waits for its answer. Inject stops generating, tries what it holds for a moment, asks the
// records, and ends, saying what it could not confirm. The docs promise a second; the bound here
// is ten times that, a liveness bound.
func TestInjectEndsWithin1sOfCtrlC(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	st := realStore(t, rdb)
	f, _ := config.Builtin(redistest.Shipped(t)).Counter("flow")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan InjectResult, 1)
	go func() { got <- Inject(ctx, st, f, InjectOptions{Duration: 2 * time.Minute, Rate: 2000, Dims: 20}) }()
	waitFor(t, "inject to write", func() bool { return srv.Client(t).DBSize(t.Context()).Val() > 0 })
	proxy.SetDelay(time.Hour)
	waitFor(t, "a flush to wait for its held answer", func() bool { return proxy.Held() > 0 })
	cancel()
	stopped := time.Now()
	select {
	case res := <-got:
		if !strings.Contains(res.GaveUp, "ctrl+c") || res.NotConfirmed+res.NotWritten == 0 || res.Problem() == nil {
			t.Fatalf("%v after ctrl+c: %s\n%v", time.Since(stopped), res.Summary("flow"), res.Problem())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("inject still running 10s after ctrl+c, ten times the second the docs promise")
	}
}

// waitFor polls cond until it holds, failing the test after 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, what, 15*time.Second, cond)
}
