package watch

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// knownStructures are the structures TestNothingLiveWaitsForTheSweep watches: a delay queue and
// a list queue by key, RQ's queues, a fixed-window limiter and a lock pattern.
func knownStructures(t *testing.T) scanner.Structures {
	pattern := func(text string) *store.Pattern {
		p, err := store.ParseKeyPattern(text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return scanner.Structures{
		DelayQueues: []scanner.DelayQueueSpec{{Name: "orders", Key: "delay:orders", Unit: store.Milliseconds}},
		ListQueues:  []scanner.ListQueueSpec{{Name: "mail", Key: "queue:mail"}},
		JobQueues:   []scanner.JobQueueSpec{{Name: "rq", Source: jobs.Source{Layout: jobs.RQ}}},
		Limiters: []scanner.LimiterSpec{{LimiterSpec: store.LimiterSpec{Name: "fx", Pattern: "rl:fx:<user>", Kind: store.Fixed, Window: time.Hour, Limit: 100},
			Pattern: pattern("rl:fx:<user>")}},
		Locks: []scanner.LockSpec{{Name: "jobs", Pattern: pattern("lock:job:<id>")}},
	}
}

// TestNothingLiveWaitsForTheSweep holds a Watcher to a budget under which its first sweep of
// 25,000 keys takes about 20 s, and checks that while it runs, what is pushed into the queues
// (ours, and RQ's by RQ's own client) shows within two Polls, and that a limiter's busiest key
// and a lock, once a page has found them, are read again at every Poll: a key's new count shows
// at the next Poll, and so does a lock released.
func TestNothingLiveWaitsForTheSweep(t *testing.T) {
	py := redistest.Interpreter(t, "python3", "rq")
	srv := redistest.Start(t)
	admin, ctx := srv.Client(t), t.Context()
	fams := families(t)
	fillKeys(t, admin, fams[0], 20_000)
	for i := range 20 {
		admin.Set(ctx, fmt.Sprint("rl:fx:u", i), i+1, time.Hour)
		admin.Set(ctx, fmt.Sprint("lock:job:", i), "holder", time.Hour)
	}
	w := New(srv.Client(t), fams, scanner.Options{Count: 100, KeysPerSecond: 1200, Location: shanghai, Structures: knownStructures(t)})
	var polled time.Time
	poll := func() snapshot.Status {
		t.Helper()
		<-time.After(time.Until(polled.Add(snapshot.MinRefresh))) // as a console refreshing at its fastest
		st, err := w.Poll(ctx, 100*time.Millisecond, "")
		polled = time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if st.Snapshot != nil {
			t.Fatalf("the first sweep completed after %d keys: the test needs it under way", st.Sweep.KeysSeen)
		}
		return st
	}
	poll()
	q := store.New(admin, store.Options{Location: shanghai}).DelayQueue("delay:orders", store.Milliseconds)
	tasks := make([]string, 500)
	for i := range tasks {
		tasks[i] = strconv.Itoa(i)
	}
	if err := q.Enqueue(ctx, time.Now().Add(time.Minute), tasks...); err != nil {
		t.Fatal(err)
	}
	admin.RPush(ctx, "queue:mail", "a", "b", "c")
	redistest.RunFixture(t, py, ".", nil, "-c", "import sys, redis, rq\n"+
		"q = rq.Queue('live', connection=redis.Redis.from_url(sys.argv[1]))\n"+
		"for i in range(7): q.enqueue('os.getpid')", "redis://"+srv.Addr+"/0")
	var st snapshot.Status
	for range 2 {
		st = poll()
	}
	p := st.Partial
	if p == nil || len(p.DelayQueues) != 1 || p.DelayQueues[0].Depth != 500 {
		t.Fatalf("two Polls after 500 tasks were pushed, the delay queue reads %+v", p.DelayQueues)
	}
	if len(p.ListQueues) != 1 || p.ListQueues[0].Length != 3 {
		t.Errorf("the list queue reads %+v, want 3", p.ListQueues)
	}
	if got := rqWaiting(p, "live"); got != 7 {
		t.Errorf("RQ's queue live reads %d waiting, want 7 (RQ enqueued them)", got)
	}
	if p.StructuresAt.IsZero() || p.Scan.Coverage >= 0.5 {
		t.Errorf("read at %v with %.0f%% of the keys swept: want a live read early in the sweep", p.StructuresAt, 100*p.Scan.Coverage)
	}
	checkLiveLimiterAndLock(t, admin, poll)
}

// rqWaiting is the waiting jobs of RQ's queue name in s, -1 when it has no row or no count.
func rqWaiting(s *snapshot.Snapshot, name string) int64 {
	for _, e := range s.JobQueues {
		for _, q := range e.Queues {
			if q.Queue == name && q.Waiting != nil {
				return *q.Waiting
			}
		}
	}
	return -1
}

// checkLiveLimiterAndLock polls until the sweep under way has found one of the limiter's keys
// and one held lock, then moves both and checks the next Poll shows them moved.
func checkLiveLimiterAndLock(t *testing.T, admin redis.Cmdable, poll func() snapshot.Status) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var st snapshot.Status
	for st = poll(); len(st.Partial.Limiters[0].Top) == 0 || len(st.Partial.Locks[0].Examples) == 0; st = poll() {
		if time.Now().After(deadline) {
			t.Fatalf("no page found a limiter key and a lock within a minute: %+v %+v (%d keys seen)", st.Partial.Limiters[0], st.Partial.Locks[0], st.Sweep.KeysSeen)
		}
	}
	top, lock := st.Partial.Limiters[0].Top[0], st.Partial.Locks[0].Examples[0]
	admin.IncrBy(t.Context(), top.Raw, 1000)
	admin.Del(t.Context(), lock.Raw)
	st = poll()
	after := st.Partial.Limiters[0].Top
	if len(after) == 0 || after[0].Raw != top.Raw || after[0].Count != top.Count+1000 {
		t.Errorf("after %s gained 1,000 hits (it had %d), the next Poll's busiest keys read %+v", top.Raw, top.Count, after)
	}
	for _, ex := range st.Partial.Locks[0].Examples {
		if ex.Raw == lock.Raw {
			t.Errorf("lock %s was released, and the next Poll still lists it", lock.Raw)
		}
	}
}

// TestQueuesAreLiveOnACluster: on a three-master cluster, while the first sweep is under way, a
// delay queue's depth, a limiter's busiest key and a lock are read again at every Poll, each from
// the master that holds it.
func TestQueuesAreLiveOnACluster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	rdb, ctx := c.Client(t), t.Context()
	structs := knownStructures(t)
	structs.JobQueues = nil
	pipe := rdb.Pipeline()
	for i := range 20_000 {
		pipe.Set(ctx, fmt.Sprint("session:", i), "x", time.Hour)
	}
	for i := range 20 {
		pipe.Set(ctx, fmt.Sprint("rl:fx:u", i), i+1, time.Hour)
		pipe.Set(ctx, fmt.Sprint("lock:job:", i), "holder", time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	w := New(rdb, nil, scanner.Options{Count: 100, KeysPerSecond: 1200, Location: shanghai, Structures: structs})
	var polled time.Time
	poll := func() snapshot.Status {
		t.Helper()
		<-time.After(time.Until(polled.Add(snapshot.MinRefresh))) // as a console refreshing at its fastest
		st, err := w.Poll(ctx, 100*time.Millisecond, "")
		polled = time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if st.Snapshot != nil {
			t.Fatalf("the first sweep completed after %d keys: the test needs it under way", st.Sweep.KeysSeen)
		}
		return st
	}
	poll()
	q := store.New(rdb, store.Options{Location: shanghai}).DelayQueue("delay:orders", store.Milliseconds)
	if err := q.Enqueue(ctx, time.Now().Add(time.Minute), "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	var st snapshot.Status
	for range 2 {
		st = poll()
	}
	if d := st.Partial.DelayQueues[0]; d.Depth != 3 {
		t.Errorf("two Polls after 3 tasks were pushed, the delay queue reads %+v", d)
	}
	checkLiveLimiterAndLock(t, rdb, poll)
}
