package jobs

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
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
	rqSettled(t, ours)
	theirs := redistest.Start(t).Client(t)
	copyKeys(t, ours, theirs)
	before := dumpKeysMatch(t, ours, "rq:*")
	q := Source{Layout: RQ}.Queue("work")
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

// TestBulkRunAllScheduledDoesWhatRQsSchedulerDoes: on two identical copies of queues RQ itself
// filled, hourglass's run all now of a scheduled registry and what RQ's scheduler does to a due
// job (queue.enqueue_job as the job asks, then the registry's remove), done to each scheduled job
// of the queue, leave the same queues and registries in the same order, every job queued in its
// origin; undone, hourglass's copy is byte for byte what it was.
func TestBulkRunAllScheduledDoesWhatRQsSchedulerDoes(t *testing.T) {
	ours, rep := rqFixture(t)
	scheduled := rep.Queues["mail"].IDs["scheduled"]
	if len(scheduled) < 2 {
		t.Fatalf("RQ scheduled %d jobs in mail, want 2 or more", len(scheduled))
	}
	rqSettled(t, ours)
	theirs := redistest.Start(t).Client(t)
	copyKeys(t, ours, theirs)
	before := dumpKeysMatch(t, ours, "rq:*")
	res, undo := runBulkChunk(t.Context(), t, ours, Source{Layout: RQ}.Queue("mail"), SectionLater, ActionRunNow, 1, nil)
	if res.Done != int64(len(scheduled)) || res.Gone+res.Left != 0 {
		t.Fatalf("run all now: %+v, want %d", res, len(scheduled))
	}
	a := readRQ(t, ours, scheduled...)
	b := readRQ(t, theirs, append([]string{"--enqueue-scheduled", "mail"}, scheduled...)...)
	if !maps.EqualFunc(a.Queues, b.Queues, func(x, y map[string][]string) bool {
		return maps.EqualFunc(x, y, slices.Equal)
	}) {
		t.Fatalf("after run all now:\nours %v\nRQ's %v", a.Queues, b.Queues)
	}
	for _, id := range scheduled {
		x, y := a.Jobs[id], b.Jobs[id]
		if x == nil || y == nil || x.Status != "queued" || x.Status != y.Status || x.Origin != y.Origin || x.EnqueuedAt == nil {
			t.Fatalf("job %s: ours %+v, RQ's %+v", id, x, y)
		}
	}
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != int64(len(scheduled)) {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchangedMatch(t, ours, "rq:*", before, "run all now then undo")
}

// TestBulkDeleteOfRQsScheduledJobsUndone: every job RQ scheduled in a queue is deleted as
// Job.delete deletes it (RQ lists none scheduled and fetches none of them); undone, every rq:*
// key is byte for byte what it was and RQ lists them scheduled again.
func TestBulkDeleteOfRQsScheduledJobsUndone(t *testing.T) {
	rdb, rep := rqFixture(t)
	var queue string
	var scheduled []string
	for name, q := range rep.Queues {
		if ids := q.IDs["scheduled"]; len(ids) > len(scheduled) {
			queue, scheduled = name, ids
		}
	}
	if len(scheduled) == 0 {
		t.Fatal("RQ scheduled no job")
	}
	rqSettled(t, rdb)
	before := dumpKeysMatch(t, rdb, "rq:*")
	res, undo := runBulkChunk(t.Context(), t, rdb, Source{Layout: RQ}.Queue(queue), SectionLater, ActionDelete, 1, nil)
	if res.Done != int64(len(scheduled)) || res.Gone+res.Left != 0 {
		t.Fatalf("delete all scheduled of %s: %+v, want %d", queue, res, len(scheduled))
	}
	v := readRQ(t, rdb, scheduled...)
	if n := len(v.Queues[queue]["scheduled"]); n != 0 {
		t.Fatalf("RQ still lists %d scheduled", n)
	}
	for _, id := range scheduled {
		if v.Jobs[id] != nil {
			t.Fatalf("RQ still fetches deleted job %s", id)
		}
	}
	if _, err := Undo(t.Context(), rdb, undo, 100, nil); err != nil {
		t.Fatal(err)
	}
	wantUnchangedMatch(t, rdb, "rq:*", before, "delete all scheduled then undo")
	if got := readRQ(t, rdb).Queues[queue]["scheduled"]; !slices.Equal(got, scheduled) {
		t.Fatalf("RQ lists scheduled %v after undo, want %v", got, scheduled)
	}
}

// rqSettled waits until every finished-registry entry due to expire within a minute (the
// fixture's job kept briefly) is past its expiry by RQ's whole-second clock, and has RQ list the
// queues once, which cleans those entries up: RQ's listings before and after an action, and a
// byte-for-byte comparison across them, then see the same registries.
func rqSettled(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := t.Context()
	now := rdb.Time(ctx).Val()
	last := float64(now.Unix())
	it := rdb.Scan(ctx, 0, "rq:finished:*", 100).Iterator()
	for it.Next(ctx) {
		key := it.Val()
		soon := rdb.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.Unix()+60, 10)}).Val()
		for _, id := range soon {
			last = max(last, rdb.ZScore(ctx, key, id).Val())
		}
	}
	redistest.Eventually(t, "RQ's brief results to expire", 20*time.Second, func() bool {
		return float64(rdb.Time(ctx).Val().Unix()) > last+1
	})
	readRQ(t, rdb)
}
