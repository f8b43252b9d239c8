package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
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
	w := New(rdb, fams, scanner.Options{Count: 100, Location: shanghai})

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
	// Its rate is measured over at least scanner.MinRateSpan of reads (TestRateOfBurstyWriters): until
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
