package watch

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// staticReplicas are replicas given by address, as [redis] replica_addrs gives them.
type staticReplicas []string

func (s staticReplicas) Candidates(context.Context) ([]string, error) { return s, nil }
func (s staticReplicas) Client(addr string) redis.UniversalClient {
	return redis.NewClient(&redis.Options{Addr: addr})
}

// writeFlow writes n flow keys of value 7 in the current hour on c.
func writeFlow(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	f := families(t)[0]
	at := time.Now()
	pipe := c.Pipeline()
	for i := range n {
		pipe.Set(t.Context(), key(t, f, store.Hour, at, "app", strconv.Itoa(i), "ip"), 7, time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// sweepOnce polls w until a sweep completes and a few Polls with the flow family in focus
// have run its live reads, and returns the last Status.
func sweepOnce(t *testing.T, w *Watcher) snapshot.Status {
	t.Helper()
	var st snapshot.Status
	redistest.Eventually(t, "a sweep", 20*time.Second, func() bool {
		st, _ = w.Poll(t.Context(), 50*time.Millisecond, "flow")
		return st.Snapshot != nil
	})
	for range 3 {
		var err error
		if st, err = w.Poll(t.Context(), 50*time.Millisecond, "flow"); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// calls are the calls of each command the server at c has run since its last CONFIG RESETSTAT.
func calls(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	text, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for name, s := range store.ParseCommandStats(text) {
		out[name] = s.Calls
	}
	return out
}

// With a replica to read from, the sweep, its last step's reads and the live reads go to it:
// the primary runs no SCAN, PTTL, MGET or GET of the Watcher's (its INFO commandstats, reset
// before), the replica runs them, and the figures equal those of a sweep of the primary.
func TestReplicaSweepSparesPrimary(t *testing.T) {
	p := redistest.Start(t)
	r := redistest.StartReplica(t, p)
	pc, rc := p.Client(t), r.Client(t)
	const n = 400
	writeFlow(t, pc, n)
	redistest.WaitCaughtUp(t, p, r)
	opt := scanner.Options{Count: 50, Location: shanghai}

	onPrimary := sweepOnce(t, New(pc, families(t), opt))
	if onPrimary.Conn.Reads != nil {
		t.Fatalf("a Watcher told of no replica says it reads from one: %+v", onPrimary.Conn.Reads)
	}
	for _, c := range []*redis.Client{pc, rc} {
		if err := c.ConfigResetStat(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	w := New(pc, families(t), opt)
	w.ReadFrom(staticReplicas{r.Addr})
	onReplica := sweepOnce(t, w)

	if rs := onReplica.Conn.Reads; rs == nil || rs.Replica != r.Addr || len(rs.Left) > 0 {
		t.Fatalf("reads %+v, want from replica %s with none left", rs, r.Addr)
	}
	primary, replica := calls(t, pc), calls(t, rc)
	for _, cmd := range []string{"scan", "pttl", "mget", "get"} {
		if primary[cmd] != 0 {
			t.Errorf("the primary ran %d %s calls with the reads on a replica", primary[cmd], strings.ToUpper(cmd))
		}
	}
	if replica["scan"] == 0 || replica["mget"] == 0 {
		t.Errorf("the replica ran scan %d, mget %d: the sweep did not read it", replica["scan"], replica["mget"])
	}
	wantTotal, wantKeys := flowTotal(onPrimary.Snapshot)
	if wantTotal != 7*n || wantKeys != n {
		t.Fatalf("primary sweep: total %d over %d keys, want %d over %d", wantTotal, wantKeys, 7*n, n)
	}
	if total, keys := flowTotal(onReplica.Snapshot); total != wantTotal || keys != wantKeys {
		t.Errorf("replica sweep: total %d over %d keys, primary sweep's %d over %d", total, keys, wantTotal, wantKeys)
	}
	if a, b := onPrimary.Snapshot.Scan.KeysSeen, onReplica.Snapshot.Scan.KeysSeen; a != b {
		t.Errorf("keys seen: primary sweep %d, replica sweep %d", a, b)
	}
}

// A replica promoted (REPLICAOF NO ONE) is left for the next one, and one whose link is cut
// (pointed at a port nobody listens on) for the primary, said in the Status; each move starts
// a sweep that counts every key again.
func TestReplicaLeftWhenPromotedOrCut(t *testing.T) {
	p := redistest.Start(t)
	r1, r2 := redistest.StartReplica(t, p), redistest.StartReplica(t, p)
	pc := p.Client(t)
	const n = 200
	writeFlow(t, pc, n)
	redistest.WaitCaughtUp(t, p, r1)
	redistest.WaitCaughtUp(t, p, r2)
	w := New(pc, families(t), scanner.Options{Count: 50, Location: shanghai})
	w.ReadFrom(staticReplicas{r1.Addr, r2.Addr})
	st := sweepOnce(t, w)
	if st.Conn.Reads.Replica != r1.Addr {
		t.Fatalf("reads from %q, want the first replica %s", st.Conn.Reads.Replica, r1.Addr)
	}

	if err := r1.Client(t).Do(t.Context(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	st = sweepAgain(t, w, n)
	st = sweepAgain(t, w, n) // the replica left stays named while the next one passes
	if rs := st.Conn.Reads; rs.Replica != r2.Addr || !slices.Contains(rs.Left, r1.Addr+" promoted") {
		t.Fatalf("after the first replica's promotion: reads %+v, want from %s with %s left as a primary", rs, r2.Addr, r1.Addr)
	}

	dead := redistest.Start(t)
	host, port, _ := strings.Cut(dead.Addr, ":")
	dead.Stop()
	if err := r2.Client(t).ReplicaOf(t.Context(), host, port).Err(); err != nil {
		t.Fatal(err)
	}
	st = sweepAgain(t, w, n)
	rs := st.Conn.Reads
	if rs.Replica != "" || len(rs.Left) != 2 || !slices.Contains(rs.Left, r2.Addr+" link down") || !slices.Contains(rs.Left, r1.Addr+" promoted") {
		t.Fatalf("after the second replica's link is cut: reads %+v, want on the primary with both left", rs)
	}
}

// sweepAgain polls w until a sweep begun after this call completes, and checks it counted
// the n flow keys.
func sweepAgain(t *testing.T, w *Watcher, n int64) snapshot.Status {
	t.Helper()
	since := time.Now()
	var st snapshot.Status
	redistest.Eventually(t, "a new sweep", 20*time.Second, func() bool {
		st, _ = w.Poll(t.Context(), 50*time.Millisecond, "")
		return st.Snapshot != nil && st.Sweep.Started.After(since) && st.Snapshot.TakenAt.After(since)
	})
	if total, keys := flowTotal(st.Snapshot); total != 7*n || keys != n {
		t.Fatalf("sweep after the move: total %d over %d keys, want %d over %d", total, keys, 7*n, n)
	}
	return st
}

// A replica behind the primary by more than MaxReplicaLag is left: its offset is short of
// one the primary had more than that long ago.
func TestReplicaBehindIsLeft(t *testing.T) {
	p := redistest.Start(t)
	r := redistest.StartReplica(t, p)
	rc := r.Client(t)
	st, err := store.ReadReplicaState(t.Context(), rc)
	if err != nil || st.Role != "slave" || !st.LinkUp {
		t.Fatalf("replica state %+v, %v; want a replica with its link up", st, err)
	}
	now := time.Now()
	rr := &replicaReads{left: map[string]string{}}
	rr.offsets = []offsetAt{{now.Add(-15 * time.Second), st.Offset + 1000}, {now, st.Offset + 2000}}
	if why := rr.check(t.Context(), rc, now); why != "15s behind" {
		t.Errorf("15 s behind: %q", why)
	}
	rr.offsets = []offsetAt{{now.Add(-15 * time.Second), st.Offset}, {now.Add(-5 * time.Second), st.Offset + 1000}}
	if why := rr.check(t.Context(), rc, now); why != "" || rr.lag != 5*time.Second {
		t.Errorf("5 s behind: %q, lag %v; want kept, 5s", why, rr.lag)
	}
}

// sentinelReplicas are the replicas the Sentinels of tg list up, as the console finds them.
type sentinelReplicas struct{ tg store.Target }

func (s sentinelReplicas) Candidates(ctx context.Context) ([]string, error) {
	return store.SentinelReplicas(ctx, s.tg)
}
func (s sentinelReplicas) Client(addr string) redis.UniversalClient { return s.tg.ReplicaClient(addr) }

// Through Sentinel the reads go to a replica the Sentinels list: the primary runs no SCAN,
// PTTL or MGET; that replica promoted by hand, they move to the other.
func TestSentinelReplicaReads(t *testing.T) {
	s := redistest.StartSentinels(t, 2, 1, "")
	tg, err := store.ParseTarget([]string{"redis-sentinel://" + strings.Join(s.Addrs, ",") + "/" + s.Master}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rdb := tg.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	p := s.Node(t, s.Primary(t))
	pc := p.Client(t)
	const n = 300
	writeFlow(t, pc, n)
	for _, r := range s.Nodes[1:] {
		redistest.WaitCaughtUp(t, p, r)
	}
	if err := pc.ConfigResetStat(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	w := New(rdb, families(t), scanner.Options{Count: 50, Location: shanghai})
	w.ReadFrom(sentinelReplicas{tg})
	st := sweepOnce(t, w)
	first := st.Conn.Reads.Replica
	if first != s.Nodes[1].Addr && first != s.Nodes[2].Addr {
		t.Fatalf("reads from %q, want one of the replicas %s, %s", first, s.Nodes[1].Addr, s.Nodes[2].Addr)
	}
	if total, keys := flowTotal(st.Snapshot); total != 7*n || keys != n {
		t.Fatalf("replica sweep: total %d over %d keys, want %d over %d", total, keys, 7*n, n)
	}
	primary := calls(t, pc)
	for _, cmd := range []string{"scan", "pttl", "mget", "get"} {
		if primary[cmd] != 0 {
			t.Errorf("the primary ran %d %s calls with the reads on a replica", primary[cmd], strings.ToUpper(cmd))
		}
	}
	if err := s.Node(t, first).Client(t).Do(t.Context(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	st = sweepAgain(t, w, n)
	if rs := st.Conn.Reads; rs.Replica == "" || rs.Replica == first || !slices.Contains(rs.Left, first+" promoted") {
		t.Fatalf("after %s's promotion: reads %+v, want from the other replica with it left", first, rs)
	}
}
