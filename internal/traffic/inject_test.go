package traffic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/internal/config"
	"hourglass/internal/redistest"
	"hourglass/store"
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
	proxy.DropReplies(1 << 30) // from now on Redis runs the calls and their answers are lost
	applied := seqSum(t, admin)
	waitFor(t, "a call applied with its answer lost", func() bool { return seqSum(t, admin) > applied })
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "writer", "-evalsha").Err(); err != nil {
		t.Fatal(err)
	}
	proxy.DropReplies(-(1 << 30)) // answers come through again: the next is the refusal
	refused := time.Now()

	var res InjectResult
	select {
	case res = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("inject still running 10s after Redis refused it")
	}
	var ce *store.CommandError
	if !errors.As(res.Err, &ce) || ce.Command != "EVALSHA" || ce.User != "writer" || ce.Key == "" || time.Since(refused) > 5*time.Second {
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

// TestInjectDimsWatchContext: drawing a huge number of dims tuples stops within a second of
// ctrl+c (it allocated 4.8 GB for 100,000,000 first, deaf to SIGINT).
func TestInjectDimsWatchContext(t *testing.T) {
	srv := redistest.Start(t)
	st := realStore(t, srv.Client(t))
	f, _ := config.Builtin(redistest.Shipped(t)).Counter("flow")
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan InjectResult, 1)
	go func() { got <- Inject(ctx, st, f, InjectOptions{Events: 1, Dims: 100_000_000}) }()
	time.Sleep(20 * time.Millisecond) // let it start drawing
	cancel()
	select {
	case <-got:
	case <-time.After(time.Second):
		t.Fatal("inject drawing 100,000,000 dims tuples did not stop within 1s of ctrl+c")
	}
	done, stop := context.WithCancel(t.Context())
	stop()
	if _, err := NewGeneratorContext(done, f, MaxDims, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
}

// TestInjectEndsWithin1sOfCtrlC: replies stop coming, then the operator presses ctrl+c. Inject
// stops generating, tries what it holds for a moment, asks the records, and ends within the
// second the docs promise, saying what it could not confirm.
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
	time.Sleep(200 * time.Millisecond) // a flush is waiting for its answer
	cancel()
	stopped := time.Now()
	select {
	case res := <-got:
		if took := time.Since(stopped); took > time.Second || !strings.Contains(res.GaveUp, "ctrl+c") ||
			res.NotConfirmed+res.NotWritten == 0 || res.Problem() == nil {
			t.Fatalf("%v after ctrl+c: %s\n%v", took, res.Summary("flow"), res.Problem())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("inject still running 10s after ctrl+c")
	}
}

// waitFor polls cond until it holds, failing the test after 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 15s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
