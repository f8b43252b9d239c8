package jobs

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// celeryPurge runs store/jobs/testdata/celery/purge.py's mode on rdb under prefix.
func celeryPurge(t *testing.T, rdb *redis.Client, prefix string, out any, args ...string) {
	t.Helper()
	redistest.RunFixture(t, redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis"), "testdata/celery", out,
		append([]string{"purge.py", "redis://" + rdb.Options().Addr + "/0", prefix}, args...)...)
}

// celeryCount is what purge.py prints: kombu's count of the queue, and what it sent or purged.
type celeryCount struct {
	Sent, Purged int64
	MessageCount int64 `json:"message_count"`
}

// celeryIDs are the task ids of messages kombu's consumer took, in its order.
func celeryIDs(ms []celeryTaken) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// TestBulkCeleryDeleteDoesWhatPurgeDoes: on two identical copies of a queue Celery itself filled
// (300 messages over the lists of priority steps 0, 3, 6 and 9, one of them delivered and not
// acknowledged), with and without a global_keyprefix, hourglass's delete all of the queue (in
// chunks, as the console runs its dry run's plan) and Celery's own purge (`celery purge -Q`'s
// queue_purge) leave every key the same: the lists gone, unacked, the bindings and the other
// queue kept. Undone, every key is what it was, and kombu's own consumer takes the queue's
// messages in the order it took them from an untouched copy; undone again, nothing is written.
func TestBulkCeleryDeleteDoesWhatPurgeDoes(t *testing.T) {
	for _, prefix := range []string{"", "app1:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			ours, theirs, kept := redistest.Start(t).Client(t), redistest.Start(t).Client(t), redistest.Start(t).Client(t)
			var sent celeryCount
			celeryPurge(t, ours, prefix, &sent, "send", "bulk", "300", "0", "hold")
			if sent.MessageCount != 299 {
				t.Fatalf("kombu counts %d waiting after sending 300 and taking 1", sent.MessageCount)
			}
			copyKeys(t, ours, theirs)
			copyKeys(t, ours, kept)
			before := dumpKeys(t, ours)
			ctx := t.Context()
			q := Source{Layout: Celery, Prefix: prefix}.Queue("bulk")
			plan, err := PlanBulk(ctx, ours, q, SectionWaiting, ActionDelete, 1000, ours.Time(ctx).Val())
			if err != nil || plan.Tasks != 299 || plan.Bytes <= 0 || len(plan.Lists) != 4 {
				t.Fatalf("plan: %+v, %v", plan, err)
			}
			for i, step := range []string{"", "\x06\x163", "\x06\x166", "\x06\x169"} {
				p := plan.Lists[i]
				if p.Key != prefix+"bulk"+step || p.Newest == nil || p.Tasks != ours.LLen(ctx, p.Key).Val() {
					t.Fatalf("plan's list %d: %+v, want %q in the order a worker takes them", i, p, prefix+"bulk"+step)
				}
			}
			var undo []UndoTask
			var progress []int64
			res, err := RunBulk(ctx, ours, q, SectionWaiting, ActionDelete, ours.Time(ctx).Val(), BulkOptions{
				Chunk: 32, MaxCall: -1, Limit: plan.Tasks, Lists: plan.Lists,
				Record:   func(u []UndoTask) error { undo = append(undo, u...); return nil },
				Progress: func(r BulkResult) { progress = append(progress, r.Done) },
			})
			if err != nil || res.Planned != 299 || res.Done != 299 || res.Gone+res.Left != 0 || res.Chunks < 10 {
				t.Fatalf("delete all: %+v, %v", res, err)
			}
			if len(progress) != res.Chunks || !slices.IsSorted(progress) || progress[len(progress)-1] != 299 {
				t.Fatalf("progress told %v over %d chunks", progress, res.Chunks)
			}
			var purged celeryCount
			celeryPurge(t, theirs, prefix, &purged, "purge", "bulk")
			if purged.Purged != 299 || purged.MessageCount != 0 {
				t.Fatalf("Celery's purge: %+v", purged)
			}
			wantSameKeys(t, ours, theirs, "*", "delete all and Celery's purge")
			if ours.HLen(ctx, prefix+"unacked").Val() != 1 {
				t.Fatal("the unacknowledged message left unacked")
			}
			if ur, err := Undo(ctx, ours, undo, 50, nil); err != nil || ur.Restored != 299 || ur.There+ur.Taken+ur.Conflict != 0 {
				t.Fatalf("undo: %+v, %v", ur, err)
			}
			wantSameDumps(t, ours, before, kept, "*", "delete all then undo")
			if ur, err := Undo(ctx, ours, undo, 50, nil); err != nil || ur.Restored != 0 || ur.There != 299 {
				t.Fatalf("undo again: %+v, %v", ur, err)
			}
			wantSameDumps(t, ours, before, kept, "*", "undo again")
			want := celeryIDs(readCelery(t, kept, prefix, "bulk").Queues["bulk"])
			got := readCelery(t, ours, prefix, "bulk")
			if len(want) != 299 || !slices.Equal(celeryIDs(got.Queues["bulk"]), want) || got.Unacked != 1 {
				t.Fatalf("kombu's consumer took %d messages after undo (%d unacked), want the %d of an untouched copy in its order",
					len(got.Queues["bulk"]), got.Unacked, len(want))
			}
		})
	}
}

// TestBulkCelerySpareWhatWasSentAfterTheDryRun: messages Celery sends after the dry run, to every
// priority list, are not deleted, though the lists were not empty; undone, the messages go back
// behind them at the tail, so kombu's consumer takes each list's old messages before its new ones,
// as it would have had nothing been deleted.
func TestBulkCelerySpareWhatWasSentAfterTheDryRun(t *testing.T) {
	ours, kept := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	const prefix = "app1:"
	var sent celeryCount
	celeryPurge(t, ours, prefix, &sent, "send", "bulk", "100", "0")
	ctx := t.Context()
	q := Source{Layout: Celery, Prefix: prefix}.Queue("bulk")
	plan, err := PlanBulk(ctx, ours, q, SectionWaiting, ActionDelete, 0, ours.Time(ctx).Val())
	if err != nil || plan.Tasks != 100 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	celeryPurge(t, ours, prefix, &sent, "send", "bulk", "20", "100")
	copyKeys(t, ours, kept)
	before := dumpKeys(t, ours)
	var undo []UndoTask
	res, err := RunBulk(ctx, ours, q, SectionWaiting, ActionDelete, ours.Time(ctx).Val(), BulkOptions{
		Chunk: 16, MaxCall: -1, Limit: plan.Tasks, Lists: plan.Lists,
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
	})
	if err != nil || res.Done != 100 || res.Gone+res.Left != 0 {
		t.Fatalf("delete all: %+v, %v", res, err)
	}
	st, err := Source{Layout: Celery, Prefix: prefix}.Stats(ctx, ours, "bulk", ours.Time(ctx).Val())
	if err != nil || st.Waiting != 20 {
		t.Fatalf("after delete all: %d waiting (%v), want the 20 sent after the dry run", st.Waiting, err)
	}
	for _, p := range plan.Lists { // what is left is each list's head, where Celery pushed since
		left, was := ours.LRange(ctx, p.Key, 0, -1).Val(), kept.LRange(ctx, p.Key, 0, -1).Val()
		if len(left) == 0 || !slices.Equal(left, was[:len(left)]) {
			t.Fatalf("%q keeps %d messages, not the %d at its head sent after the dry run", p.Key, len(left), len(was)-int(p.Tasks))
		}
	}
	if ur, err := Undo(ctx, ours, undo, 50, nil); err != nil || ur.Restored != 100 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantSameDumps(t, ours, before, kept, "*", "delete all then undo")
	want := celeryIDs(readCelery(t, kept, prefix, "bulk").Queues["bulk"])
	if got := celeryIDs(readCelery(t, ours, prefix, "bulk").Queues["bulk"]); len(want) != 120 || !slices.Equal(got, want) {
		t.Fatalf("kombu's consumer took %d messages after undo, want the %d of an untouched copy in its order", len(got), len(want))
	}
}

// TestBulkCeleryRefusals: Celery's in-flight messages and its other actions are refused, and so
// is delete all on a Redis Cluster unless a hash tag keeps a queue's lists in one slot.
func TestBulkCeleryRefusals(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, c := range []struct {
		q   Queue
		sec TaskSection
		a   TaskAction
	}{
		{Source{Layout: Celery}.SharedQueue(), SectionInFlight, ActionDelete},
		{Source{Layout: Celery}.SharedQueue(), SectionInFlight, ActionReturn},
		{Source{Layout: Celery}.Queue("q"), SectionWaiting, ActionRunNow},
	} {
		_, err := RunBulk(t.Context(), rdb, c.q, c.sec, c.a, rdb.Time(t.Context()).Val(), BulkOptions{})
		if !errors.Is(err, ErrNotSupported) || !errors.Is(BulkCheck(c.q, c.sec, c.a), ErrNotSupported) {
			t.Errorf("%s %s: %v, want ErrNotSupported", c.sec, c.a, err)
		}
	}
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{rdb.Options().Addr}})
	t.Cleanup(func() { cluster.Close() })
	for i, c := range []struct {
		prefix, queue string
		ok            bool
	}{{"", "q", false}, {"app1:", "q", false}, {"{app1}:", "q", true}, {"", "{q}", true}, {"{}", "q", false}} {
		_, err := bulkOpOn(cluster, Source{Layout: Celery, Prefix: c.prefix}.Queue(c.queue), SectionWaiting, ActionDelete)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrNotSupported) {
			t.Errorf("case %s: prefix %q queue %q on a cluster: %v", strconv.Itoa(i), c.prefix, c.queue, err)
		}
	}
}

// TestBulkCeleryWithAWorkerTaking: a worker (kombu's consumer) takes 5 messages while a chunk is
// under way, between its read and its script: they are counted gone, not deleted twice, and
// undo does not put back what the worker ran; kombu's consumer then takes the rest in their old
// order.
func TestBulkCeleryWithAWorkerTaking(t *testing.T) {
	ours, kept := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	var sent celeryCount
	celeryPurge(t, ours, "", &sent, "send", "bulk", "100", "0")
	copyKeys(t, ours, kept)
	ctx := t.Context()
	q := Source{Layout: Celery}.Queue("bulk")
	plan, err := PlanBulk(ctx, ours, q, SectionWaiting, ActionDelete, 0, ours.Time(ctx).Val())
	if err != nil || plan.Tasks != 100 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	var undo []UndoTask
	var taken struct{ Taken []string }
	chunks := 0
	res, err := RunBulk(ctx, ours, q, SectionWaiting, ActionDelete, ours.Time(ctx).Val(), BulkOptions{
		Chunk: 16, MaxCall: -1, Limit: plan.Tasks, Lists: plan.Lists,
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
		Wait: func(context.Context, int) error {
			if chunks++; chunks == 2 { // the chunk's messages are read and about to be recorded
				celeryPurge(t, ours, "", &taken, "take", "bulk", "5")
			}
			return nil
		},
	})
	if err != nil || res.Done != 95 || res.Gone != 5 || res.Left != 0 || len(taken.Taken) != 5 {
		t.Fatalf("delete all with a worker taking 5 (%d): %+v, %v", len(taken.Taken), res, err)
	}
	if n := ours.Exists(ctx, plan.Lists[0].Key, plan.Lists[3].Key).Val(); n != 0 {
		t.Fatalf("%d of the queue's lists left", n)
	}
	if ur, err := Undo(ctx, ours, undo, 50, nil); err != nil || ur.Restored != 95 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	order := celeryIDs(readCelery(t, kept, "", "bulk").Queues["bulk"])
	if len(order) != 100 || !slices.Equal(order[16:21], taken.Taken) {
		t.Fatalf("the worker took %v, not the 17th to 21st messages of %d", taken.Taken, len(order))
	}
	want := slices.Concat(order[:16], order[21:])
	if got := celeryIDs(readCelery(t, ours, "", "bulk").Queues["bulk"]); !slices.Equal(got, want) {
		t.Fatalf("kombu's consumer took %d messages after undo, want the 95 the worker left, in their order", len(got))
	}
}
