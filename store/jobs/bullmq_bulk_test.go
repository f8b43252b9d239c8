package jobs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// bullmqBulk runs store/testdata/node/bullmq_bulk.mjs and returns the queue's getJobCounts().
func bullmqBulk(t *testing.T, rdb *redis.Client, args ...string) map[string]int64 {
	t.Helper()
	var counts map[string]int64
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	redistest.RunFixture(t, node, redistest.NodeDir(), &counts, append([]string{"bullmq_bulk.mjs", "redis://" + rdb.Options().Addr}, args...)...)
	return counts
}

// bullmqBulkView is queue "bulk" as a map key to a text: every job's hash field by field, the
// wait list in order, each set member by member with its score, the meta and marker, and the
// events stream as its "event/jobId/prev" entries in order (their ids are times).
func bullmqBulkView(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	it := rdb.Scan(ctx, 0, "bull:bulk:*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		switch rdb.Type(ctx, k).Val() {
		case "hash":
			h := rdb.HGetAll(ctx, k).Val()
			out[k] = fmt.Sprint(slices.Sorted(maps.Keys(h)), h)
		case "list":
			out[k] = strings.Join(rdb.LRange(ctx, k, 0, -1).Val(), ",")
		case "zset":
			out[k] = fmt.Sprint(rdb.ZRangeWithScores(ctx, k, 0, -1).Val())
		case "stream":
			var ev []string
			for _, m := range rdb.XRange(ctx, k, "-", "+").Val() {
				ev = append(ev, fmt.Sprint(m.Values["event"], "/", m.Values["jobId"], "/", m.Values["prev"]))
			}
			out[k] = strings.Join(ev, ",")
		default:
			out[k] = rdb.Get(ctx, k).Val()
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBulkBullMQDoesWhatItsQueueDoes: on identical copies of a queue BullMQ itself filled,
// hourglass's retry all of the failed jobs and promote all of the delayed ones, and BullMQ's own
// Queue.retryJobs({state: 'failed'}) and Queue.promoteJobs(), leave every key of the queue the
// same (each job's hash, the wait list in order, the sets, meta, marker, and the events stream's
// entries in order); BullMQ's getJobCounts agrees. Undone, hourglass's copy is byte for byte
// what it was but for the events stream, which keeps the "waiting" entries, and the marker.
func TestBulkBullMQDoesWhatItsQueueDoes(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	bullmqBulk(t, ours, "fill", "40")
	copyKeys(t, ours, theirs)
	before, beforeView := dumpKeysMatch(t, ours, "bull:bulk:*"), bullmqBulkView(t, ours)
	q := Source{Layout: BullMQ}.Queue("bulk")
	var undo []UndoTask
	for _, s := range []struct {
		sec  TaskSection
		verb string
	}{{SectionDead, "retry"}, {SectionLater, "promote"}} {
		res, u := runBulkChunk(t.Context(), t, ours, q, s.sec, ActionRunNow, 16, nil)
		counts := bullmqBulk(t, theirs, s.verb)
		if res.Done != 40 || res.Gone+res.Left != 0 || res.Chunks != 3 {
			t.Fatalf("%s all: %+v", s.verb, res)
		}
		if a, b := bullmqBulkView(t, ours), bullmqBulkView(t, theirs); !equalViews(a, b) {
			t.Fatalf("after %s all the queue differs from BullMQ's:\n%s", s.verb, diffViews(a, b))
		}
		if counts["failed"] != 0 || counts["waiting"] != map[string]int64{"retry": 40, "promote": 80}[s.verb] {
			t.Fatalf("BullMQ counts %v after %s all", counts, s.verb)
		}
		undo = append(undo, u...)
	}
	if ur, err := Undo(t.Context(), ours, undo, 50, nil); err != nil || ur.Restored != 80 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	after, afterView := dumpKeysMatch(t, ours, "bull:bulk:*"), bullmqBulkView(t, ours)
	for _, k := range []string{"bull:bulk:events", "bull:bulk:marker"} {
		delete(before, k)
		delete(after, k)
		delete(beforeView, k)
		delete(afterView, k)
	}
	if len(before) != len(after) || !equalViews(beforeView, afterView) {
		t.Fatalf("undone, %d keys before and %d after:\n%s", len(before), len(after), diffViews(afterView, beforeView))
	}
	for k, v := range before {
		// a hash Redis keeps as a hash table (a failed job's, with its stack trace) may list its
		// fields in another order after a RESTORE of the very same DUMP: compared field by field
		if after[k] != v && ours.ObjectEncoding(t.Context(), k).Val() != "hashtable" {
			t.Fatalf("undone, %s differs (%s)", k, ours.ObjectEncoding(t.Context(), k).Val())
		}
	}
}

// TestHashTagged: a BullMQ queue's keys share a slot when the first "{" of their common start
// opens a non-empty tag, as Redis Cluster hashes a key.
func TestHashTagged(t *testing.T) {
	for prefix, want := range map[string]bool{
		"bull:q:": false, "{bull}:q:": true, "bull:{q}:": true, "b{}:{q}:": false, "b{:q:": false,
	} {
		if got := hashTagged(prefix); got != want {
			t.Errorf("hashTagged(%q) = %v, want %v", prefix, got, want)
		}
	}
}
