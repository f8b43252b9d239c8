package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// fillSidekiqFailures has Sidekiq itself fail retries jobs into its retry set and dead jobs into
// its dead set (store/jobs/testdata/sidekiq/bulk.rb).
func fillSidekiqFailures(t *testing.T, rdb *redis.Client, retries, dead int) {
	t.Helper()
	var got struct{ Retry, Dead int }
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "testdata/sidekiq", &got,
		"bulk.rb", "fill", "redis://"+rdb.Options().Addr+"/0", strconv.Itoa(retries), strconv.Itoa(dead))
	if got.Retry != retries || got.Dead != dead {
		t.Fatalf("Sidekiq's sets hold %d retries and %d dead, want %d and %d", got.Retry, got.Dead, retries, dead)
	}
}

// copyKeys copies every key of from to to, byte for byte (DUMP, RESTORE with its TTL).
func copyKeys(t *testing.T, from, to *redis.Client) {
	t.Helper()
	ctx := t.Context()
	it := from.Scan(ctx, 0, "*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		ttl := max(from.PTTL(ctx, k).Val(), 0)
		if err := to.RestoreReplace(ctx, k, ttl, from.Dump(ctx, k).Val()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// runBulk runs a bulk action with a small chunk, collecting what each chunk recorded.
func runBulk(ctx context.Context, t *testing.T, rdb *redis.Client, q Queue, sec TaskSection, a TaskAction, progress func(BulkResult)) (BulkResult, []UndoTask) {
	t.Helper()
	var undo []UndoTask
	res, err := RunBulk(ctx, rdb, q, sec, a, rdb.Time(t.Context()).Val(), BulkOptions{
		Chunk:    64,
		MaxCall:  -1, // every chunk 64 tasks, for the stop after two
		Record:   func(u []UndoTask) error { undo = append(undo, u...); return nil },
		Progress: progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, undo
}

// TestBulkDeleteUndoneByteForByte: every job of Sidekiq's retry set (past the size where Redis
// keeps it as a skiplist) and of its dead set is deleted in chunks, as Sidekiq's API then sees;
// undoing the records puts every key back byte for byte (DUMP before = DUMP after); and undoing
// again writes nothing.
func TestBulkDeleteUndoneByteForByte(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fillSidekiqFailures(t, rdb, 300, 40)
	before := dumpKeys(t, rdb)
	q := Source{Layout: Sidekiq}.SharedQueue()
	var undo []UndoTask
	for _, sec := range []TaskSection{SectionRetry, SectionDead} {
		plan, err := PlanBulk(t.Context(), rdb, q, sec, ActionDelete, 1000, time.Now())
		if err != nil || plan.Tasks <= 0 || plan.Bytes <= 0 || plan.Estimate <= 0 {
			t.Fatalf("plan of %s: %+v, %v", sec, plan, err)
		}
		res, u := runBulk(t.Context(), t, rdb, q, sec, ActionDelete, nil)
		if res.Done != plan.Tasks || res.Gone != 0 || res.Left != 0 || int64(len(u)) != plan.Tasks {
			t.Fatalf("delete all of %s (%d planned): %+v, %d recorded", sec, plan.Tasks, res, len(u))
		}
		undo = append(undo, u...)
	}
	if v := readSidekiq(t, rdb, ""); len(v.Retry) != 0 || len(v.Dead) != 0 {
		t.Fatalf("Sidekiq sees %d retries and %d dead after deleting all", len(v.Retry), len(v.Dead))
	}
	ur, err := Undo(t.Context(), rdb, undo, 100, nil)
	if err != nil || ur.Restored != 340 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, rdb, before, "delete all then undo")
	ur, err = Undo(t.Context(), rdb, undo, 100, nil)
	if err != nil || ur.There != 340 || ur.Restored != 0 {
		t.Fatalf("undo again: %+v, %v", ur, err)
	}
	wantUnchanged(t, rdb, before, "undo again")
}

// TestBulkRetryMovesWhatRetryAllMoves: on two identical copies, hourglass's retry all and
// Sidekiq's own RetrySet#retry_all and DeadSet#retry_all leave the same jobs in the same queues
// (each job's jid, class, args, queue and retry_count, as Sidekiq's API reads them), and empty
// sets; undone, hourglass's copy is byte for byte what it was.
func TestBulkRetryMovesWhatRetryAllMoves(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	fillSidekiqFailures(t, ours, 150, 20)
	copyKeys(t, ours, theirs)
	before := dumpKeys(t, ours)
	q := Source{Layout: Sidekiq}.SharedQueue()
	var undo []UndoTask
	for _, sec := range []TaskSection{SectionRetry, SectionDead} {
		res, u := runBulk(t.Context(), t, ours, q, sec, ActionRunNow, nil)
		var moved struct{ Moved int64 }
		set := map[TaskSection]string{SectionRetry: "retry", SectionDead: "dead"}[sec]
		redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "testdata/sidekiq", &moved,
			"bulk.rb", "retry_all", "redis://"+theirs.Options().Addr+"/0", set)
		if res.Done != moved.Moved || res.Gone != 0 || res.Left != 0 {
			t.Fatalf("retry all of %s: %+v; Sidekiq's retry_all moved %d", sec, res, moved.Moved)
		}
		undo = append(undo, u...)
	}
	a, b := readSidekiq(t, ours, ""), readSidekiq(t, theirs, "")
	if len(a.Retry)+len(a.Dead)+len(b.Retry)+len(b.Dead) != 0 {
		t.Fatalf("sets left: ours %d/%d, Sidekiq's %d/%d", len(a.Retry), len(a.Dead), len(b.Retry), len(b.Dead))
	}
	if got, want := queuedJobs(a), queuedJobs(b); !slices.Equal(got, want) || len(got) != 170 {
		t.Fatalf("queued after retry all: %d jobs, Sidekiq's retry_all %d\nours:   %.300v\ntheirs: %.300v", len(got), len(want), got, want)
	}
	if got, want := ours.SMembers(t.Context(), "queues").Val(), theirs.SMembers(t.Context(), "queues").Val(); !sameSet(got, want) {
		t.Fatalf("queues set: %v, Sidekiq's %v", got, want)
	}
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != 170 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, ours, before, "retry all then undo")
}

// queuedJobs are the jobs in every queue, each as its jid, class, args, queue and retry_count,
// sorted.
func queuedJobs(v sidekiqView) []string {
	var out []string
	for name, jobs := range v.Queues {
		for _, j := range jobs {
			rc := "nil"
			if j.RetryCount != nil {
				rc = strconv.FormatInt(*j.RetryCount, 10)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s/%s %s", j.JID, j.Class, j.Args, name, j.Queue, rc))
		}
	}
	slices.Sort(out)
	return out
}

func sameSet(a, b []string) bool {
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestBulkStoppedMidwayLeavesNoHalfMovedJob: a retry all stopped after its second chunk (the
// context cancelled, as ctrl+c does) has moved whole jobs only: each job is in the retry set or
// in its queue, once; the records hold exactly the jobs moved; undoing them puts every key back
// byte for byte.
func TestBulkStoppedMidwayLeavesNoHalfMovedJob(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	fillSidekiqFailures(t, rdb, 300, 0)
	before := dumpKeys(t, rdb)
	q := Source{Layout: Sidekiq}.SharedQueue()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, undo := runBulk(ctx, t, rdb, q, SectionRetry, ActionRunNow, func(r BulkResult) {
		if r.Chunks == 2 {
			cancel()
		}
	})
	if !res.Stopped || res.Done != 128 || len(undo) != 128 {
		t.Fatalf("stopped after two chunks: %+v, %d recorded", res, len(undo))
	}
	v := readSidekiq(t, rdb, "")
	seen := map[string]int{}
	for _, j := range v.Retry {
		seen[j.JID]++
	}
	queued := 0
	for _, jobs := range v.Queues {
		for _, j := range jobs {
			seen[j.JID]++
			queued++
		}
	}
	if len(v.Retry) != 300-128 || queued != 128 || len(seen) != 300 {
		t.Fatalf("after the stop: %d in the retry set, %d queued, %d distinct jobs", len(v.Retry), queued, len(seen))
	}
	for jid, n := range seen {
		if n != 1 {
			t.Fatalf("job %s is in %d places", jid, n)
		}
	}
	if ur, err := Undo(t.Context(), rdb, undo, 100, nil); err != nil || ur.Restored != 128 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, rdb, before, "a stopped retry all, undone")
}

// TestBulkUndoLeavesWhatAWorkerTook: a retried job a worker has taken from its queue since is
// not put back in the retry set (it ran); the others are.
func TestBulkUndoLeavesWhatAWorkerTook(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	fillSidekiqFailures(t, rdb, 10, 0)
	q := Source{Layout: Sidekiq}.SharedQueue()
	_, undo := runBulk(t.Context(), t, rdb, q, SectionRetry, ActionRunNow, nil)
	if err := rdb.RPop(t.Context(), "queue:default").Err(); err != nil { // a fetcher takes one
		t.Fatal(err)
	}
	ur, err := Undo(t.Context(), rdb, undo, 100, nil)
	if err != nil || ur.Restored != 9 || ur.Taken != 1 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if n := rdb.ZCard(t.Context(), "retry").Val(); n != 9 {
		t.Fatalf("retry set holds %d after undo, want 9", n)
	}
}

// TestBulkRefusesWhatItDoesNotDo: a section or layout without the bulk action is refused with
// ErrNotSupported and writes nothing.
func TestBulkRefusesWhatItDoesNotDo(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, c := range []struct {
		q   Queue
		sec TaskSection
		a   TaskAction
	}{
		{Source{Layout: Sidekiq}.Queue("default"), SectionWaiting, ActionRunNow},
		{Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionReturn},
		{Source{Layout: BullMQ, Prefix: "bull"}.Queue("q"), SectionInFlight, ActionDelete},
		{ListQueueOf("jobs", "jobs:processing"), SectionInFlight, ActionDelete},
		{DelayQueueOf("dq", "", store.Milliseconds), SectionInFlight, ActionReturn},
		{Source{Layout: RQ}.Queue("q"), SectionInFlight, ActionRunNow},
		{Source{Layout: Sidekiq}.SharedQueue(), SectionLater, ActionArchive},
		{Source{Layout: Asynq}.Queue("q"), SectionWaiting, ActionRunNow},
		{Source{Layout: Asynq}.Queue("q"), SectionDead, ActionArchive},
	} {
		_, err := RunBulk(t.Context(), rdb, c.q, c.sec, c.a, time.Now(), BulkOptions{})
		if !errors.Is(err, ErrNotSupported) || !errors.Is(BulkCheck(c.q, c.sec, c.a), ErrNotSupported) {
			t.Errorf("%T %s %s: %v, want ErrNotSupported", c.q, c.sec, c.a, err)
		}
	}
}

// TestBulkDeleteOfRQsFailedJobsUndoneByteForByte: every job RQ itself failed is deleted as
// Job.delete deletes it (RQ can fetch none of them, and its failed registry lists none); undoing
// the records restores every key byte for byte, the job hashes with their expiry (DUMP and TTL
// before = after), and RQ fetches each job again as it was.
func TestBulkDeleteOfRQsFailedJobsUndoneByteForByte(t *testing.T) {
	rdb, rep := rqFixture(t)
	failed := rep.Queues["work"].IDs["failed"]
	if len(failed) == 0 {
		t.Fatalf("RQ failed no job in work: %+v", rep.Queues["work"].IDs)
	}
	ttls := map[string]time.Duration{}
	for _, id := range failed {
		ttls[id] = rdb.PTTL(t.Context(), "rq:job:"+id).Val()
	}
	rqSettled(t, rdb)
	before := dumpKeysMatch(t, rdb, "rq:*")
	q := Source{Layout: RQ}.Queue("work")
	res, undo := runBulk(t.Context(), t, rdb, q, SectionDead, ActionDelete, nil)
	if res.Done != int64(len(failed)) || res.Gone != 0 {
		t.Fatalf("delete all failed: %+v, want %d", res, len(failed))
	}
	v := readRQ(t, rdb, failed...)
	if n := len(v.Queues["work"]["failed"]); n != 0 {
		t.Fatalf("RQ still lists %d failed jobs", n)
	}
	for _, id := range failed {
		if v.Jobs[id] != nil {
			t.Fatalf("RQ still fetches deleted job %s", id)
		}
	}
	if ur, err := Undo(t.Context(), rdb, undo, 100, nil); err != nil || ur.Restored != int64(len(failed)) || ur.Keys < int64(len(failed)) {
		t.Fatalf("undo: %+v, %v; want %d tasks restored with their hashes", ur, err, len(failed))
	}
	wantUnchangedMatch(t, rdb, "rq:*", before, "delete all failed then undo")
	for _, id := range failed {
		if got := rdb.PTTL(t.Context(), "rq:job:"+id).Val(); got > ttls[id] || got < ttls[id]-time.Minute {
			t.Fatalf("job %s's TTL %v after undo, %v before", id, got, ttls[id])
		}
	}
	v = readRQ(t, rdb, failed...)
	if got := v.Queues["work"]["failed"]; !sameSet(got, slices.Clone(failed)) {
		t.Fatalf("RQ lists failed %v after undo, want %v", got, failed)
	}
	for _, id := range failed {
		if j := v.Jobs[id]; j == nil || j.Status != "failed" || j.Origin != "work" {
			t.Fatalf("RQ fetches job %s as %+v after undo", id, j)
		}
	}
}

// TestBulkRunNowOfADelayQueueUndone: every later task of a queue hourglass's own writer filled is
// made due now, so the queue's own claim takes them all with the due one; undone before a claim,
// the queue is byte for byte as it was; a task claimed between the run and the undo is not put
// back (it ran) and is counted.
func TestBulkRunNowOfADelayQueueUndone(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.DelayQueue("dq:{bulk}", store.Milliseconds)
	var later []string
	for i := range 150 {
		later = append(later, fmt.Sprint("later-", i))
	}
	if err := q.Enqueue(ctx, s.Now().Add(time.Hour), later...); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, s.Now().Add(-time.Minute), "due-1"); err != nil {
		t.Fatal(err)
	}
	before := dumpKeys(t, rdb)
	dq := DelayQueueOf(q.Key, q.InFlight, store.AutoUnit)
	res, undo := runBulk(ctx, t, rdb, dq, SectionLater, ActionRunNow, nil)
	if res.Done != 150 || res.Left != 0 {
		t.Fatalf("run all now: %+v", res)
	}
	if ur, err := Undo(ctx, rdb, undo, 100, nil); err != nil || ur.Restored != 150 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, rdb, before, "run all now then undo")

	_, undo = runBulk(ctx, t, rdb, dq, SectionLater, ActionRunNow, nil)
	c, err := q.Claim(ctx, 200, time.Minute)
	if err != nil || len(c.Tasks) != 151 {
		t.Fatalf("the queue's claim after run all now took %d tasks, %v", len(c.Tasks), err)
	}
	if err := q.Enqueue(ctx, s.Now().Add(time.Hour), later[:10]...); err != nil { // ten back, with a new due time
		t.Fatal(err)
	}
	ur, err := Undo(ctx, rdb, undo, 100, nil)
	if err != nil || ur.Restored != 0 || ur.Taken != 140 || ur.There != 10 {
		t.Fatalf("undo after a claim: %+v, %v", ur, err)
	}
}

// TestBulkOnAFiltersSelection: a filter keeping the jobs of queue "mail" (half of 300 retries,
// past one page) is counted over the whole section by the dry run, and retry all of that plan
// moves those jobs alone: the others stay in the retry set; undone, every key is byte for byte
// what it was.
func TestBulkOnAFiltersSelection(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	fillSidekiqFailures(t, rdb, 300, 0)
	before := dumpKeys(t, rdb)
	q := Source{Layout: Sidekiq}.SharedQueue()
	match := func(t Task) bool { return strings.Contains(t.Payload, `"queue":"mail"`) }
	var waited int
	var told []BulkResult
	wait := func(ctx context.Context, keys int) error { waited += keys; return ctx.Err() }
	plan, err := PlanBulkMatching(t.Context(), rdb, q, SectionRetry, ActionRunNow, 1000, time.Now(), match, wait,
		func(r BulkResult) { told = append(told, r) })
	if err != nil || plan.Tasks != 150 || plan.Scanned != 300 || plan.Match == nil || plan.Bytes <= 0 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	if waited < 300 || len(told) < 2 || told[0].Planned != 300 || told[len(told)-1].Done != 300 {
		t.Fatalf("the count's pages: %d tasks charged to the budget, progress %+v; want every page charged and told", waited, told)
	}
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := PlanBulkMatching(stopped, rdb, q, SectionRetry, ActionRunNow, 1000, time.Now(), match, wait, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a count whose context ended: %v, want it stopped", err)
	}
	var undo []UndoTask
	res, err := RunBulk(t.Context(), rdb, q, SectionRetry, ActionRunNow, rdb.Time(t.Context()).Val(), BulkOptions{
		Chunk: 32, MaxCall: -1, Limit: plan.Tasks, Match: plan.Match,
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
	})
	if err != nil || res.Done != 150 || res.Gone+res.Left != 0 {
		t.Fatalf("retry all of the selection: %+v, %v", res, err)
	}
	v := readSidekiq(t, rdb, "")
	if len(v.Retry) != 150 || len(v.Queues["mail"]) != 150 || len(v.Queues["default"]) != 0 {
		t.Fatalf("after: %d in retry, %d in mail, %d in default", len(v.Retry), len(v.Queues["mail"]), len(v.Queues["default"]))
	}
	for _, j := range v.Retry {
		if j.Queue != "default" {
			t.Fatalf("job %s of queue %s left in the retry set", j.JID, j.Queue)
		}
	}
	if ur, err := Undo(t.Context(), rdb, undo, 100, nil); err != nil || ur.Restored != 150 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, rdb, before, "retry all of a selection, undone")
}
