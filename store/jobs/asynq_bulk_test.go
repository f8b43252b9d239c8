package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// fillAsynqBulk has asynq itself fill queue "bulk": a Server fails 30 tasks with retries left
// (retry, due again in an hour) and 30 with MaxRetry(0) (archived) and stops; then 40 tasks are
// scheduled an hour ahead, 10 of them unique (holding a lock).
func fillAsynqBulk(t *testing.T, opt asynq.RedisConnOpt) {
	t.Helper()
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	enqueue := func(task *asynq.Task, opts ...asynq.Option) {
		t.Helper()
		if _, err := client.Enqueue(task, append(opts, asynq.Queue("bulk"))...); err != nil {
			t.Fatal(err)
		}
	}
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency:    4,
		Queues:         map[string]int{"bulk": 1},
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour },
		LogLevel:       asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return errors.New("fails") })); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		enqueue(asynq.NewTask("fail", fmt.Appendf(nil, "r%d", i)), asynq.MaxRetry(3))
		enqueue(asynq.NewTask("fail", fmt.Appendf(nil, "a%d", i)), asynq.MaxRetry(0))
	}
	redistest.Eventually(t, "asynq to fail 30 tasks to retry and 30 to archived", 30*time.Second, func() bool {
		q, err := insp.GetQueueInfo("bulk")
		return err == nil && q.Retry == 30 && q.Archived == 30
	})
	srv.Shutdown()
	for i := range 40 {
		opts := []asynq.Option{asynq.ProcessIn(time.Hour)}
		if i%4 == 0 {
			opts = append(opts, asynq.Unique(2*time.Hour))
		}
		enqueue(asynq.NewTask("later", fmt.Appendf(nil, "s%d", i)), opts...)
	}
}

// asynqView is every key of queue "bulk" by its content, as a map key to a text: strings as
// GET, hashes field by field, lists in order, sorted sets member by member with their scores
// (the archived set's without: asynq scores it by the clock of the moment).
func asynqView(t *testing.T, rdb redis.UniversalClient) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	var keys []string
	var mu sync.Mutex
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, "asynq:{bulk}:*", 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	}
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, scan) // the queue's keys share one slot: one master holds them
	} else {
		err = scan(ctx, rdb.(*redis.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		var v string
		switch rdb.Type(ctx, k).Val() {
		case "string":
			v = rdb.Get(ctx, k).Val()
		case "hash":
			h := rdb.HGetAll(ctx, k).Val()
			var f []string
			for name, val := range h {
				f = append(f, name+"="+val)
			}
			slices.Sort(f)
			v = strings.Join(f, "\x00")
		case "list":
			v = strings.Join(rdb.LRange(ctx, k, 0, -1).Val(), ",")
		case "zset":
			for _, z := range rdb.ZRangeWithScores(ctx, k, 0, -1).Val() {
				if strings.HasSuffix(k, ":archived") {
					v += fmt.Sprint(z.Member, ",")
				} else {
					v += fmt.Sprint(z.Member, "@", z.Score, ",")
				}
			}
		}
		out[k] = v
	}
	return out
}

// TestBulkAsynqDoesWhatItsInspectorDoes: on identical copies of a queue asynq itself filled,
// each bulk action of hourglass and the Inspector's own (RunAll*, ArchiveAll*, DeleteAll*) leave
// every key of the queue the same (each task's hash field by field, the pending list in order,
// each set member by member, the unique locks); the copy hourglass acted on is then undone, last
// action first, and is byte for byte what it was.
func TestBulkAsynqDoesWhatItsInspectorDoes(t *testing.T) {
	src := redistest.Start(t)
	fillAsynqBulk(t, asynq.RedisClientOpt{Addr: src.Addr})
	q := Source{Layout: Asynq}.Queue("bulk")
	type step struct {
		sec    TaskSection
		a      TaskAction
		theirs func(*asynq.Inspector) (int, error)
	}
	for i, seq := range [][]step{
		{
			{SectionRetry, ActionArchive, func(i *asynq.Inspector) (int, error) { return i.ArchiveAllRetryTasks("bulk") }},
			{SectionDead, ActionRunNow, func(i *asynq.Inspector) (int, error) { return i.RunAllArchivedTasks("bulk") }},
			{SectionLater, ActionArchive, func(i *asynq.Inspector) (int, error) { return i.ArchiveAllScheduledTasks("bulk") }},
			{SectionDead, ActionDelete, func(i *asynq.Inspector) (int, error) { return i.DeleteAllArchivedTasks("bulk") }},
		},
		{
			{SectionRetry, ActionRunNow, func(i *asynq.Inspector) (int, error) { return i.RunAllRetryTasks("bulk") }},
			{SectionLater, ActionDelete, func(i *asynq.Inspector) (int, error) { return i.DeleteAllScheduledTasks("bulk") }},
		},
		{
			{SectionLater, ActionRunNow, func(i *asynq.Inspector) (int, error) { return i.RunAllScheduledTasks("bulk") }},
			{SectionRetry, ActionDelete, func(i *asynq.Inspector) (int, error) { return i.DeleteAllRetryTasks("bulk") }},
		},
	} {
		t.Run(fmt.Sprint("sequence ", i), func(t *testing.T) {
			ours, theirs := redistest.Start(t).Client(t), redistest.Start(t)
			copyKeys(t, src.Client(t), ours)
			copyKeys(t, src.Client(t), theirs.Client(t))
			insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: theirs.Addr})
			defer insp.Close()
			before, beforeView := dumpKeysMatch(t, ours, "asynq:{bulk}:*"), asynqView(t, ours)
			var undo []UndoTask
			for _, s := range seq {
				plan, err := PlanBulk(t.Context(), ours, q, s.sec, s.a, 1000, time.Now())
				if err != nil || plan.Tasks <= 0 || plan.Bytes <= 0 {
					t.Fatalf("plan of %s %s: %+v, %v", s.a, s.sec, plan, err)
				}
				res, u := runBulkChunk(t.Context(), t, ours, q, s.sec, s.a, 16, nil)
				n, err := s.theirs(insp)
				if err != nil || res.Done != int64(n) || res.Done != plan.Tasks || res.Gone+res.Left != 0 || res.Chunks < 2 {
					t.Fatalf("%s all %s: ours %+v; asynq's %d, %v", s.a, s.sec, res, n, err)
				}
				if a, b := asynqView(t, ours), asynqView(t, theirs.Client(t)); !equalViews(a, b) {
					t.Fatalf("after %s all %s the queue differs from asynq's:\n%s", s.a, s.sec, diffViews(a, b))
				}
				undo = append(undo, u...)
			}
			ur, err := Undo(t.Context(), ours, undo, 50, nil)
			if err != nil || ur.Taken+ur.Conflict+ur.Expired != 0 {
				t.Fatalf("undo: %+v, %v", ur, err)
			}
			wantSameAsynq(t, ours, before, beforeView, "bulk actions then undo")
		})
	}
}

// runBulkChunk runs a bulk action in chunks of n, collecting what each chunk recorded.
func runBulkChunk(ctx context.Context, t *testing.T, rdb redis.UniversalClient, q Queue, sec TaskSection, a TaskAction, n int, progress func(BulkResult)) (BulkResult, []UndoTask) {
	t.Helper()
	var undo []UndoTask
	res, err := RunBulk(ctx, rdb, q, sec, a, rdb.Time(t.Context()).Val(), BulkOptions{
		Chunk: n, MaxCall: -1, Progress: progress,
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, undo
}

// wantSameAsynq fails unless every key of queue "bulk" is byte for byte (DUMP and TTL) what it
// was, but for a hash Redis keeps as a hash table: its DUMP lists the fields in the table's
// order, which a RESTORE of the very same DUMP may change, so it is compared field by field.
func wantSameAsynq(t *testing.T, rdb *redis.Client, before map[string]string, view map[string]string, what string) {
	t.Helper()
	after, afterView := dumpKeysMatch(t, rdb, "asynq:{bulk}:*"), asynqView(t, rdb)
	if len(after) != len(before) || !equalViews(view, afterView) {
		t.Fatalf("%s: %d keys before, %d after:\n%s", what, len(before), len(after), diffViews(afterView, view))
	}
	for k, v := range before {
		if after[k] != v && rdb.ObjectEncoding(t.Context(), k).Val() != "hashtable" {
			t.Fatalf("%s changed %q (%s)", what, k, rdb.ObjectEncoding(t.Context(), k).Val())
		}
	}
}

func equalViews(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func diffViews(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: ours %.200q, asynq's %.200q", k, v, b[k]))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+": only in asynq's")
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestBulkAsynqOnACluster: on a 3-master Redis Cluster asynq itself filled, hourglass archives
// every scheduled task and runs every archived one in chunks (each chunk one script: the queue's
// keys share a hash slot), asynq's Inspector then counts them all pending, and undoing both puts
// the queue back as it was, key by key.
func TestBulkAsynqOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	opt := asynq.RedisClusterClientOpt{Addrs: cl.Addrs}
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	for i := range 40 {
		opts := []asynq.Option{asynq.Queue("bulk"), asynq.ProcessIn(time.Hour)}
		if i%4 == 0 {
			opts = append(opts, asynq.Unique(2*time.Hour))
		}
		if _, err := client.Enqueue(asynq.NewTask("later", fmt.Appendf(nil, "c%d", i)), opts...); err != nil {
			t.Fatal(err)
		}
	}
	before := asynqView(t, rdb)
	q := Source{Layout: Asynq}.Queue("bulk")
	var undo []UndoTask
	for _, s := range []struct {
		sec TaskSection
		a   TaskAction
	}{{SectionLater, ActionArchive}, {SectionDead, ActionRunNow}} {
		res, u := runBulkChunk(t.Context(), t, rdb, q, s.sec, s.a, 16, nil)
		if res.Done != 40 || res.Chunks != 3 {
			t.Fatalf("%s all %s on the cluster: %+v", s.a, s.sec, res)
		}
		undo = append(undo, u...)
	}
	if qi, err := insp.GetQueueInfo("bulk"); err != nil || qi.Pending != 40 || qi.Scheduled+qi.Archived != 0 {
		t.Fatalf("asynq counts %+v, %v; want 40 pending", qi, err)
	}
	if ur, err := Undo(t.Context(), rdb, undo, 50, nil); err != nil || ur.Restored != 80 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if after := asynqView(t, rdb); !equalViews(before, after) {
		t.Fatalf("undone, the queue differs:\n%s", diffViews(after, before))
	}
}

// TestBulkAsynqArchiveTrimsAsAsynqDoes: with asynq's archive full (its ArchiveAllScheduledTasks
// archived 10000 tasks, and trimmed them to 9999), archiving 30 more scheduled tasks in chunks
// trims the oldest as the Inspector's one script does, on an identical copy; undone, the queue
// is what it was, the trimmed tasks back in the archive.
func TestBulkAsynqArchiveTrimsAsAsynqDoes(t *testing.T) {
	src := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: src.Addr}
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	enqueue := func(n int, tag string) { // four at a time
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					if _, err := client.Enqueue(asynq.NewTask("later", fmt.Appendf(nil, "%s%d", tag, i)), asynq.Queue("bulk"), asynq.ProcessIn(time.Hour)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	enqueue(asynqMaxArchive, "old")
	if n, err := insp.ArchiveAllScheduledTasks("bulk"); err != nil || n != asynqMaxArchive {
		t.Fatalf("asynq archived %d, %v", n, err)
	}
	enqueue(30, "new")
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t)
	copyKeys(t, src.Client(t), ours)
	copyKeys(t, src.Client(t), theirs.Client(t))
	before, beforeView := dumpKeysMatch(t, ours, "asynq:{bulk}:*"), asynqView(t, ours)
	q := Source{Layout: Asynq}.Queue("bulk")
	res, undo := runBulkChunk(t.Context(), t, ours, q, SectionLater, ActionArchive, 8, nil)
	tinsp := asynq.NewInspector(asynq.RedisClientOpt{Addr: theirs.Addr})
	defer tinsp.Close()
	n, err := tinsp.ArchiveAllScheduledTasks("bulk")
	if err != nil || res.Done != 30 || int64(n) != res.Done {
		t.Fatalf("archive all: ours %+v; asynq's %d, %v", res, n, err)
	}
	if a, b := asynqView(t, ours), asynqView(t, theirs.Client(t)); !equalViews(a, b) {
		t.Fatalf("after archive all the queue differs from asynq's:\n%s", diffViews(a, b))
	}
	if got := ours.ZCard(t.Context(), "asynq:{bulk}:archived").Val(); got != asynqMaxArchive-1 {
		t.Fatalf("archived holds %d, want asynq's %d", got, asynqMaxArchive-1)
	}
	if ur, err := Undo(t.Context(), ours, undo, 50, nil); err != nil || ur.Taken+ur.Conflict+ur.Expired != 0 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantSameAsynq(t, ours, before, beforeView, "archive all then undo")
}

// TestBulkRefusedOnAClusterWhenAChunkWouldSpanSlots: on a Redis Cluster, a bulk action whose
// chunk touches keys of more than one hash slot (Sidekiq's retry moving jobs to queues, its kill
// into the dead set, its clear of a queue, RQ's deletes, requeues and empty of a queue, BullMQ's retry and delete all under its default prefix) is
// refused before it reads or writes anything,
// with the reason, and never fails with CROSSSLOT midway; one whose chunk touches one key
// (deleting from a Sidekiq set) is not refused.
func TestBulkRefusedOnAClusterWhenAChunkWouldSpanSlots(t *testing.T) {
	rdb := redistest.StartCluster(t, 3).Client(t)
	for _, c := range []struct {
		q   Queue
		sec TaskSection
		a   TaskAction
		why string
	}{
		{Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionRunNow, "Sidekiq's keys are not in one hash slot"},
		{Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionArchive, "Sidekiq's keys are not in one hash slot"},
		{Source{Layout: RQ}.Queue("work"), SectionDead, ActionDelete, "RQ's keys are not in one hash slot"},
		{Source{Layout: RQ}.Queue("work"), SectionDead, ActionRunNow, "RQ's keys are not in one hash slot"},
		{Source{Layout: RQ}.Queue("work"), SectionWaiting, ActionDelete, "RQ's keys are not in one hash slot"},
		{Source{Layout: Sidekiq}.Queue("default"), SectionWaiting, ActionDelete, "Sidekiq's keys are not in one hash slot"},
		{Source{Layout: BullMQ}.Queue("work"), SectionDead, ActionRunNow, "BullMQ's keys without a hash-tagged prefix are not in one hash slot"},
		{Source{Layout: BullMQ}.Queue("work"), SectionWaiting, ActionDelete, "BullMQ's keys without a hash-tagged prefix are not in one hash slot"},
	} {
		_, perr := PlanBulk(t.Context(), rdb, c.q, c.sec, c.a, 1000, time.Now())
		_, rerr := RunBulk(t.Context(), rdb, c.q, c.sec, c.a, time.Now(), BulkOptions{})
		for _, err := range []error{perr, rerr} {
			if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), c.why+": a chunk could not be atomic on a cluster") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %s: %v, want one line saying %q", c.sec, c.a, err, c.why)
			}
		}
	}
	if _, err := RunBulk(t.Context(), rdb, Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionDelete, time.Now(), BulkOptions{}); err != nil {
		t.Errorf("deleting from one set on a cluster: %v", err)
	}
	var keys int64
	var mu sync.Mutex
	if err := rdb.ForEachMaster(t.Context(), func(ctx context.Context, c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		mu.Lock()
		keys += n
		mu.Unlock()
		return err
	}); err != nil || keys != 0 {
		t.Fatalf("the cluster holds %d keys after refusals, %v", keys, err)
	}
}
