package scanner

import (
	"testing"
	"time"

	"hourglass/internal/redistest"
	"hourglass/store"
)

// TestWatcherKeepsASnapshotCurrent polls a real server as the console does: sweeps complete into
// snapshots, rates come from the one before, the family in focus is read live, and a server that
// goes away is an error that keeps the last snapshot, then the sweep starts over.
func TestWatcherKeepsASnapshotCurrent(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	fams := families(t)
	flow := fams[0]
	now := time.Now()
	k := key(t, flow, store.Hour, now, "app", "ios", "10.0.0.1")
	rdb.Set(ctx, k, 100, time.Hour)
	w := NewWatcher(rdb, fams, Options{Count: 100, Location: shanghai}, SnapshotOptions{Location: shanghai})

	pollUntilSweep := func() Status {
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
	if f := st.Snapshot.Family("flow"); f.CurrentWindow("hour").Total != 150 || f.RatePerSec == nil || *f.RatePerSec <= 0 {
		t.Fatalf("second snapshot: total %d rate %v", f.CurrentWindow("hour").Total, f.RatePerSec)
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

// TestMastersChangedRestartsTheSweep: a master the sweep began on that is no longer one (a
// failover) invalidates the cursors.
func TestMastersChangedRestartsTheSweep(t *testing.T) {
	s := New(nil, families(t), Options{})
	s.done = map[string]bool{"10.0.0.1:7000": false, "10.0.0.2:7000": true}
	if err := s.checkMasters(map[string]bool{"10.0.0.1:7000": true, "10.0.0.2:7000": true}); err != nil {
		t.Fatalf("same masters: %v", err)
	}
	if err := s.checkMasters(map[string]bool{"10.0.0.3:7000": true, "10.0.0.2:7000": true}); err != ErrMastersChanged {
		t.Fatalf("a master replaced mid-sweep: %v, want ErrMastersChanged", err)
	}
}
