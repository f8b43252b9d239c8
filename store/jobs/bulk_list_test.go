package jobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// sidekiqBulk runs store/jobs/testdata/sidekiq/bulk.rb's mode on rdb.
func sidekiqBulk(t *testing.T, rdb *redis.Client, out any, mode string, args ...string) {
	t.Helper()
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "testdata/sidekiq", out,
		append([]string{"bulk.rb", mode, "redis://" + rdb.Options().Addr + "/0"}, args...)...)
}

// wantSameKeys fails unless a and b hold the same keys, each with the same DUMP and TTL state,
// but for a list or a set Redis keeps as a hash table whose DUMP differs while its content is the
// same: a list's DUMP records how its elements were pushed (its nodes), a hash table set's the
// order of its table, so those are compared element by element (keyContent).
func wantSameKeys(t *testing.T, a, b *redis.Client, match, what string) {
	t.Helper()
	wantSameDumps(t, a, dumpKeysMatch(t, b, match), b, match, what)
}

// wantSameDumps is wantSameKeys of a against the DUMPs want read from b (b may be a itself,
// before).
func wantSameDumps(t *testing.T, a *redis.Client, want map[string]string, b *redis.Client, match, what string) {
	t.Helper()
	got := dumpKeysMatch(t, a, match)
	if len(got) != len(want) {
		t.Fatalf("%s: %d keys %v, want %d %v", what, len(got), slices.Sorted(maps.Keys(got)), len(want), slices.Sorted(maps.Keys(want)))
	}
	for k, v := range want {
		if got[k] == v {
			continue
		}
		typ := a.Type(t.Context(), k).Val()
		if (typ != "list" && typ != "set") || b == nil || keyContent(t, a, k) != keyContent(t, b, k) {
			t.Fatalf("%s: %q differs (%s)", what, k, typ)
		}
	}
}

// keyContent is a list's elements in order, or a set's members sorted, and its TTL state.
func keyContent(t *testing.T, rdb *redis.Client, k string) string {
	t.Helper()
	ctx := t.Context()
	var els []string
	if rdb.Type(ctx, k).Val() == "list" {
		els = rdb.LRange(ctx, k, 0, -1).Val()
	} else {
		els = slices.Sorted(slices.Values(rdb.SMembers(ctx, k).Val()))
	}
	return fmt.Sprintf("%q ttl %v", els, rdb.PTTL(ctx, k).Val() == -1)
}

// TestBulkListDeleteDoesWhatSidekiqsClearDoes: on two identical copies of queues Sidekiq's
// Client#push filled, hourglass's delete all of queue mail (in chunks) and Sidekiq's own
// Queue#clear leave every key the same (the list gone, mail out of the queues set, default kept);
// undone, every key is byte for byte what it was, and Sidekiq's own fetch takes the 300 jobs in
// the order they were pushed.
func TestBulkListDeleteDoesWhatSidekiqsClearDoes(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	var pushed struct{ Size int }
	sidekiqBulk(t, ours, &pushed, "push", "mail", "300")
	sidekiqBulk(t, ours, &pushed, "push", "default", "5")
	copyKeys(t, ours, theirs)
	kept := redistest.Start(t).Client(t) // the keys as they were, to compare lists with
	copyKeys(t, ours, kept)
	before := dumpKeys(t, ours)
	q := Source{Layout: Sidekiq}.Queue("mail")
	plan, err := PlanBulk(t.Context(), ours, q, SectionWaiting, ActionDelete, 1000, time.Now())
	if err != nil || plan.Tasks != 300 || plan.Bytes <= 0 || plan.Newest == nil {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	res, undo := runBulk(t.Context(), t, ours, q, SectionWaiting, ActionDelete, nil)
	if res.Done != 300 || res.Gone+res.Left != 0 || res.Chunks != 5 {
		t.Fatalf("delete all: %+v", res)
	}
	var cleared struct{ Cleared int }
	sidekiqBulk(t, theirs, &cleared, "clear", "mail")
	if cleared.Cleared != 300 {
		t.Fatalf("Sidekiq's clear cleared %d", cleared.Cleared)
	}
	wantSameKeys(t, ours, theirs, "*", "delete all and Queue#clear")
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != 300 || ur.Keys != 1 { // and the queues member
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantSameDumps(t, ours, before, kept, "*", "delete all then undo")
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != 0 {
		t.Fatalf("undo again: %+v, %v", ur, err)
	}
	wantSameDumps(t, ours, before, kept, "*", "undo again")
	var took struct{ Args []int }
	sidekiqBulk(t, ours, &took, "take", "mail", "300")
	for i, a := range took.Args {
		if a != i {
			t.Fatalf("Sidekiq's fetch took job %d %dth after undo: %v", a, i, took.Args)
		}
	}
	if len(took.Args) != 300 {
		t.Fatalf("Sidekiq's fetch took %d jobs", len(took.Args))
	}
}

// TestBulkListDeleteDoesWhatRQsEmptyDoes: on two identical copies of queues RQ itself filled,
// hourglass's delete all of queue mail (a chunk a job) and RQ's own Queue.empty leave every rq:*
// key the same (the ids out of the queue, each job's hash and its dependents set deleted); undone,
// every rq:* key is byte for byte what it was and RQ lists the queue's jobs in their old order.
func TestBulkListDeleteDoesWhatRQsEmptyDoes(t *testing.T) {
	ours, rep := rqFixture(t)
	queued := rep.Queues["mail"].IDs["queued"]
	if len(queued) < 2 {
		t.Fatalf("RQ queued %d jobs in mail, want 2 or more", len(queued))
	}
	rqSettled(t, ours)
	theirs := redistest.Start(t).Client(t)
	copyKeys(t, ours, theirs)
	before := dumpKeysMatch(t, ours, "rq:*")
	res, undo := runBulkChunk(t.Context(), t, ours, Source{Layout: RQ}.Queue("mail"), SectionWaiting, ActionDelete, 1, nil)
	if res.Done != int64(len(queued)) || res.Gone+res.Left != 0 || res.Chunks != len(queued) {
		t.Fatalf("delete all: %+v, want %d", res, len(queued))
	}
	readRQ(t, ours)
	readRQ(t, theirs, "--empty", "mail")
	wantSameKeys(t, ours, theirs, "rq:*", "delete all and Queue.empty")
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != int64(len(queued)) {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchangedMatch(t, ours, "rq:*", before, "delete all then undo")
	if got := readRQ(t, ours).Queues["mail"]["queued"]; !slices.Equal(got, queued) {
		t.Fatalf("RQ lists %v queued after undo, want %v", got, queued)
	}
}

// asynqPending has asynq's Client enqueue n tasks on queue "bulk" (payloads p0, p1, ...), one
// unique, beside the sets fillAsynqBulk fills.
func asynqPending(t *testing.T, opt asynq.RedisConnOpt, n int) {
	t.Helper()
	client := asynq.NewClient(opt)
	defer client.Close()
	for i := range n {
		var opts []asynq.Option
		if i == 3 {
			opts = append(opts, asynq.Unique(time.Hour))
		}
		if _, err := client.Enqueue(asynq.NewTask("p", fmt.Appendf(nil, "p%d", i)), append(opts, asynq.Queue("bulk"))...); err != nil {
			t.Fatal(err)
		}
	}
}

// asynqTakes runs an asynq Server with one worker on queue "bulk" until it has taken n pending
// tasks, and returns their payloads in the order it took them.
func asynqTakes(t *testing.T, addr string, n int) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := asynq.NewServer(asynq.RedisClientOpt{Addr: addr}, asynq.Config{Concurrency: 1, Queues: map[string]int{"bulk": 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(task.Payload()))
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	redistest.Eventually(t, "asynq's server to take the pending tasks", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= n
	})
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(got)
}

// TestBulkListAsynqDoesWhatItsInspectorDoes: on identical copies of a queue asynq itself filled,
// hourglass's delete all and archive all of pending and the Inspector's DeleteAllPendingTasks and
// ArchiveAllPendingTasks leave every key of the queue the same; undone, the queue is byte for
// byte what it was, and asynq's own server takes the pending tasks in their old order.
func TestBulkListAsynqDoesWhatItsInspectorDoes(t *testing.T) {
	src := redistest.Start(t)
	fillAsynqBulk(t, asynq.RedisClientOpt{Addr: src.Addr})
	asynqPending(t, asynq.RedisClientOpt{Addr: src.Addr}, 60) // the archived set stays a listpack (90)
	q := Source{Layout: Asynq}.Queue("bulk")
	for _, c := range []struct {
		a      TaskAction
		theirs func(*asynq.Inspector) (int, error)
	}{
		{ActionDelete, func(i *asynq.Inspector) (int, error) { return i.DeleteAllPendingTasks("bulk") }},
		{ActionArchive, func(i *asynq.Inspector) (int, error) { return i.ArchiveAllPendingTasks("bulk") }},
	} {
		t.Run(string(c.a), func(t *testing.T) {
			o, th := redistest.Start(t), redistest.Start(t)
			ours, theirs := o.Client(t), th.Client(t)
			copyKeys(t, src.Client(t), ours)
			copyKeys(t, src.Client(t), theirs)
			before, beforeView := dumpKeysMatch(t, ours, "asynq:{bulk}:*"), asynqView(t, ours)
			res, undo := runBulkChunk(t.Context(), t, ours, q, SectionWaiting, c.a, 32, nil)
			insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: th.Addr})
			defer insp.Close()
			n, err := c.theirs(insp)
			if err != nil || res.Done != int64(n) || n != 60 || res.Gone+res.Left != 0 {
				t.Fatalf("ours %+v; the Inspector's %d, %v", res, n, err)
			}
			if a, b := asynqView(t, ours), asynqView(t, theirs); !equalViews(a, b) {
				t.Fatalf("ours and the Inspector's differ:\n%s", diffViews(a, b))
			}
			if ur, err := Undo(t.Context(), ours, undo, 50, nil); err != nil || ur.Restored != 60 {
				t.Fatalf("undo: %+v, %v", ur, err)
			}
			wantSameAsynq(t, ours, before, beforeView, "undo")
			took := asynqTakes(t, o.Addr, 60)
			for i, p := range took {
				if p != "p"+strconv.Itoa(i) {
					t.Fatalf("asynq's server took %s %dth after undo: %v", p, i, took)
				}
			}
		})
	}
}

// TestBulkListDeleteWithProducerAndWorker: while hourglass deletes all of a list queue's 2,000
// tasks of the dry run, a producer pushes 500 more and a worker pops tasks: no task pushed after
// the dry run is deleted (each is in the list or the worker's hands), each old task is deleted or
// taken by the worker (counted gone), once; undone, the deleted tasks come back at the taking end
// in their old order, before the new ones, and undo puts back none the worker took.
func TestBulkListDeleteWithProducerAndWorker(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	lq := s.ListQueue("jobs:{mail}")
	var old []string
	for i := range 2000 {
		old = append(old, fmt.Sprint("old-", i))
	}
	if err := lq.Push(ctx, old...); err != nil {
		t.Fatal(err)
	}
	q := ListQueueOf(lq.Key, lq.Processing)
	plan, err := PlanBulk(ctx, rdb, q, SectionWaiting, ActionDelete, 0, time.Now())
	if err != nil || plan.Tasks != 2000 || plan.Newest == nil || plan.Newest[0] != "old-1999" {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(2)
	go func() { // the producer
		defer wg.Done()
		for i := range 500 {
			if err := lq.Push(ctx, fmt.Sprint("new-", i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() { // the worker, until the run is over
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := lq.Pop(ctx, 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var undo []UndoTask
	res, err := RunBulk(ctx, rdb, q, SectionWaiting, ActionDelete, rdb.Time(ctx).Val(), BulkOptions{
		Chunk: 20, MaxCall: -1, Limit: plan.Tasks, Newest: plan.Newest,
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
	})
	close(stop)
	wg.Wait()
	if err != nil || res.Done+res.Gone != 2000 || res.Left != 0 || res.Done == 0 {
		t.Fatalf("delete all with a producer and a worker: %+v, %v", res, err)
	}
	list, taken := rdb.LRange(ctx, lq.Key, 0, -1).Val(), rdb.LRange(ctx, lq.Processing, 0, -1).Val()
	count := map[string]int{}
	for _, v := range append(slices.Clone(list), taken...) {
		count[v]++
	}
	for i := range 500 {
		if n := count[fmt.Sprint("new-", i)]; n != 1 {
			t.Fatalf("new-%d, pushed during the run, is there %d times", i, n)
		}
	}
	oldTaken := 0
	for _, v := range old {
		switch count[v] {
		case 0:
		case 1:
			if slices.Contains(list, v) {
				t.Fatalf("%s is still in the list", v)
			}
			oldTaken++
		default:
			t.Fatalf("%s is there %d times", v, count[v])
		}
	}
	if int64(oldTaken) != res.Gone {
		t.Fatalf("the worker took %d old tasks, the run counts %d gone", oldTaken, res.Gone)
	}
	ur, err := Undo(ctx, rdb, undo, 100, nil)
	if err != nil || ur.Restored != res.Done {
		t.Fatalf("undo: %+v, %v (done %d)", ur, err, res.Done)
	}
	var want []string
	for _, v := range old {
		if count[v] == 0 {
			want = append(want, v)
		}
	}
	for _, w := range want {
		got, ok, err := lq.Pop(ctx, 0)
		if err != nil || !ok || got != w {
			t.Fatalf("the queue's pop after undo gave %q (%v, %v), want %q", got, ok, err, w)
		}
	}
	if got, _, _ := lq.Pop(ctx, 0); len(list) > 0 && got != list[len(list)-1] {
		t.Fatalf("after the old tasks the pop gave %q, want %q, the next left before undo", got, list[len(list)-1])
	}
}

// TestBulkListChunkActsOnlyOnWhatItRead: a chunk of five elements read from a list queue's
// taking end acts on those still there: after a worker took two of them, a shutdown pushed one
// back onto the taking end and a producer pushed one at the head, it deletes the other three
// (two gone), keeps the one pushed back next to be taken and the new one; when one of them was
// deleted from among the others since, it acts on none of them (left), and its undo changes
// nothing.
func TestBulkListChunkActsOnlyOnWhatItRead(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	op, err := bulkOpOf(ListQueueOf("lq", ""), SectionWaiting, ActionDelete)
	if err != nil {
		t.Fatal(err)
	}
	l := op.list
	rdb.LPush(ctx, "lq", "a", "b", "c", "d", "e", "f", "g") // a is taken first
	els, _, err := l.window(ctx, rdb, 0, 5)
	if err != nil || !slices.Equal(els, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("window %v, %v", els, err)
	}
	rdb.RPop(ctx, "lq")
	rdb.RPop(ctx, "lq")              // a worker took a and b
	rdb.RPush(ctx, "lq", "requeued") // a shutdown pushed one back onto the taking end
	rdb.LPush(ctx, "lq", "new")
	var res BulkResult
	var recorded []UndoTask
	opt := BulkOptions{Record: func(u []UndoTask) error { recorded = append(recorded, u...); return nil }}
	if _, _, err := l.chunk(ctx, rdb, 1, els, time.Now(), opt, &res); err != nil || res.Done != 3 || res.Gone != 2 {
		t.Fatalf("chunk: %+v, %v", res, err)
	}
	if got := rdb.LRange(ctx, "lq", 0, -1).Val(); !slices.Equal(got, []string{"new", "g", "f", "requeued"}) {
		t.Fatalf("list after the chunk: %v", got)
	}
	if ur, err := Undo(ctx, rdb, recorded, 10, nil); err != nil || ur.Restored != 3 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if got := rdb.LRange(ctx, "lq", 0, -1).Val(); !slices.Equal(got, []string{"new", "g", "f", "requeued", "e", "d", "c"}) {
		t.Fatalf("list after undo: %v (a and b, which a worker took, stay out)", got)
	}
	els, _, _ = l.window(ctx, rdb, 0, 4) // c d e requeued
	rdb.LRem(ctx, "lq", 1, "d")
	was := rdb.LRange(ctx, "lq", 0, -1).Val()
	res, recorded = BulkResult{}, nil
	if _, _, err := l.chunk(ctx, rdb, 1, els, time.Now(), opt, &res); err != nil || res.Left != 4 {
		t.Fatalf("chunk over a list changed among its elements: %+v, %v", res, err)
	}
	got := rdb.LRange(ctx, "lq", 0, -1).Val()
	if int64(len(got)) != int64(len(was))-res.Done || !slices.Contains(got, "new") || !slices.Contains(got, "g") || !slices.Contains(got, "f") {
		t.Fatalf("the chunk deleted %d: %v left of %v", res.Done, got, was)
	}
	if ur, err := Undo(ctx, rdb, recorded, 10, nil); err != nil || ur.Restored != res.Done {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if got := rdb.LRange(ctx, "lq", 0, -1).Val(); !slices.Equal(got, was) {
		t.Fatalf("list after undo: %v, want %v", got, was)
	}
}

// TestBulkListArchiveStoppedMidway: an archive all of asynq's pending stopped after its second
// chunk (as ctrl+c does) has moved whole tasks only: each is in pending with its state pending,
// or in archived with its state archived, once; undone, the queue is byte for byte what it was.
func TestBulkListArchiveStoppedMidway(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	asynqPending(t, asynq.RedisClientOpt{Addr: srv.Addr}, 100)
	before, beforeView := dumpKeysMatch(t, rdb, "asynq:{bulk}:*"), asynqView(t, rdb)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, undo := runBulkChunk(ctx, t, rdb, Source{Layout: Asynq}.Queue("bulk"), SectionWaiting, ActionArchive, 16, func(r BulkResult) {
		if r.Chunks == 2 {
			cancel()
		}
	})
	if !res.Stopped || res.Done != 32 {
		t.Fatalf("stopped after two chunks: %+v", res)
	}
	pending, archived := rdb.LRange(t.Context(), "asynq:{bulk}:pending", 0, -1).Val(), rdb.ZRange(t.Context(), "asynq:{bulk}:archived", 0, -1).Val()
	if len(pending) != 68 || len(archived) != 32 {
		t.Fatalf("%d pending, %d archived", len(pending), len(archived))
	}
	for state, ids := range map[string][]string{"pending": pending, "archived": archived} {
		for _, id := range ids {
			if got := rdb.HGet(t.Context(), "asynq:{bulk}:t:"+id, "state").Val(); got != state {
				t.Fatalf("task %s in %s says %s", id, state, got)
			}
		}
	}
	if ur, err := Undo(t.Context(), rdb, undo, 50, nil); err != nil || ur.Restored != 32 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantSameAsynq(t, rdb, before, beforeView, "a stopped archive all, undone")
}

// TestBulkListUndoInterruptedThenRunAgain: an undo of a delete all stopped after two of its
// chunks (as ctrl+c does) and run again puts every task back once, in its old order; so does an
// undo whose action's last chunk was recorded and never ran (its tasks are still there).
func TestBulkListUndoInterruptedThenRunAgain(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	var tasks []any
	for i := range 700 {
		tasks = append(tasks, fmt.Sprint("t-", i))
	}
	rdb.LPush(ctx, "lq", tasks...)
	was := rdb.LRange(ctx, "lq", 0, -1).Val()
	res, undo := runBulk(ctx, t, rdb, ListQueueOf("lq", ""), SectionWaiting, ActionDelete, nil)
	if res.Done != 700 {
		t.Fatalf("delete all: %+v", res)
	}
	calls := 0
	stop := func(context.Context, int) error {
		if calls++; calls > 3 { // the probe's page, then two chunks
			return context.Canceled
		}
		return nil
	}
	first, err := Undo(ctx, rdb, undo, 50, stop)
	if err == nil || first.Restored <= 0 || first.Restored >= 700 {
		t.Fatalf("interrupted undo: %+v, %v", first, err)
	}
	if ur, err := Undo(ctx, rdb, undo, 50, nil); err != nil || ur.Restored != 700-first.Restored || ur.There != first.Restored {
		t.Fatalf("undo run again after %d: %+v, %v", first.Restored, ur, err)
	}
	if got := rdb.LRange(ctx, "lq", 0, -1).Val(); !slices.Equal(got, was) {
		t.Fatalf("after the undo run again the list holds %d, %.80v", len(got), got)
	}
	// As if the action's first chunk (the 64 oldest) had run and its second were recorded and never run.
	rdb.LTrim(ctx, "lq", 0, -65)
	ur, err := Undo(ctx, rdb, undo[:128], 50, nil)
	if err != nil || ur.Restored != 64 || ur.There != 64 {
		t.Fatalf("undo with a chunk that never ran: %+v, %v", ur, err)
	}
	if got := rdb.LRange(ctx, "lq", 0, -1).Val(); !slices.Equal(got, was) {
		t.Fatalf("after undo with a chunk that never ran the list holds %d, %.80v", len(got), got)
	}
}

// TestBulkListAsynqOnACluster: on a 3-master Redis Cluster, hourglass archives all of a queue's
// 40 pending tasks asynq's Client enqueued, in chunks (each one script: the queue's keys share a
// hash slot), asynq's Inspector counts them archived, and undone the queue is what it was, key by
// key; then deletes them all, and the Inspector counts none.
func TestBulkListAsynqOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	opt := asynq.RedisClusterClientOpt{Addrs: cl.Addrs}
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	for i := range 40 {
		if _, err := client.Enqueue(asynq.NewTask("p", fmt.Appendf(nil, "c%d", i)), asynq.Queue("bulk")); err != nil {
			t.Fatal(err)
		}
	}
	before := asynqView(t, rdb)
	q := Source{Layout: Asynq}.Queue("bulk")
	res, undo := runBulkChunk(t.Context(), t, rdb, q, SectionWaiting, ActionArchive, 16, nil)
	if res.Done != 40 || res.Chunks != 3 {
		t.Fatalf("archive all pending on the cluster: %+v", res)
	}
	if qi, err := insp.GetQueueInfo("bulk"); err != nil || qi.Archived != 40 || qi.Pending != 0 {
		t.Fatalf("asynq counts %+v, %v; want 40 archived", qi, err)
	}
	if ur, err := Undo(t.Context(), rdb, undo, 50, nil); err != nil || ur.Restored != 40 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if after := asynqView(t, rdb); !equalViews(before, after) {
		t.Fatalf("undone, the queue differs:\n%s", diffViews(after, before))
	}
	if res, _ := runBulkChunk(t.Context(), t, rdb, q, SectionWaiting, ActionDelete, 16, nil); res.Done != 40 {
		t.Fatalf("delete all pending on the cluster: %+v", res)
	}
	if qi, err := insp.GetQueueInfo("bulk"); err != nil || qi.Pending+qi.Archived != 0 {
		t.Fatalf("asynq counts %+v, %v; want none", qi, err)
	}
}

// TestBulkListRunActsOnlyOnTheDryRunsTasks: a run acts on the tasks of its dry run and on none
// pushed since, from either end: when the workers took them all before the run (the newest
// with them) it deletes nothing, though as many new tasks wait; when the newest of them was
// deleted by someone else, it still deletes the rest; when thousands were pushed since, it finds
// where the dry run's tasks end.
func TestBulkListRunActsOnlyOnTheDryRunsTasks(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, left := range []bool{false, true} {
		push, take := rdb.LPush, rdb.RPop // the workers take from the tail
		if left {
			push, take = rdb.RPush, rdb.LPop // RQ's take from the head
		}
		l := &listOp{key: fmt.Sprint("lq-", left), fromLeft: left, keys: func(string) []string { return nil }}
		for _, c := range []struct {
			name      string
			meanwhile func(key string) // between the dry run and the run
			pushed    int              // new tasks pushed meanwhile
			done      int64
		}{
			{"the workers took them all", func(key string) {
				for range 100 {
					take(ctx, key)
				}
			}, 100, 0},
			{"the newest deleted", func(key string) { rdb.LRem(ctx, key, 1, "old-99") }, 100, 99},
			{"thousands pushed since", func(key string) {
				for range 30 {
					take(ctx, key)
				}
			}, 5000, 70},
		} {
			t.Run(fmt.Sprint(c.name, " left ", left), func(t *testing.T) {
				rdb.Del(ctx, l.key)
				for i := range 100 {
					push(ctx, l.key, fmt.Sprint("old-", i))
				}
				plan, err := l.plan(ctx, rdb, 1, 0)
				if err != nil || plan.Tasks != 100 || len(plan.Newest) != ListMarks || !slices.Contains(plan.Newest, "old-99") {
					t.Fatalf("plan %+v, %v", plan, err)
				}
				c.meanwhile(l.key)
				for i := range c.pushed {
					push(ctx, l.key, fmt.Sprint("new-", i))
				}
				opt := BulkOptions{Limit: plan.Tasks, Newest: plan.Newest}
				res, err := l.run(ctx, rdb, bulkOp{keysEach: 1}, time.Now(), opt, newChunkSizer(7, -1))
				if err != nil || res.Done != c.done || res.Left != 0 {
					t.Fatalf("run: %+v, %v; want %d done", res, err, c.done)
				}
				got := rdb.LRange(ctx, l.key, 0, -1).Val()
				if len(got) != c.pushed {
					t.Fatalf("%d tasks are left, want the %d pushed since", len(got), c.pushed)
				}
				for _, e := range got {
					if !strings.HasPrefix(e, "new-") {
						t.Fatalf("%s is left", e)
					}
				}
			})
		}
	}
}
