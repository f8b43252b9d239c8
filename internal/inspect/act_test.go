package inspect

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// actWatcher watches a delay queue by key, a list queue pattern, Sidekiq's queues, a lock and
// the counter families, on the server's clock.
func actWatcher(t *testing.T, rdb redis.UniversalClient, s *store.Store) drilled {
	return watching(rdb, families(t), scanner.Options{Location: shanghai, Structures: scanner.Structures{
		DelayQueues: []scanner.DelayQueueSpec{{Name: "orders", Key: "dq:{orders}", Unit: store.AutoUnit}},
		ListQueues:  []scanner.ListQueueSpec{{Name: "mail", Pattern: pattern(t, "lq:<box>")}},
		JobQueues:   []scanner.JobQueueSpec{{Name: "sk", Source: jobs.Source{Layout: jobs.Sidekiq}}},
		Locks:       []scanner.LockSpec{{Name: "jobs", Pattern: pattern(t, "lock:<job>"), Exclude: globs(t, "lock:keep")}},
	}, Now: s.Now})
}

// keysOf is every key with its DUMP and whether it has a TTL, to see that a refused action wrote
// nothing.
func keysOf(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	it := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		out[k] = rdb.Dump(ctx, k).Val() + map[bool]string{true: "|no ttl", false: "|ttl"}[rdb.PTTL(ctx, k).Val() == -1]
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sidekiqScheduled is the member of Sidekiq's schedule, as stored, of the job with args, and
// its jid; the test fails when there is none.
func sidekiqScheduled(t *testing.T, rdb *redis.Client, args string) (member, jid string) {
	t.Helper()
	for _, m := range rdb.ZRange(t.Context(), "schedule", 0, -1).Val() {
		var j sidekiqJob
		if json.Unmarshal([]byte(m), &j) == nil && string(j.Args) == args {
			return m, j.JID
		}
	}
	t.Fatalf("Sidekiq scheduled no job with args %s", args)
	return "", ""
}

// sameKeys fails when the keys differ from before.
func sameKeys(t *testing.T, rdb *redis.Client, before map[string]string, what string) {
	t.Helper()
	after := keysOf(t, rdb)
	if !maps.Equal(after, before) {
		t.Fatalf("%s wrote: %d keys before, %d after", what, len(before), len(after))
	}
}

// TestActOnTaskGoesToEachLayout: a later task of a delay queue run now is due by the watcher's
// clock, a processing task of a list queue a pattern covers is returned to its list, a Sidekiq
// scheduled job is in its queue; a queue no entry covers, a task gone and an action the layout
// does not offer are refused without a write.
func TestActOnTaskGoesToEachLayout(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	s := store.New(rdb, store.Options{})
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	w := actWatcher(t, rdb, s)
	dq := s.DelayQueue("dq:{orders}", store.Milliseconds)
	if err := dq.Enqueue(ctx, s.Now().Add(time.Hour), "later"); err != nil {
		t.Fatal(err)
	}
	lq := s.ListQueue("lq:inbox")
	if err := lq.Push(ctx, "m1", "m2"); err != nil {
		t.Fatal(err)
	}
	if task, _, err := lq.Pop(ctx, 0); task != "m1" || err != nil {
		t.Fatalf("pop %q %v", task, err)
	}
	fillSidekiq(t, srv)
	job, jid := sidekiqScheduled(t, rdb, `["later"]`) // Mailer.perform_in(90, "later")

	delay := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "orders", Key: "dq:{orders}"})
	if line, err := w.ActOnTask(ctx, delay, snapshot.SectionLater, snapshot.Task{Member: "later"}, snapshot.ActionRunNow); err != nil || !strings.Contains(line, "due now") {
		t.Fatalf("delay run now: %q %v", line, err)
	}
	if c, _ := dq.Claim(ctx, 5, time.Minute); len(c.Tasks) != 1 || c.Tasks[0] != "later" {
		t.Fatalf("the task run now was not due to the queue's claim: %v", c.Tasks)
	}
	list := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueList, Name: "mail", Key: "lq:inbox"})
	if line, err := w.ActOnTask(ctx, list, snapshot.SectionInFlight, snapshot.Task{Member: "m1"}, snapshot.ActionReturn); err != nil || !strings.Contains(line, "back in") {
		t.Fatalf("list return: %q %v", line, err)
	}
	if task, _, _ := lq.Pop(ctx, 0); task != "m1" {
		t.Fatalf("the next pop took %q, want the returned m1", task)
	}
	sk := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk"})
	if line, err := w.ActOnTask(ctx, sk, snapshot.SectionLater, snapshot.Task{Member: job}, snapshot.ActionRunNow); err != nil {
		t.Fatalf("sidekiq run now: %q %v", line, err)
	}
	// Sidekiq's own API sees the job where its add_to_queue leaves it: in mail, after the two
	// that were waiting there, and no longer scheduled.
	if v := readSidekiq(t, srv); !slices.Equal(jidsOf(v.Queues["mail"])[2:], []string{jid}) || len(v.Queues["mail"]) != 3 ||
		slices.Contains(jidsOf(v.Schedule), jid) {
		t.Fatalf("after run now Sidekiq sees mail %v and scheduled %v; want %s last in mail and not scheduled",
			jidsOf(v.Queues["mail"]), jidsOf(v.Schedule), jid)
	}

	before := keysOf(t, rdb)
	for _, c := range []struct {
		ref  snapshot.QueueRef
		sec  snapshot.TaskSection
		task string
		a    snapshot.TaskAction
		want error
	}{
		{delay, snapshot.SectionLater, "later", snapshot.ActionRunNow, jobs.ErrTaskGone},
		{sk, snapshot.SectionLater, job, snapshot.ActionRunNow, jobs.ErrTaskGone},
		{list, snapshot.SectionWaiting, "m2", snapshot.ActionRunNow, jobs.ErrNotSupported},
		{snapshot.QueueRef{Kind: snapshot.QueueList, Name: "mail", Key: "other:inbox"}, snapshot.SectionWaiting, "m2", snapshot.ActionDelete, nil},
		{snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "nope", Key: "dq:{orders}"}, snapshot.SectionLater, "later", snapshot.ActionDelete, nil},
	} {
		_, err := w.ActOnTask(ctx, c.ref, c.sec, snapshot.Task{Member: c.task}, c.a)
		if err == nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s %s on %+v: %v, want %v", c.a, c.sec, c.ref, err, c.want)
		}
	}
	sameKeys(t, rdb, before, "refused actions")
}

// TestRepairKeyOneKey: a counter key without a TTL gets its window's expiry, one whose window's
// retention has ended is deleted, and one with a TTL, one that is not the family's and one that
// holds text are left, each saying why.
func TestRepairKeyOneKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	s := store.New(rdb, store.Options{})
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	w := actWatcher(t, rdb, s)
	flow := families(t)[0]
	now := s.Now().In(shanghai)
	key := func(at time.Time) string {
		k, err := flow.Key(store.WindowAt(store.Hour, at, shanghai), []string{"web", "ios", "10.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	current, old, timed, text := key(now), key(now.Add(-72*time.Hour)), key(now.Add(-time.Hour)), key(now.Add(-2*time.Hour))
	rdb.Set(ctx, current, 5, 0)
	rdb.Set(ctx, old, 7, 0)
	rdb.Set(ctx, timed, 9, time.Hour)
	rdb.Set(ctx, text, "five", 0)
	rdb.Set(ctx, "other:key", 1, 0)

	line, err := w.RepairKey(ctx, "flow", current)
	want := flow.ExpireAt(store.WindowAt(store.Hour, now, shanghai))
	if err != nil || !strings.Contains(line, "expires at") || rdb.ExpireTime(ctx, current).Val() != time.Duration(want.Unix())*time.Second {
		t.Fatalf("repair current: %q %v, expiry %v want %v", line, err, rdb.ExpireTime(ctx, current).Val(), want.Unix())
	}
	if line, err := w.RepairKey(ctx, "flow", old); err != nil || !strings.Contains(line, "deleted") || rdb.Exists(ctx, old).Val() != 0 {
		t.Fatalf("repair old: %q %v", line, err)
	}
	before := keysOf(t, rdb)
	for _, c := range []struct{ family, key, why string }{
		{"flow", timed, "has a TTL"},
		{"flow", text, "not a 64-bit integer"},
		{"flow", old, "gone"},
		{"ad_revenue", current, "not a key of the counter family"},
		{"flow", "other:key", "not a key of the counter family"},
	} {
		if _, err := w.RepairKey(ctx, c.family, c.key); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("repair %s as %s: %v, want %q", c.key, c.family, err, c.why)
		}
	}
	sameKeys(t, rdb, before, "repairs refused")
}

// TestReleaseLockOnlyAStaleOneOfTheLock: a lock of the entry with no TTL is released; one with a
// TTL, one taken by another, a key the lock's exclude names and one outside its pattern are left.
func TestReleaseLockOnlyAStaleOneOfTheLock(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	s := store.New(rdb, store.Options{})
	w := actWatcher(t, rdb, s)
	holder := "\x1b[31mworker-1\n"
	rdb.Set(ctx, "lock:nightly", holder, 0)
	rdb.Set(ctx, "lock:hourly", "h", time.Minute)
	rdb.Set(ctx, "lock:keep", "k", 0)
	rdb.Set(ctx, "mutex:x", "m", 0)
	line, err := w.ReleaseLock(ctx, "jobs", "lock:nightly", holder)
	if err != nil || rdb.Exists(ctx, "lock:nightly").Val() != 0 || strings.ContainsAny(line, "\x1b\n") || !strings.Contains(line, `\x1b[31mworker-1\n`) {
		t.Fatalf("release: %q %v", line, err)
	}
	for _, c := range []struct {
		lock, key, holder string
		want              error
	}{
		{"jobs", "lock:hourly", "h", store.ErrLockHasTTL},
		{"jobs", "lock:nightly", holder, store.ErrLockGone},
		{"jobs", "lock:keep", "k", nil},
		{"jobs", "mutex:x", "m", nil},
		{"other", "lock:hourly", "h", nil},
	} {
		_, err := w.ReleaseLock(ctx, c.lock, c.key, c.holder)
		if err == nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s %s: %v, want %v", c.lock, c.key, err, c.want)
		}
	}
	if rdb.Exists(ctx, "lock:hourly", "lock:keep", "mutex:x").Val() != 3 {
		t.Fatal("a lock left was deleted")
	}
}
