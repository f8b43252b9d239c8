package store

import (
	"maps"
	"slices"
	"testing"

	"hourglass/internal/redistest"
)

// TestBulkRequeueAllDoesWhatRQDoes: on two identical copies of queues RQ itself filled,
// hourglass's requeue all of a failed registry and RQ's own FailedJobRegistry.requeue on each
// job (`rq requeue --all`) leave the same queues and registries, in the same order, and every job
// fetched the same (status, origin, started_at, exc_info); undone, hourglass's copy is byte for
// byte what it was (every rq:* key's DUMP and expiry).
func TestBulkRequeueAllDoesWhatRQDoes(t *testing.T) {
	ours, rep := rqFixture(t)
	failed := rep.Queues["work"].IDs["failed"]
	if len(failed) < 2 {
		t.Fatalf("RQ failed %d jobs in work, want 2 or more", len(failed))
	}
	theirs := redistest.Start(t).Client(t)
	copyKeys(t, ours, theirs)
	before := dumpKeysMatch(t, ours, "rq:*")
	q := JobSource{Layout: RQ}.Queue("work")
	res, undo := runBulkChunk(t.Context(), t, ours, q, SectionDead, ActionRunNow, 1, nil)
	if res.Done != int64(len(failed)) || res.Gone+res.Left != 0 || res.Chunks != len(failed) {
		t.Fatalf("requeue all: %+v, want %d", res, len(failed))
	}
	a := readRQ(t, ours, failed...)
	b := readRQ(t, theirs, append([]string{"--requeue-all", "work"}, failed...)...)
	if !maps.EqualFunc(a.Queues, b.Queues, func(x, y map[string][]string) bool {
		return maps.EqualFunc(x, y, slices.Equal)
	}) {
		t.Fatalf("after requeue all:\nours %v\nRQ's %v", a.Queues, b.Queues)
	}
	for _, id := range failed {
		x, y := a.Jobs[id], b.Jobs[id]
		if x == nil || y == nil || x.Status != "queued" || x.Status != y.Status || x.Origin != y.Origin ||
			deref(x.StartedAt) != deref(y.StartedAt) || deref(x.ExcInfo) != deref(y.ExcInfo) || x.EnqueuedAt == nil {
			t.Fatalf("job %s: ours %+v, RQ's %+v", id, x, y)
		}
	}
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != int64(len(failed)) {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchangedMatch(t, ours, "rq:*", before, "requeue all then undo")
}
