package inspect

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/journal"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// dumps is every key's DUMP and whether it has a TTL.
func dumps(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	it := rdb.Scan(t.Context(), 0, "*", 1000).Iterator()
	for it.Next(t.Context()) {
		k := it.Val()
		out[k] = rdb.Dump(t.Context(), k).Val() + "|" + strconv.FormatBool(rdb.PTTL(t.Context(), k).Val() < 0)
	}
	return out
}

func sameDumps(t *testing.T, before, after map[string]string, what string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%s: %d keys before, %d after", what, len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s: %q differs from before", what, k)
		}
	}
}

// TestBulkRetryThroughTheDrillDown: the console's retry all of Sidekiq's retry set plans what
// Sidekiq holds, charges the sweep's budget for every key it touches, leaves the set empty as
// Sidekiq's API sees, and z (UndoLast) puts every key back byte for byte; a second undo finds
// nothing left to undo. With no journal, a bulk action is refused.
func TestBulkRetryThroughTheDrillDown(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), sidekiqDir, nil,
		"bulk.rb", "fill", "redis://"+srv.Addr+"/0", "400", "0")
	before := dumps(t, rdb)
	w := queueWatcher(t, rdb, 100_000)
	ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk"})
	if _, err := w.Bulk(t.Context(), ref, snapshot.SectionRetry, snapshot.ActionRunNow, snapshot.BulkPlan{Tasks: 400}, nil); err == nil {
		t.Fatal("a bulk action with no journal ran")
	}
	j, err := journal.Open(filepath.Join(t.TempDir(), journal.FileName), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.SetJournal(j, srv.Addr)
	ch := &charged{watched: w.Inspector.w}
	w.Inspector.w = ch
	plan, err := w.PlanBulk(t.Context(), ref, snapshot.SectionRetry, snapshot.ActionRunNow)
	if err != nil || plan.Tasks != 400 || plan.KeysEach != 2 || plan.Bytes <= 0 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	var chunks int
	line, err := w.Bulk(t.Context(), ref, snapshot.SectionRetry, snapshot.ActionRunNow, plan, func(snapshot.BulkResult) { chunks++ })
	if err != nil || !strings.HasPrefix(line, "400 of 400 retry tasks") || chunks < 2 {
		t.Fatalf("bulk: %q, %v, %d chunks", line, err, chunks)
	}
	if ch.n < 800 {
		t.Errorf("the run charged %d keys to the sweep's budget, want at least 800", ch.n)
	}
	if v := readSidekiq(t, srv); len(v.Retry) != 0 || len(v.Queues["default"])+len(v.Queues["mail"]) != 400 {
		t.Fatalf("after retry all Sidekiq sees %d retries, %d+%d queued", len(v.Retry), len(v.Queues["default"]), len(v.Queues["mail"]))
	}
	var undoing []snapshot.BulkResult
	line, err = w.UndoLast(t.Context(), func(r snapshot.BulkResult) { undoing = append(undoing, r) })
	if err != nil || !strings.Contains(line, "of 400 retry tasks") || !strings.Contains(line, "400 tasks restored") {
		t.Fatalf("undo: %q, %v", line, err)
	}
	if n := len(undoing); n < 2 || undoing[0].Done != 0 || undoing[n-1].Planned != 400 || undoing[n-1].Done <= undoing[0].Done {
		t.Fatalf("the undo's progress: %+v, want a figure a chunk, rising, of 400", undoing)
	}
	sameDumps(t, before, dumps(t, rdb), "retry all, undone")
	if _, err := w.UndoLast(t.Context(), nil); !errors.Is(err, journal.ErrNothing) {
		t.Fatalf("a second undo: %v, want ErrNothing", err)
	}
}

// TestBulkStopsWhenTheJournalIsFull: a delete all whose undo data outgrows the journal's bound
// stops before the chunk that would not fit, having done only what the journal holds, and the
// undo of that part puts every key back byte for byte.
func TestBulkStopsWhenTheJournalIsFull(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), sidekiqDir, nil,
		"bulk.rb", "fill", "redis://"+srv.Addr+"/0", "400", "0")
	before := dumps(t, rdb)
	w := queueWatcher(t, rdb, 0)
	ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk"})
	j, err := journal.Open(filepath.Join(t.TempDir(), journal.FileName), 64<<10) // about a third of the jobs
	if err != nil {
		t.Fatal(err)
	}
	w.SetJournal(j, srv.Addr)
	plan, err := w.PlanBulk(t.Context(), ref, snapshot.SectionRetry, snapshot.ActionDelete)
	if err != nil {
		t.Fatal(err)
	}
	var last snapshot.BulkResult
	_, err = w.Bulk(t.Context(), ref, snapshot.SectionRetry, snapshot.ActionDelete, plan, func(r snapshot.BulkResult) { last = r })
	left := rdb.ZCard(t.Context(), "retry").Val()
	if !errors.Is(err, journal.ErrFull) || last.Done == 0 || left != 400-last.Done {
		t.Fatalf("bulk past the bound: %v; done %d, %d left in the set", err, last.Done, left)
	}
	if line, err := w.UndoLast(t.Context(), nil); err != nil || !strings.Contains(line, strconv.FormatInt(last.Done, 10)+" tasks restored") {
		t.Fatalf("undo: %q, %v", line, err)
	}
	sameDumps(t, before, dumps(t, rdb), "a stopped delete all, undone")
}

// TestUndoStoppedGoesOnWhereItStopped: a kill all whose dead set Sidekiq's bound trims (so later
// chunks record jobs earlier chunks killed) is undone in two goes, the first stopped between
// chunks: the second goes on from where the first stopped instead of putting records back
// twice, and every key is byte for byte what it was before the kill.
func TestUndoStoppedGoesOnWhereItStopped(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), sidekiqDir, nil,
		"bulk.rb", "fill", "redis://"+srv.Addr+"/0", "400", "150")
	before := dumps(t, rdb)
	j, err := journal.Open(filepath.Join(t.TempDir(), journal.FileName), 0)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := j.Begin(journal.Action{Target: srv.Addr, Queue: "sk (all queues)", Section: "retry", Action: "archive"})
	if err != nil {
		t.Fatal(err)
	}
	q := jobs.Source{Layout: jobs.Sidekiq, DeadMax: 200}.SharedQueue()
	res, err := jobs.RunBulk(t.Context(), rdb, q, jobs.SectionRetry, jobs.ActionArchive, rdb.Time(t.Context()).Val(),
		jobs.BulkOptions{Chunk: 50, MaxCall: -1, Record: entry.Record})
	if err != nil || res.Done != 400 || rdb.ZCard(t.Context(), "dead").Val() != 199 {
		t.Fatalf("kill all: %+v, %v; dead holds %d", res, err, rdb.ZCard(t.Context(), "dead").Val())
	}
	_ = entry.End(res)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	chunks := 0
	stopAfterThree := func(ctx context.Context, _ int) error {
		if chunks++; chunks > 3 {
			cancel()
		}
		return ctx.Err()
	}
	_, err = UndoLast(ctx, rdb, j, srv.Addr, stopAfterThree, nil)
	var put, of int
	if !errors.Is(err, context.Canceled) || err == nil {
		t.Fatalf("the stopped undo: %v", err)
	}
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "stopped: "):], "stopped: %d of %d", &put, &of); serr != nil || put <= 0 || put >= of {
		t.Fatalf("the stopped undo says %q: want how many of its records it put back", err)
	}
	line, err := UndoLast(t.Context(), rdb, j, srv.Addr, Pacer(0, nil), nil)
	if err != nil || !strings.Contains(line, fmt.Sprintf("going on from an undo stopped after %d records", put)) {
		t.Fatalf("the second undo: %q, %v", line, err)
	}
	sameDumps(t, before, dumps(t, rdb), "a kill all undone in two goes")
	if _, err := UndoLast(t.Context(), rdb, j, srv.Addr, Pacer(0, nil), nil); !errors.Is(err, journal.ErrNothing) {
		t.Fatalf("a third undo: %v, want nothing left to undo", err)
	}
}

// TestBulkDeleteOfAWaitingListThroughTheDrillDown: the console offers delete all on a Sidekiq
// queue's waiting list and on a list queue's (BulkCheck), plans the list's jobs, empties the queue
// as Sidekiq's Queue#clear does (the list gone, its name out of the queues set), and z
// (UndoLast), from what the journal holds, puts every key back byte for byte.
func TestBulkDeleteOfAWaitingListThroughTheDrillDown(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), sidekiqDir, nil,
		"bulk.rb", "push", "redis://"+srv.Addr+"/0", "mail", "40")
	rdb.LPush(t.Context(), "lq:mail", "a", "b")
	before := dumps(t, rdb)
	w := queueWatcher(t, rdb, 100_000)
	j, err := journal.Open(filepath.Join(t.TempDir(), journal.FileName), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.SetJournal(j, srv.Addr)
	ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk", Queue: "mail"})
	own := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueList, Name: "mail", Key: "lq:mail"})
	if err := w.BulkCheck(own, snapshot.SectionWaiting, snapshot.ActionDelete); err != nil {
		t.Fatalf("delete all of a list queue's waiting list: %v", err)
	}
	if err := w.BulkCheck(ref, snapshot.SectionWaiting, snapshot.ActionDelete); err != nil {
		t.Fatalf("delete all of a Sidekiq queue: %v", err)
	}
	plan, err := w.PlanBulk(t.Context(), ref, snapshot.SectionWaiting, snapshot.ActionDelete)
	if err != nil || plan.Tasks != 40 || plan.Newest == nil {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	line, err := w.Bulk(t.Context(), ref, snapshot.SectionWaiting, snapshot.ActionDelete, plan, nil)
	if err != nil || !strings.HasPrefix(line, "40 of 40 waiting tasks") {
		t.Fatalf("bulk: %q, %v", line, err)
	}
	if n := rdb.Exists(t.Context(), "queue:mail").Val(); n != 0 || rdb.SIsMember(t.Context(), "queues", "mail").Val() {
		t.Fatalf("after delete all the queue's list exists (%d) or its name is in queues", n)
	}
	if line, err = w.UndoLast(t.Context(), nil); err != nil || !strings.Contains(line, "40 tasks restored, 1 key restored with them") {
		t.Fatalf("undo: %q, %v", line, err)
	}
	sameDumps(t, before, dumps(t, rdb), "delete all of a queue, undone")
}
