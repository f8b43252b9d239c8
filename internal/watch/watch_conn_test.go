package watch

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// The watcher's status says what a Poll found: a SCAN the ACL refuses is Denied (permanent,
// naming "scan"), a stopped server Unreachable (transient), each with since when, and the last
// sweep's time stays; Connected once the fault passes.
func TestWatcherTellsFaultsApart(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">pw", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "watcher", Password: "pw", MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	w := New(rdb, families(t), scanner.Options{Count: 100, Location: shanghai})

	st, err := w.Poll(ctx, 50*time.Millisecond, "")
	if err != nil || !st.Sweep.Completed || st.Conn.Condition != snapshot.Connected || st.Conn.LastSweep.IsZero() {
		t.Fatalf("first poll: %v, conn %+v", err, st.Conn)
	}
	swept := st.Conn.LastSweep

	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "-scan").Err(); err != nil {
		t.Fatal(err)
	}
	st, err = w.Poll(ctx, 50*time.Millisecond, "")
	c := st.Conn
	if err == nil || c.Condition != snapshot.Denied || c.Refused != "scan" || c.Class != store.ClassPermanent || c.Err == nil {
		t.Fatalf("a refused SCAN: %v, conn %+v", err, c)
	}
	if c.Since.IsZero() || !c.LastSweep.Equal(swept) {
		t.Errorf("a refused SCAN: since %v, last sweep %v (want %v)", c.Since, c.LastSweep, swept)
	}
	since := c.Since
	if st, _ = w.Poll(ctx, 50*time.Millisecond, ""); !st.Conn.Since.Equal(since) {
		t.Errorf("the refusal's start moved from %v to %v on the next poll", since, st.Conn.Since)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "+scan").Err(); err != nil {
		t.Fatal(err)
	}
	if st, err = w.Poll(ctx, 50*time.Millisecond, ""); err != nil || st.Conn.Condition != snapshot.Connected || st.Conn.Err != nil {
		t.Fatalf("the right given back: %v, conn %+v", err, st.Conn)
	}

	srv.Stop()
	st, err = w.Poll(ctx, 50*time.Millisecond, "")
	if c := st.Conn; err == nil || c.Condition != snapshot.Unreachable || c.Class != store.ClassTransient || c.Since.IsZero() {
		t.Fatalf("a stopped server: %v, conn %+v", err, c)
	}
}

// A Poll that runs out of time is Unreachable (no answer came in time), not a cancellation of the
// console's own.
func TestWatcherPollOutOfTimeIsUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	w := New(rdb, families(t), scanner.Options{Count: 100, Location: shanghai})
	proxy.SetDelay(time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	st, err := w.Poll(ctx, 10*time.Millisecond, "")
	if c := st.Conn; err == nil || c.Condition != snapshot.Unreachable || c.Class != store.ClassTransient {
		t.Fatalf("a poll out of time: %v, conn %+v", err, c)
	}
}

// The late rule counts only the time Polls spent on a sweep: three times the last sweep's, at
// least MinLate; a pause between Polls is not sweeping. Before a first sweep completes, it is
// MinLate of Polls with no key seen.
func TestSweepLateRule(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	h := &connTrack{now: func() time.Time { return now }}
	late := func() bool { return h.status(context.Background(), nil).Condition == snapshot.Late }

	h.began()
	for i := range 19 { // a first sweep that sees keys is never late, however long it takes
		h.polled(time.Second, int64(i+1))
	}
	if late() {
		t.Error("a first sweep that keeps seeing keys was called late")
	}
	h.polled(MinLate/2, 19)
	h.polled(MinLate/2+time.Millisecond, 19)
	if !late() {
		t.Error("a first sweep that saw no key for MinLate of polls is not late")
	}

	h.completed(time.Second - time.Millisecond) // the first sweep took 30 s of polls
	h.began()
	now = now.Add(time.Hour) // a pause: no poll, no sweeping
	h.polled(80*time.Second, 10)
	if c := h.status(context.Background(), nil); c.Condition != snapshot.Connected || c.LateAfter != 90*time.Second {
		t.Errorf("80 s into a sweep whose last took 30 s: %+v", c)
	}
	h.polled(11*time.Second, 20)
	if c := h.status(context.Background(), nil); c.Condition != snapshot.Late || !c.Since.Equal(now) {
		t.Errorf("91 s into a sweep whose last took 30 s: %+v", c)
	}

	h.completed(0) // a quick sweep: 91 s; then quick ones
	h.began()
	h.completed(20 * time.Millisecond)
	h.began()
	h.polled(9*time.Second, 0)
	if late() {
		t.Error("a sweep whose last took 20 ms was late before MinLate")
	}
	h.polled(2*time.Second, 0)
	if !late() {
		t.Error("a sweep whose last took 20 ms was not late after MinLate")
	}
}

// The live reads' moves count from the last sweep completed before the Poll: on a keyspace a
// Poll sweeps whole, the sweep before it, so values that climbed between two sweeps show it.
func TestLiveMovesCountFromTheSweepBefore(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	k := key(t, families(t)[0], store.Hour, now, "app", "ios", "10.0.0.1")
	rdb.Set(ctx, k, 100, time.Hour)
	w := New(rdb, families(t), scanner.Options{Count: 100, Location: shanghai})
	st, err := w.Poll(ctx, time.Second, "flow")
	if err != nil || !st.Sweep.Completed || len(st.Live) != 1 || len(st.Live[0].Moved) != 1 {
		t.Fatalf("first poll: %v, live %+v", err, st.Live)
	}
	if m := st.Live[0].Moved[0]; m.Known || !st.Live[0].SweptAt.IsZero() {
		t.Errorf("no sweep before the first, yet a move is known: %+v", st.Live[0])
	}
	first := st.Snapshot.TakenAt
	rdb.IncrBy(ctx, k, 300)
	st, err = w.Poll(ctx, time.Second, "flow")
	if err != nil || !st.Sweep.Completed {
		t.Fatalf("second poll: %v, completed %v", err, st.Sweep.Completed)
	}
	lw := st.Live[0]
	if lw.Top[0].Value != 400 || lw.Moved[0] != (snapshot.Moved{By: 300, Known: true}) || !lw.SweptAt.Equal(first) {
		t.Errorf("after +300 between two sweeps: value %d, moved %+v since %v (want since %v)", lw.Top[0].Value, lw.Moved[0], lw.SweptAt, first)
	}
	st, _ = w.Poll(ctx, time.Second, "flow")
	if m := st.Live[0].Moved[0]; m != (snapshot.Moved{By: 0, Known: true}) {
		t.Errorf("nothing moved since the last sweep, yet %+v", m)
	}
}
