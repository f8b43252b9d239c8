package scanner

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestWatcherKeepsASnapshotCurrent polls a real server as the console does: sweeps complete into
// snapshots, a rate waits for reads spanning enough time, the family in focus is read live, and a server that
// goes away is an error that keeps the last snapshot, then the sweep starts over.
func TestWatcherKeepsASnapshotCurrent(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	fams := families(t)
	flow := fams[0]
	now := redistest.ClearOfHourEnd(t, 30*time.Second) // the watcher's current hour stays this one
	k := key(t, flow, store.Hour, now, "app", "ios", "10.0.0.1")
	rdb.Set(ctx, k, 100, time.Hour)
	w := NewWatcher(rdb, fams, Options{Count: 100, Location: shanghai})

	pollUntilSweep := func() snapshot.Status {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := w.Poll(ctx, 50*time.Millisecond, "flow")
			if err != nil {
				t.Fatal(err)
			}
			if st.Sweep.Completed {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatal("no sweep completed")
			}
		}
	}
	st := pollUntilSweep()
	if st.Snapshot == nil || st.Snapshot.Family("flow").CurrentWindow("hour").Total != 100 || st.Snapshot.Family("flow").RatePerSec != nil {
		t.Fatalf("first snapshot: %+v", st.Snapshot.Family("flow"))
	}
	if st.Server.Version == "" || st.Server.Masters != 1 || st.Server.Err != "" {
		t.Errorf("server info %+v", st.Server)
	}

	rdb.IncrBy(ctx, k, 50) // live reads see it before the next sweep does
	st, err := w.Poll(ctx, 0, "flow")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Live) != 1 || st.Live[0].Top[0].Value != 150 || st.Snapshot.Family("flow").CurrentWindow("hour").Total != 100 {
		t.Fatalf("live %+v", st.Live)
	}
	st = pollUntilSweep()
	// Its rate is measured over at least minRateSpan of reads (TestRateOfBurstyWriters): until
	// then, none, and the note says so.
	if f := st.Snapshot.Family("flow"); f.CurrentWindow("hour").Total != 150 || f.RatePerSec != nil || !strings.HasPrefix(f.RateNote, "measuring: ") {
		t.Fatalf("second snapshot: total %d rate %v note %q", f.CurrentWindow("hour").Total, f.RatePerSec, f.RateNote)
	}

	srv.Stop()
	st, err = w.Poll(ctx, 50*time.Millisecond, "flow")
	if err == nil || st.Snapshot == nil {
		t.Fatalf("poll of a stopped server: err %v, snapshot kept %v", err, st.Snapshot != nil)
	}
	srv.Restart(t)
	rdb.Set(ctx, k, 7, time.Hour) // the restarted server has no data (no persistence): a new world
	st = pollUntilSweep()
	if got := st.Snapshot.Family("flow").CurrentWindow("hour").Total; got != 7 {
		t.Fatalf("after the restart the snapshot says %d, want 7", got)
	}
}

// TestMastersChangedRestartsTheSweep fails a master over between two slices of a sweep, after
// that master was swept to its end: the replica it hands its slots to holds the same keys, so the
// sweep must start over rather than scan it from the beginning and count its keys twice.
func TestMastersChangedRestartsTheSweep(t *testing.T) {
	cl := redistest.StartClusterReplicas(t, 3, 1)
	cc := cl.Client(t)
	ctx := t.Context()

	// The master that Failover will hand over: the one replicating to the first replica listed.
	var failing string
	for _, addr := range cl.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		role, err := n.Do(ctx, "ROLE").Slice()
		n.Close()
		if err == nil && len(role) > 2 && role[0] == "slave" {
			failing = net.JoinHostPort(fmt.Sprint(role[1]), fmt.Sprint(role[2]))
			break
		}
	}
	if failing == "" {
		t.Fatal("no replica found")
	}
	// A few keys on that master, so a sweep finishes it at once; many on another, so the
	// sweep is still under way when the failover comes.
	var few, many int
	var onFailing string
	for i := 0; few < 20 || many < 5000; i++ {
		key := fmt.Sprintf("{k%d}:x", i)
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		switch addr := m.Options().Addr; {
		case addr == failing && few < 20:
			few++
			onFailing = key
		case addr != failing && many < 5000:
			many++
		default:
			continue
		}
		if err := cc.Set(ctx, key, 1, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}

	s := New(cc, families(t), Options{Count: 100, KeysPerSecond: 1000})
	seen := 0
	visit := func(p Page) { seen += p.Seen }
	for deadline := time.Now().Add(20 * time.Second); !s.done[failing]; {
		if err := s.RunUntil(ctx, time.Now().Add(100*time.Millisecond), visit); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failing master was not swept to its end in time (%d keys seen)", seen)
		}
	}
	if s.Done() {
		t.Fatalf("the sweep ended (%d keys seen) before the failover; the test would test nothing", seen)
	}
	if cl.Failover(t) == "" {
		t.FailNow()
	}
	redistest.Eventually(t, "the client to see the promoted master", 20*time.Second, func() bool {
		cc.ReloadState(ctx)
		m, err := cc.MasterForKey(ctx, onFailing)
		return err == nil && m.Options().Addr != failing
	})
	// The client may still route by a map it read from a node that had not yet heard of the
	// failover; slices on that map scan only the old masters, which is sound. The first slice
	// that lists the promoted master must stop the sweep rather than scan it.
	var err error
	redistest.Eventually(t, "a slice to see the promoted master", 20*time.Second, func() bool {
		cc.ReloadState(ctx)
		err = s.RunUntil(ctx, time.Now().Add(100*time.Millisecond), visit)
		return err != nil || s.Done()
	})
	if !errors.Is(err, ErrMastersChanged) {
		t.Fatalf("a slice after the failover: %v (%d keys seen of %d), want ErrMastersChanged", err, seen, few+many)
	}
	if seen > few+many {
		t.Fatalf("%d keys seen of %d: the promoted master was scanned", seen, few+many)
	}
}
