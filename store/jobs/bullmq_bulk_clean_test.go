package jobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// bullmqCleanRead is what store/testdata/node/bullmq_clean.mjs prints: queue "clean"'s
// getJobCounts() and each job as getJob() reads it, with its state and logs.
type bullmqCleanRead struct {
	Counts map[string]int64
	Jobs   map[string]json.RawMessage
}

func bullmqClean(t *testing.T, rdb *redis.Client, args ...string) bullmqCleanRead {
	t.Helper()
	var out bullmqCleanRead
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	redistest.RunFixture(t, node, redistest.NodeDir(), &out, append([]string{"bullmq_clean.mjs", "redis://" + rdb.Options().Addr}, args...)...)
	return out
}

// cleanEvents reads queue "clean"'s events stream: every entry but "cleaned" with its fields in
// order, and the total of the "cleaned" entries' counts (BullMQ adds one a call, hourglass one a
// chunk).
func cleanEvents(t *testing.T, rdb *redis.Client) (string, int64) {
	t.Helper()
	var out []string
	var cleaned int64
	for _, m := range rdb.XRange(t.Context(), bullmqPrefix()+":clean:events", "-", "+").Val() {
		if m.Values["event"] == "cleaned" {
			n, err := strconv.ParseInt(fmt.Sprint(m.Values["count"]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			cleaned += n
			continue
		}
		out = append(out, fmt.Sprint(m.Values))
	}
	return strings.Join(out, "\n"), cleaned
}

// wantSameCleaned fails unless a and b hold the same keys with the same DUMP and expiry but for the
// events stream, or, for a hash Redis keeps as a hash table (a RESTORE of the same DUMP may order
// its fields otherwise), the same fields.
func wantSameCleaned(t *testing.T, ra, rb *redis.Client, a, b map[string]string, what string) {
	t.Helper()
	delete(a, bullmqPrefix()+":clean:events")
	delete(b, bullmqPrefix()+":clean:events")
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			t.Errorf("%s: %s is only in ours", what, k)
		case v != w && ra.ObjectEncoding(t.Context(), k).Val() == "hashtable":
			if x, y := hashtableView(t, ra, k), hashtableView(t, rb, k); x != y {
				t.Errorf("%s: %s differs:\n%s\n%s", what, k, x, y)
			}
		case v != w:
			t.Errorf("%s: %s differs (%s)", what, k, ra.Type(t.Context(), k).Val())
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s is only in theirs", what, k)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// cleanCase is one section's delete all, held to BullMQ's Queue.clean of states.
type cleanCase struct {
	sec              TaskSection
	states           []string
	done, left, gone int64
}

// cleanBoth does delete all of c.sec on ours, in chunks of chunk, and Queue.clean(0, 0, state) of
// c.states on theirs, and fails unless the two leave every key the same (DUMP and expiry; the
// events stream by its entries, the "cleaned" counts summed to cleaned) and BullMQ reads the two
// alike. It returns what undoes ours.
func cleanBoth(t *testing.T, ours, theirs *redis.Client, c cleanCase, chunk int, cleaned int64) []UndoTask {
	t.Helper()
	res, undo := runBulkChunk(t.Context(), t, ours, Source{Layout: BullMQ}.Queue("clean"), c.sec, ActionDelete, chunk, nil)
	if res.Done != c.done || res.Left != c.left || res.Gone != c.gone || res.Chunks < 2 {
		t.Fatalf("delete all of %s: %+v", c.sec, res)
	}
	if c.left > 0 && !strings.Contains(res.Refused, "job scheduler") {
		t.Fatalf("delete all of %s left a job for %q", c.sec, res.Refused)
	}
	theirsRead := bullmqClean(t, theirs, append([]string{"clean"}, c.states...)...)
	wantSameCleaned(t, ours, theirs, dumpKeysMatch(t, ours, "*"), dumpKeysMatch(t, theirs, "*"), "delete all of "+string(c.sec))
	oe, on := cleanEvents(t, ours)
	te, tn := cleanEvents(t, theirs)
	if oe != te || on != tn || on != cleaned {
		t.Fatalf("after delete all of %s, events differ: %d cleaned, BullMQ's %d, want %d\n%s\n--\n%s", c.sec, on, tn, cleaned, oe, te)
	}
	if ourRead := bullmqClean(t, ours, "read"); !sameJSON(ourRead, theirsRead) {
		t.Fatalf("after delete all of %s BullMQ reads ours as %v, its own as %v", c.sec, ourRead.Counts, theirsRead.Counts)
	}
	return undo
}

// wantUndone undoes undo on rdb (expecting restored jobs put back and there left as they are,
// twice: the second time nothing is restored) and fails unless every key is what before holds
// and BullMQ reads every job, with its logs, as read.
func wantUndone(t *testing.T, rdb *redis.Client, undo []UndoTask, restored, there int64, before map[string]string, expiry map[string]int64, read bullmqCleanRead) {
	t.Helper()
	if ur, err := Undo(t.Context(), rdb, undo, 7, nil); err != nil || ur.Restored != restored || ur.There != there {
		t.Fatalf("undo: %+v, %v; want %d restored, %d there", ur, err, restored, there)
	}
	now := dumpKeysMatch(t, rdb, "*")
	expired := expiredSince(t, rdb, now, before, expiry)
	wantSameCleaned(t, rdb, rdb, before, now, "undone")
	after := expiries(t, rdb)
	for k, at := range expiry {
		if after[k] != at && !expired[k] {
			t.Fatalf("undone, %s expires at %d, before at %d", k, after[k], at)
		}
	}
	if readAfter := bullmqClean(t, rdb, "read"); !sameJSON(readAfter, read) {
		t.Fatalf("undone, BullMQ reads %v, before %v", readAfter.Counts, read.Counts)
	}
	if ur, err := Undo(t.Context(), rdb, undo, 7, nil); err != nil || ur.Restored != 0 {
		t.Fatalf("undo again: %+v, %v", ur, err)
	}
}

// expiredSince drops from before the keys BullMQ gave an expiry (its stalled-check) that have
// gone from now by reaching it, and returns them: the clock, not the undo, took them.
func expiredSince(t *testing.T, rdb *redis.Client, now, before map[string]string, expiry map[string]int64) map[string]bool {
	t.Helper()
	clock, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for k := range before {
		if _, ok := now[k]; !ok && expiry[k] > 0 && expiry[k] <= clock.UnixMilli() {
			gone[k] = true
			delete(before, k)
		}
	}
	return gone
}

// hashtableView is a hash's fields or a set's members, in order, for a key Redis keeps as a hash
// table.
func hashtableView(t *testing.T, rdb *redis.Client, k string) string {
	if rdb.Type(t.Context(), k).Val() == "set" {
		return fmt.Sprint(slices.Sorted(slices.Values(rdb.SMembers(t.Context(), k).Val())))
	}
	return fmt.Sprint(rdb.HGetAll(t.Context(), k).Val())
}

// TestBulkBullMQCleanDoesWhatQueueCleanDoes: on identical copies of queues BullMQ itself filled
// (jobs with logs, a deduplicated job, a job scheduler's next job, a flow's parent waiting with
// its children's results), hourglass's delete all of the failed, delayed and waiting jobs, in
// chunks of 5, and BullMQ's own Queue.clean(0, 0, state) of failed, delayed, then wait and
// prioritized leave every key the same (DUMP and expiry; the events stream by its entries, the
// "cleaned" counts summed), and BullMQ's getJobCounts and getJob agree. Undone, every key is
// byte for byte what it was, and BullMQ reads each job, with its logs, as before.
func TestBulkBullMQCleanDoesWhatQueueCleanDoes(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	bullmqClean(t, ours, "fill", "12")
	copyKeys(t, ours, theirs)
	read, before, expiry := bullmqClean(t, ours, "read"), dumpKeysMatch(t, ours, "*"), expiries(t, ours)
	var undo []UndoTask
	var done int64
	for _, c := range []cleanCase{
		{SectionDead, []string{"failed"}, 13, 0, 0},                 // f0..f11 and the scheduler's first job
		{SectionLater, []string{"delayed"}, 13, 1, 0},               // d0..d11, dedup; the scheduler's next job left
		{SectionWaiting, []string{"wait", "prioritized"}, 19, 0, 0}, // p1, w0..w11, pr0..pr5
	} {
		done += c.done
		undo = append(undo, cleanBoth(t, ours, theirs, c, 5, done)...)
	}
	if expiry["bull:clean:de:dd"] <= 0 {
		t.Fatalf("the deduplication key has no expiry: %v", expiry)
	}
	wantUndone(t, ours, undo, done, 1, before, expiry, read) // there: the scheduler's job, left
}

// TestBulkBullMQCleanOfAPausedQueue: a paused queue's waiting jobs (in paused, and prioritized)
// are deleted as Queue.clean(0, 0, 'paused') and 'prioritized' delete them, and put back in
// their places.
func TestBulkBullMQCleanOfAPausedQueue(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	bullmqClean(t, ours, "fill", "8")
	bullmqClean(t, ours, "pause")
	if n := ours.LLen(t.Context(), "bull:clean:paused").Val(); n != 9 {
		t.Fatalf("BullMQ's pause left %d jobs in paused, want 9", n)
	}
	copyKeys(t, ours, theirs)
	read, before, expiry := bullmqClean(t, ours, "read"), dumpKeysMatch(t, ours, "*"), expiries(t, ours)
	undo := cleanBoth(t, ours, theirs, cleanCase{SectionWaiting, []string{"paused", "prioritized"}, 13, 0, 0}, 4, 13)
	wantUndone(t, ours, undo, 13, 0, before, expiry, read)
}

// expiries are every key's PEXPIRETIME (-1: none), but the events stream's.
func expiries(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	it := rdb.Scan(t.Context(), 0, "*", 1000).Iterator()
	for it.Next(t.Context()) {
		if k := it.Val(); k != bullmqPrefix()+":clean:events" {
			out[k] = rdb.Do(t.Context(), "PEXPIRETIME", k).Val().(int64)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// bullmqPrefix is the prefix the fixture writes under ($BULLMQ_PREFIX, "bull" when unset).
func bullmqPrefix() string { return cmp.Or(os.Getenv("BULLMQ_PREFIX"), "bull") }

func sameJSON(a, b bullmqCleanRead) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestBulkBullMQCleanOfPendingChildren: failed children still pending for their flow's parent,
// which waits for one more, leave the parent's dependencies as Queue.clean(0, 0, 'failed') has
// them leave (a chunk each), and, undone, the dependencies set is byte for byte as it was.
func TestBulkBullMQCleanOfPendingChildren(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	bullmqClean(t, ours, "flow")
	if n := ours.SCard(t.Context(), "bull:other:p3:dependencies").Val(); n != 3 {
		t.Fatalf("p3 waits for %d children, want 3", n)
	}
	copyKeys(t, ours, theirs)
	read, before, expiry := bullmqClean(t, ours, "read"), dumpKeysMatch(t, ours, "*"), expiries(t, ours)
	undo := cleanBoth(t, ours, theirs, cleanCase{SectionDead, []string{"failed"}, 2, 0, 0}, 1, 2)
	if got := ours.SMembers(t.Context(), "bull:other:p3:dependencies").Val(); len(got) != 1 {
		t.Fatalf("p3 waits for %v after its failed children were deleted", got)
	}
	wantUndone(t, ours, undo, 2, 0, before, expiry, read) // two jobs (and their two dependencies, counted as keys)
}

// TestBulkBullMQCleanLeavesAPendingChild: a failed job, the last still pending for its flow's
// parent in another queue, is left with the reason (BullMQ's clean would move the parent to its
// queue's wait with it), and nothing is written.
func TestBulkBullMQCleanLeavesAPendingChild(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	bullmqClean(t, rdb, "pending")
	before := dumpKeysMatch(t, rdb, "*")
	res, _ := runBulkChunk(t.Context(), t, rdb, Source{Layout: BullMQ}.Queue("clean"), SectionDead, ActionDelete, 5, nil)
	if res.Done != 0 || res.Left != 1 || !strings.Contains(res.Refused, "pending child of a flow") {
		t.Fatalf("delete all of a pending child: %+v", res)
	}
	wantSameCleaned(t, rdb, rdb, before, dumpKeysMatch(t, rdb, "*"), "a pending child left")
}

// TestBulkBullMQCleanUndoLeavesAKeyThatHasExpired: a job whose deduplication key would have
// expired by the time of the undo comes back without it, as if it had stayed; the job's hash and
// its place come back all the same.
func TestBulkBullMQCleanUndoLeavesAKeyThatHasExpired(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	bullmqClean(t, rdb, "fill", "2")
	res, undo := runBulkChunk(t.Context(), t, rdb, Source{Layout: BullMQ}.Queue("clean"), SectionLater, ActionDelete, 5, nil)
	if res.Done != 3 || rdb.Exists(t.Context(), "bull:clean:de:dd", "bull:clean:dedup").Val() != 0 {
		t.Fatalf("delete all of later: %+v", res)
	}
	var aged bool
	for i, u := range undo {
		for k, key := range u.Keys {
			if key.Key == "bull:clean:de:dd" {
				undo[i].Keys[k].ExpireAt, aged = 1, true
			}
		}
	}
	if !aged {
		t.Fatalf("no record of the deduplication key: %+v", undo)
	}
	if ur, err := Undo(t.Context(), rdb, undo, 7, nil); err != nil || ur.Restored != 3 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if rdb.Exists(t.Context(), "bull:clean:de:dd").Val() != 0 || rdb.ZScore(t.Context(), "bull:clean:delayed", "dedup").Err() != nil ||
		rdb.Exists(t.Context(), "bull:clean:dedup").Val() != 1 {
		t.Fatal("undone, the job did not come back without its expired deduplication key")
	}
}

// TestBulkBullMQCleanOnACluster: on a 3-master Redis Cluster holding a queue BullMQ wrote under a
// hash-tagged prefix ({bull}), every chunk of delete all is one script in the queue's slot;
// copied back off the cluster, the queue is what BullMQ's own Queue.clean of the same states
// leaves, and, undone, what it was.
func TestBulkBullMQCleanOnACluster(t *testing.T) {
	t.Setenv("BULLMQ_PREFIX", "{bull}")
	filled, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	bullmqClean(t, filled, "fill", "6")
	copyKeys(t, filled, theirs)
	before, expiry := dumpKeysMatch(t, filled, "*"), expiries(t, filled)
	cl := redistest.StartCluster(t, 3).Client(t)
	copyExact(t, filled, cl)
	q := Source{Layout: BullMQ, Prefix: "{bull}"}.Queue("clean")
	var undo []UndoTask
	for sec, want := range map[TaskSection]int64{SectionDead: 7, SectionLater: 7, SectionWaiting: 10} {
		res, u := runBulkChunk(t.Context(), t, cl, q, sec, ActionDelete, 4, nil)
		if res.Done != want || res.Chunks < 2 {
			t.Fatalf("delete all of %s on a cluster: %+v", sec, res)
		}
		undo = append(undo, u...)
	}
	bullmqClean(t, theirs, "clean", "failed", "delayed", "wait", "prioritized")
	back := offCluster(t, cl)
	wantSameCleaned(t, back, theirs, dumpKeysMatch(t, back, "*"), dumpKeysMatch(t, theirs, "*"), "delete all on a cluster")
	if _, err := Undo(t.Context(), cl, undo, 7, nil); err != nil {
		t.Fatal(err)
	}
	back = offCluster(t, cl)
	wantSameCleaned(t, back, filled, dumpKeysMatch(t, back, "*"), before, "undone on a cluster")
	for k, at := range expiries(t, back) {
		if at != expiry[k] {
			t.Fatalf("undone on a cluster, %s expires at %d, before at %d", k, at, expiry[k])
		}
	}
}

// offCluster copies every key of the cluster to a new server, byte for byte.
func offCluster(t *testing.T, cl *redis.ClusterClient) *redis.Client {
	t.Helper()
	back := redistest.Start(t).Client(t)
	var masters []*redis.Client
	var mu sync.Mutex
	if err := cl.ForEachMaster(t.Context(), func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters = append(masters, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range masters {
		copyExact(t, c, back)
	}
	return back
}

// copyExact copies every key of from to to, byte for byte, with its expiry as an absolute time.
func copyExact(t *testing.T, from *redis.Client, to redis.UniversalClient) {
	t.Helper()
	it := from.Scan(t.Context(), 0, "*", 1000).Iterator()
	for it.Next(t.Context()) {
		k := it.Val()
		at := max(from.Do(t.Context(), "PEXPIRETIME", k).Val().(int64), 0)
		if err := to.Do(t.Context(), "RESTORE", k, at, from.Dump(t.Context(), k).Val(), "ABSTTL", "REPLACE").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
}
