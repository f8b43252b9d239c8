package jobs

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// dumpKeys is every key of the server with its serialized value (DUMP) and whether it has a TTL
// (less those about to expire by themselves): two of these taken around an action that must write
// nothing are equal.
func dumpKeys(t *testing.T, rdb *redis.Client) map[string]string { return dumpKeysMatch(t, rdb, "*") }

// dumpKeysMatch is dumpKeys of the keys that match a SCAN MATCH pattern: those a library's
// process, still running, does not write to.
func dumpKeysMatch(t *testing.T, rdb *redis.Client, match string) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	it := rdb.Scan(ctx, 0, match, 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		v, err := rdb.Dump(ctx, k).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		ttl := rdb.PTTL(ctx, k).Val()
		if ttl >= 0 && ttl < 10*time.Second {
			continue // expiring by itself while the test looks
		}
		out[k] = v + "|ttl:" + map[bool]string{true: "none", false: "set"}[ttl == -1]
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantUnchanged fails when the server's keys differ from before.
func wantUnchanged(t *testing.T, rdb *redis.Client, before map[string]string, what string) {
	t.Helper()
	wantUnchangedMatch(t, rdb, "*", before, what)
}

// wantUnchangedMatch fails when the keys that match differ from before.
func wantUnchangedMatch(t *testing.T, rdb *redis.Client, match string, before map[string]string, what string) {
	t.Helper()
	after := dumpKeysMatch(t, rdb, match)
	if len(after) != len(before) {
		t.Fatalf("%s wrote: %d keys before, %d after", what, len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed %q", what, k)
		}
	}
}

// wantGone asserts err is ErrTaskGone and that nothing was written.
func wantGone(t *testing.T, rdb *redis.Client, before map[string]string, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrTaskGone) {
		t.Fatalf("%s: %v, want ErrTaskGone", what, err)
	}
	wantUnchanged(t, rdb, before, what)
}

// TestDelayQueueActs: on a queue its own writer filled, a later task run now is the next one a
// claim takes; an in-flight entry returned is due again and claimed again; a deleted task is
// gone; and each on a task no longer where the page showed it says ErrTaskGone and writes
// nothing.
func TestDelayQueueActs(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.DelayQueue("dq:{acts}", store.Milliseconds)
	now := s.Now()
	if err := q.Enqueue(ctx, now.Add(time.Hour), "later-1", "later-2"); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, now.Add(-time.Minute), "due-1"); err != nil {
		t.Fatal(err)
	}
	act := func(sec TaskSection, member string, a TaskAction) (string, error) {
		return DelayQueueOf(q.Key, q.InFlight, store.AutoUnit).Act(ctx, rdb, sec, Task{Member: member}, a, s.Now())
	}

	line, err := act(SectionLater, "later-2", ActionRunNow)
	if err != nil || !strings.Contains(line, `"later-2" is due now in "dq:{acts}"`) {
		t.Fatalf("run now: %q %v", line, err)
	}
	if sc := rdb.ZScore(ctx, q.Key, "later-2").Val(); sc > float64(s.Now().UnixMilli()) || sc < float64(now.UnixMilli()) {
		t.Fatalf("run now left score %v, want now (%d ms)", sc, now.UnixMilli())
	}
	// The queue's own claim now takes it with the due one, and leaves the other later task.
	c, err := q.Claim(ctx, 10, time.Minute)
	if err != nil || strings.Join(c.Tasks, ",") != "due-1,later-2" {
		t.Fatalf("claim after run now: %v %v", c.Tasks, err)
	}
	before := dumpKeys(t, rdb)
	_, err = act(SectionLater, "later-2", ActionRunNow) // claimed since
	wantGone(t, rdb, before, "run now of a claimed task", err)

	entry := c.ID + "|later-2"
	line, err = act(SectionInFlight, entry, ActionReturn)
	if err != nil || !strings.Contains(line, `"later-2" is back in "dq:{acts}"`) {
		t.Fatalf("return: %q %v", line, err)
	}
	if rdb.ZScore(ctx, q.InFlight, entry).Err() != redis.Nil || rdb.ZScore(ctx, q.Key, "later-2").Val() > float64(s.Now().UnixMilli()) {
		t.Fatal("return left the entry in flight or the task not due")
	}
	if n, _ := q.Ack(ctx, c, "later-2"); n != 0 {
		t.Fatal("the returned claim could still be acknowledged")
	}
	if c2, _ := q.Claim(ctx, 10, time.Minute); strings.Join(c2.Tasks, ",") != "later-2" {
		t.Fatalf("the returned task was not claimed again: %v", c2.Tasks)
	}
	before = dumpKeys(t, rdb)
	_, err = act(SectionInFlight, entry, ActionReturn)
	wantGone(t, rdb, before, "second return", err)

	line, err = act(SectionInFlight, c.ID+"|due-1", ActionDelete)
	if err != nil || rdb.ZCard(ctx, q.InFlight).Val() != 1 || !strings.Contains(line, "deleted from") {
		t.Fatalf("delete in flight: %q %v (%d left in flight)", line, err, rdb.ZCard(ctx, q.InFlight).Val())
	}
	if _, err = act(SectionLater, "later-1", ActionDelete); err != nil || rdb.ZCard(ctx, q.Key).Val() != 0 {
		t.Fatalf("delete later: %v (%d left)", err, rdb.ZCard(ctx, q.Key).Val())
	}
	before = dumpKeys(t, rdb)
	_, err = act(SectionLater, "later-1", ActionDelete)
	wantGone(t, rdb, before, "second delete", err)
	_, err = act(SectionLater, "never-there", ActionRunNow)
	wantGone(t, rdb, before, "run now of a task never there", err)
}

// TestDelayQueueActRefusesWhatItDoesNotOffer: run now on a due task, return of a queued one,
// anything on an in-flight set the queue does not keep: ErrNotSupported with the reason, and
// nothing written; a task already due when run now is ErrTaskGone.
func TestDelayQueueActRefusesWhatItDoesNotOffer(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.DelayQueue("dq:refuse", store.Milliseconds)
	if err := q.Enqueue(ctx, s.Now().Add(-time.Second), "due"); err != nil {
		t.Fatal(err)
	}
	before := dumpKeys(t, rdb)
	for _, c := range []struct {
		sec      TaskSection
		a        TaskAction
		inFlight string
		why      string
	}{
		{SectionDue, ActionRunNow, q.InFlight, "due already"},
		{SectionDue, ActionReturn, q.InFlight, "only an in-flight task"},
		{SectionInFlight, ActionRunNow, q.InFlight, "returned to the queue, not run now"},
		{SectionInFlight, ActionDelete, "", "keeps no in-flight set"},
		{SectionDead, ActionDelete, q.InFlight, "no such section"},
	} {
		_, err := DelayQueueOf(q.Key, c.inFlight, store.Milliseconds).Act(ctx, rdb, c.sec, Task{Member: "due"}, c.a, s.Now())
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s on %s: %v, want ErrNotSupported saying %q", c.a, c.sec, err, c.why)
		}
	}
	// The page showed it later; it is due by now.
	_, err := DelayQueueOf(q.Key, q.InFlight, store.Milliseconds).Act(ctx, rdb, SectionLater, Task{Member: "due"}, ActionRunNow, s.Now())
	wantGone(t, rdb, before, "run now of a task due since", err)
}

// TestDelayQueueActAutoUnitKeepsTheQueuesUnit: a queue scored in seconds by another writer and
// configured auto is written in seconds: a task run now or returned is due now, not fifty
// thousand years from now as a millisecond score read in seconds would be.
func TestDelayQueueActAutoUnitKeepsTheQueuesUnit(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	key, inFlight := "jobs:{sec}", store.InFlightKey("jobs:{sec}")
	rdb.ZAdd(ctx, key, redis.Z{Score: float64(now.Add(time.Hour).Unix()), Member: "later"},
		redis.Z{Score: float64(now.Add(-time.Hour).Unix()), Member: "old"})
	rdb.ZAdd(ctx, inFlight, redis.Z{Score: float64(now.Add(time.Minute).UnixMilli()), Member: "c1|held"})
	if _, err := DelayQueueOf(key, inFlight, store.AutoUnit).Act(ctx, rdb, SectionLater, Task{Member: "later"}, ActionRunNow, now); err != nil {
		t.Fatal(err)
	}
	if _, err := DelayQueueOf(key, inFlight, store.AutoUnit).Act(ctx, rdb, SectionInFlight, Task{Member: "c1|held"}, ActionReturn, now); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"later", "held"} {
		if sc := rdb.ZScore(ctx, key, m).Val(); sc != float64(now.Unix()) {
			t.Errorf("%s scored %v, want now in seconds (%d)", m, sc, now.Unix())
		}
	}
	st, err := store.DelayQueueStatsOf(ctx, rdb, key, inFlight, store.AutoUnit, now)
	if err != nil || st.Due != 3 || st.Unit != store.Seconds {
		t.Fatalf("stats after: %+v %v, want 3 due in seconds", st, err)
	}
}

// TestDelayQueueActHostileTask: a 1 MB task of control bytes, escape sequences and bytes that
// are not UTF-8 is acted on exactly, and the line saying so is short and escaped.
func TestDelayQueueActHostileTask(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	task := "\x1b[2J\x1b]0;owned\a\xff\xfe\u202e" + strings.Repeat("x", 1<<20)
	rdb.ZAdd(ctx, "dq:hostile", redis.Z{Score: float64(now.Add(time.Hour).UnixMilli()), Member: task})
	line, err := DelayQueueOf("dq:hostile", "", store.Milliseconds).Act(ctx, rdb, SectionLater, Task{Member: task}, ActionRunNow, now)
	if err != nil {
		t.Fatal(err)
	}
	if sc := rdb.ZScore(ctx, "dq:hostile", task).Val(); sc != float64(now.UnixMilli()) {
		t.Fatalf("the task was not made due: %v", sc)
	}
	if len(line) > 300 || strings.ContainsAny(line, "\x1b\a\u202e") || !strings.Contains(line, `\x1b[2J`) || !strings.Contains(line, "1048") {
		t.Fatalf("line not escaped and cut: %q", line)
	}
}

// TestListQueueActs: a processing task returned is the next a pop takes; a waiting task deleted
// is gone; run now is not supported; a task no longer there is ErrTaskGone with nothing written.
func TestListQueueActs(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.ListQueue("lq:{acts}")
	if err := q.Push(ctx, "a", "b", "c", "d"); err != nil { // popped a, b, c, d in that order
		t.Fatal(err)
	}
	if task, ok, err := q.Pop(ctx, 0); task != "a" || !ok || err != nil {
		t.Fatalf("pop: %q %v %v", task, ok, err)
	}
	act := func(sec TaskSection, member string, a TaskAction) (string, error) {
		return ListQueueOf(q.Key, q.Processing).Act(ctx, rdb, sec, Task{Member: member}, a, time.Time{})
	}
	line, err := act(SectionInFlight, "a", ActionReturn)
	if err != nil || !strings.Contains(line, `"a" is back in "lq:{acts}"`) || rdb.LLen(ctx, q.Processing).Val() != 0 {
		t.Fatalf("return: %q %v", line, err)
	}
	if task, _, _ := q.Pop(ctx, 0); task != "a" {
		t.Fatalf("the next pop took %q, want the returned task", task)
	}
	if _, err := act(SectionWaiting, "c", ActionDelete); err != nil {
		t.Fatal(err)
	}
	if got := rdb.LRange(ctx, q.Key, 0, -1).Val(); strings.Join(got, ",") != "d,b" {
		t.Fatalf("after delete: %v, want d,b", got)
	}
	before := dumpKeys(t, rdb)
	_, err = act(SectionWaiting, "c", ActionDelete)
	wantGone(t, rdb, before, "second delete", err)
	_, err = act(SectionInFlight, "z", ActionReturn)
	wantGone(t, rdb, before, "return of a task not processing", err)
	if _, err := act(SectionWaiting, "b", ActionRunNow); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "no due time") {
		t.Fatalf("run now: %v", err)
	}
	if _, err := ListQueueOf(q.Key, "").Act(ctx, rdb, SectionInFlight, Task{Member: "a"}, ActionReturn, time.Time{}); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("return without a processing list: %v", err)
	}
	wantUnchanged(t, rdb, before, "refusals")
}

// TestActErrorsNameCommandAndKey: a section key of another type ends the action with one line
// naming the command, the key and Redis's cause.
func TestActErrorsNameCommandAndKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	rdb.Set(ctx, "dq:string", "x", 0)
	rdb.Set(ctx, "lq:string", "x", 0)
	_, err1 := DelayQueueOf("dq:string", "", store.Milliseconds).Act(ctx, rdb, SectionLater, Task{Member: "t"}, ActionRunNow, time.Now())
	_, err2 := ListQueueOf("lq:string", "").Act(ctx, rdb, SectionWaiting, Task{Member: "t"}, ActionDelete, time.Time{})
	rdb.ZAdd(ctx, "lock:zset", redis.Z{Member: "x"})
	_, err3 := store.ReleaseStaleLock(ctx, rdb, "lock:zset", "x")
	for i, err := range []error{err1, err2, err3} {
		var ce *store.CommandError
		if !errors.As(err, &ce) || !store.Permanent(err) || !strings.Contains(err.Error(), "WRONGTYPE") || !strings.Contains(err.Error(), `on key "`) {
			t.Errorf("%d: %v, want a CommandError naming the key and WRONGTYPE", i, err)
		}
	}
}

// TestReleaseStaleLock: a lock whose TTL is gone is released; one that has a TTL again, has
// another holder or is gone is left, each saying why.
func TestReleaseStaleLock(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	rdb.Set(ctx, "lock:stale", "1700000000000-abc", 0)
	ok, err := store.ReleaseStaleLock(ctx, rdb, "lock:stale", "1700000000000-abc")
	if !ok || err != nil || rdb.Exists(ctx, "lock:stale").Val() != 0 {
		t.Fatalf("stale lock: %v %v", ok, err)
	}
	l, held, err := s.Acquire(ctx, "lock:live", time.Minute)
	if err != nil || !held {
		t.Fatal(err)
	}
	rdb.Set(ctx, "lock:taken", "new-holder", 0)
	before := dumpKeys(t, rdb)
	for _, c := range []struct {
		key, holder string
		want        error
	}{
		{"lock:live", l.Token, store.ErrLockHasTTL},
		{"lock:taken", "old-holder", store.ErrLockNewHolder},
		{"lock:stale", "1700000000000-abc", store.ErrLockGone},
	} {
		if ok, err := store.ReleaseStaleLock(ctx, rdb, c.key, c.holder); ok || !errors.Is(err, c.want) {
			t.Errorf("%s: %v %v, want %v", c.key, ok, err, c.want)
		}
	}
	wantUnchanged(t, rdb, before, "locks left")
}

// TestActRefusedByACLNamesTheUser: a user who may read but not write is refused each action with
// one permanent line naming the command, the key and the user, and nothing is written.
func TestActRefusedByACLNamesTheUser(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read", "+ping", "+hello").Err(); err != nil {
		t.Fatal(err)
	}
	reader := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "pw"})
	t.Cleanup(func() { _ = reader.Close() })
	now := time.Now()
	admin.ZAdd(ctx, "dq:acl", redis.Z{Score: float64(now.Add(time.Hour).UnixMilli()), Member: "t"})
	admin.Set(ctx, "lock:acl", "h", 0)
	before := dumpKeys(t, admin)
	_, err1 := DelayQueueOf("dq:acl", "", store.Milliseconds).Act(ctx, reader, SectionLater, Task{Member: "t"}, ActionRunNow, now)
	_, err2 := DelayQueueOf("dq:acl", "", store.Milliseconds).Act(ctx, reader, SectionLater, Task{Member: "t"}, ActionDelete, now)
	_, err3 := store.ReleaseStaleLock(ctx, reader, "lock:acl", "h")
	for i, err := range []error{err1, err2, err3} {
		var ce *store.CommandError
		if !errors.As(err, &ce) || !store.Permanent(err) || ce.User != "reader" || !strings.Contains(err.Error(), "NOPERM") || ce.Key == "" {
			t.Errorf("%d: %v, want a permanent CommandError naming the key and the user", i, err)
		}
	}
	wantUnchanged(t, admin, before, "refused actions")
}

// TestQueueActsOnCluster: on a real 3-master cluster, the actions that move a task between a
// queue and its companion (its in-flight set, its processing list: one hash slot) run as one
// script on the queue's master, for queues spread over every master.
func TestQueueActsOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	for i := range 6 {
		dq := s.DelayQueue("dq:cluster:"+strconv.Itoa(i), store.Milliseconds)
		if err := dq.Enqueue(ctx, s.Now().Add(-time.Second), "a"); err != nil {
			t.Fatal(err)
		}
		if err := dq.Enqueue(ctx, s.Now().Add(time.Hour), "b"); err != nil {
			t.Fatal(err)
		}
		c, err := dq.Claim(ctx, 1, time.Minute)
		if err != nil || len(c.Tasks) != 1 {
			t.Fatalf("claim: %v %v", c, err)
		}
		if _, err := DelayQueueOf(dq.Key, dq.InFlight, store.Milliseconds).Act(ctx, rdb, SectionInFlight, Task{Member: c.ID + "|a"}, ActionReturn, s.Now()); err != nil {
			t.Fatalf("%s return: %v", dq.Key, err)
		}
		if _, err := DelayQueueOf(dq.Key, dq.InFlight, store.Milliseconds).Act(ctx, rdb, SectionLater, Task{Member: "b"}, ActionRunNow, s.Now()); err != nil {
			t.Fatalf("%s run now: %v", dq.Key, err)
		}
		if c2, _ := dq.Claim(ctx, 5, time.Minute); len(c2.Tasks) != 2 {
			t.Fatalf("%s: claimed %v after the actions, want a and b", dq.Key, c2.Tasks)
		}
		lq := s.ListQueue("lq:cluster:" + strconv.Itoa(i))
		if err := lq.Push(ctx, "m"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := lq.Pop(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := ListQueueOf(lq.Key, lq.Processing).Act(ctx, rdb, SectionInFlight, Task{Member: "m"}, ActionReturn, time.Time{}); err != nil {
			t.Fatalf("%s return: %v", lq.Key, err)
		}
		if task, ok, _ := lq.Pop(ctx, 0); !ok || task != "m" {
			t.Fatalf("%s: popped %q after the return", lq.Key, task)
		}
	}
}
