package watch

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// flowTotal is the flow family's total over its windows in snap, and its keys.
func flowTotal(snap *snapshot.Snapshot) (total, keys int64) {
	f := snap.Family("flow")
	if f == nil {
		return 0, 0
	}
	for _, w := range f.Windows {
		total += w.Total
	}
	return total, f.Keys
}

// A Watcher through Sentinel follows the primary through a SENTINEL FAILOVER and a killed
// primary: its Status names the new primary and when the failover was seen, the last figures
// stay on while a new sweep runs, and that sweep, on the new primary, counts what was written.
func TestWatcherFollowsFailover(t *testing.T) {
	s := redistest.StartSentinels(t, 2, 3, "")
	tg, err := store.ParseTarget([]string{"redis-sentinel://" + strings.Join(s.Addrs, ",") + "/" + s.Master}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rdb := tg.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	primary := s.Node(t, s.Primary(t)).Client(t)
	f := families(t)[0]
	at := time.Now()
	const n = 300
	for i := range n {
		if err := primary.Set(ctx, key(t, f, store.Hour, at, "app", strconv.Itoa(i), "ip"), 7, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	w := New(rdb, families(t), scanner.Options{Count: 50, Location: shanghai})
	poll := func() snapshot.Status {
		st, _ := w.Poll(ctx, 50*time.Millisecond, "")
		return st
	}
	var st snapshot.Status
	redistest.Eventually(t, "a first sweep", 10*time.Second, func() bool { st = poll(); return st.Snapshot != nil })
	if total, keys := flowTotal(st.Snapshot); total != 7*n || keys != n {
		t.Fatalf("first sweep: total %d over %d keys, want %d over %d", total, keys, 7*n, n)
	}
	if st.Conn.Primary != s.Primary(t) || !st.Conn.FailoverAt.IsZero() {
		t.Fatalf("before a failover: primary %q, failover at %v; want %s and none", st.Conn.Primary, st.Conn.FailoverAt, s.Primary(t))
	}
	for _, how := range []struct {
		name string
		do   func(testing.TB) string
	}{{"SENTINEL FAILOVER", s.Failover}, {"the primary killed", s.KillPrimary}} {
		before := st.Snapshot
		moved := how.do(t)
		began := time.Now()
		redistest.Eventually(t, "the Watcher to reach "+moved+" after "+how.name, 30*time.Second, func() bool {
			st = poll()
			return st.Conn.Primary == moved && !st.Conn.FailoverAt.IsZero()
		})
		t.Logf("%s: the Watcher reached %s %v after the Sentinels agreed", how.name, moved, time.Since(began).Round(time.Millisecond))
		if st.Snapshot == nil || st.Snapshot.TakenAt.Before(before.TakenAt) {
			t.Fatalf("%s: the last figures are gone", how.name)
		}
		redistest.Eventually(t, "a sweep on "+moved, 30*time.Second, func() bool {
			st = poll()
			return st.Sweep.Completed && st.Conn.Primary == moved && st.Conn.Err == nil
		})
		if total, keys := flowTotal(st.Snapshot); total != 7*n || keys != n {
			t.Fatalf("%s: the sweep on %s counts %d over %d keys, want %d over %d", how.name, moved, total, keys, 7*n, n)
		}
	}
}
