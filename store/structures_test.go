package store

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestDelayQueueLosesAndDuplicatesNothing: 4 workers claim 10k tasks at once while a fifth claims
// a batch and dies holding it. Every task is acknowledged exactly once: the dead worker's come
// back after their deadline, and no two workers ever hold the same task.
func TestDelayQueueLosesAndDuplicatesNothing(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Client(t), Options{})
	ctx := t.Context()
	q := s.DelayQueue("delay:orders", Milliseconds)
	const n = 10_000
	tasks := make([]string, n)
	for i := range tasks {
		tasks[i] = fmt.Sprint("order-", i)
	}
	for i := 0; i < n; i += 1000 {
		if err := q.Enqueue(ctx, s.Now().Add(-time.Second), tasks[i:i+1000]...); err != nil {
			t.Fatal(err)
		}
	}
	const visibility = 800 * time.Millisecond
	dead, err := q.Claim(ctx, 100, visibility) // claimed, never acknowledged
	if err != nil || len(dead.Tasks) != 100 {
		t.Fatalf("the doomed worker claimed %d: %v", len(dead.Tasks), err)
	}

	var mu sync.Mutex
	done := map[string]int{}
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := q.Claim(ctx, 50, visibility)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got.Tasks) == 0 { // nothing to claim yet: a worker's pause before it claims again
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
					continue
				}
				mu.Lock()
				for _, task := range got.Tasks {
					done[task]++
				}
				mu.Unlock()
				k, err := q.Ack(ctx, got)
				if err != nil {
					t.Error(err)
					return
				}
				acked.Add(k)
			}
		}()
	}
	wg.Add(1)
	go func() { // the reaper
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := q.Reap(ctx, 1000); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	redistest.Until(30*time.Second, func() bool { return acked.Load() >= n }) // checked below, once the workers stop
	close(stop)
	wg.Wait()
	if acked.Load() != n || len(done) != n {
		t.Fatalf("acknowledged %d, distinct tasks run %d, want %d", acked.Load(), len(done), n)
	}
	for task, times := range done {
		if times != 1 {
			t.Fatalf("%s ran %d times", task, times)
		}
	}
	for _, task := range dead.Tasks {
		if done[task] != 1 {
			t.Fatalf("the dead worker's %s was not run after its deadline", task)
		}
	}
	st, err := q.Stats(ctx, s.Now())
	if err != nil || st.Depth != 0 || st.InFlight != 0 {
		t.Fatalf("after: %+v %v", st, err)
	}
}

// TestLateAckLosesNothing: worker A stalls past its deadline, the task is reaped and claimed by B;
// A's late Ack must not remove B's claim, or the task would be lost when B dies.
func TestLateAckLosesNothing(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Client(t), Options{})
	ctx := t.Context()
	q := s.DelayQueue("delay:late", Milliseconds)
	q.Enqueue(ctx, time.Time{}, "x")
	a, _ := q.Claim(ctx, 1, time.Millisecond)
	redistest.Eventually(t, "the stalled claim to be reaped", 5*time.Second, func() bool {
		n, _ := q.Reap(ctx, 10)
		return n > 0
	})
	b, _ := q.Claim(ctx, 1, time.Minute)
	if len(a.Tasks) != 1 || len(b.Tasks) != 1 {
		t.Fatalf("claims %v %v", a.Tasks, b.Tasks)
	}
	if n, _ := q.Ack(ctx, a); n != 0 {
		t.Fatalf("the late ack removed %d in-flight entries, want none", n)
	}
	if st, _ := q.Stats(ctx, s.Now()); st.InFlight != 1 {
		t.Fatalf("B's claim is gone: %+v", st)
	}
	if c, _ := q.Claim(ctx, 0, time.Minute); len(c.Tasks) != 0 {
		t.Fatal("a claim of 0 took tasks")
	}
}

// TestClaimAndReapManyAtOnce claims more tasks in one call than the scripts move in one command,
// then reaps them all in one call: every task is moved whole, none twice.
func TestClaimAndReapManyAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Client(t), Options{})
	ctx := t.Context()
	q := s.DelayQueue("delay:many", Milliseconds)
	const n = 1234
	tasks := make([]string, n)
	for i := range tasks {
		tasks[i] = fmt.Sprint("t", i)
	}
	if err := q.Enqueue(ctx, time.Time{}, tasks...); err != nil {
		t.Fatal(err)
	}
	c, err := q.Claim(ctx, n+10, time.Millisecond)
	if err != nil || len(c.Tasks) != n {
		t.Fatalf("claimed %d, %v; want all %d", len(c.Tasks), err, n)
	}
	if st, _ := q.Stats(ctx, s.Now()); st.Depth != 0 || st.InFlight != n {
		t.Fatalf("after the claim: %+v", st)
	}
	redistest.Eventually(t, "every claimed task to be reaped", 5*time.Second, func() bool {
		if st, _ := q.Stats(ctx, s.Now()); st.InFlight == 0 {
			return true
		}
		if _, err := q.Reap(ctx, n+10); err != nil {
			t.Fatal(err)
		}
		return false
	})
	again, err := q.Claim(ctx, n+10, time.Minute)
	if err != nil || len(again.Tasks) != n {
		t.Fatalf("claimed again %d, %v; want all %d", len(again.Tasks), err, n)
	}
	slices.Sort(again.Tasks)
	slices.Sort(tasks)
	if !slices.Equal(again.Tasks, tasks) {
		t.Fatal("the reaped tasks are not the tasks enqueued")
	}
}

// TestDelayQueueStatsOfAPlainQueue reads a queue written as Java writers commonly do (ZADD with
// the due time in ms, no in-flight set): depth, due, lag, next and the schedule.
func TestDelayQueueStatsOfAPlainQueue(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	add := func(task string, due time.Time) {
		rdb.ZAdd(ctx, "queue:retry", redis.Z{Score: float64(due.UnixMilli()), Member: task})
	}
	add("late-3m", now.Add(-3*time.Minute))
	add("late-1s", now.Add(-time.Second))
	add("in-30s", now.Add(30*time.Second))
	add("in-5m", now.Add(5*time.Minute))
	add("in-30m", now.Add(30*time.Minute))
	add("in-2h", now.Add(2*time.Hour))
	add("in-3h", now.Add(3*time.Hour))
	st, err := DelayQueueStatsOf(ctx, rdb, "queue:retry", InFlightKey("queue:retry"), Milliseconds, now)
	if err != nil {
		t.Fatal(err)
	}
	want := DelayQueueStats{Depth: 7, Due: 2, Lag: 3 * time.Minute, NextIn: 30 * time.Second, Schedule: [4]int64{1, 1, 1, 2},
		Unit: Milliseconds, Timed: true}
	st.Lag, st.NextIn = st.Lag.Round(time.Second), st.NextIn.Round(time.Second)
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
}

func TestListQueueMovesToProcessing(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.Client(t), Options{})
	ctx := t.Context()
	q := s.ListQueue("jobs")
	if err := q.Push(ctx, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	task, ok, err := q.Pop(ctx, time.Second)
	if err != nil || !ok || task != "a" {
		t.Fatalf("pop = %q %v %v, want the first pushed", task, ok, err)
	}
	st, _ := ListQueueStatsOf(ctx, s.Client(), q.Key, q.Processing)
	if st.Length != 2 || st.Processing != 1 || st.Missing || st.Latency != -1 {
		t.Fatalf("after a pop: %+v", st)
	}
	if Slot(q.Key) != Slot(q.Processing) {
		t.Fatal("the processing list is not in the queue's slot")
	}
	if err := q.Ack(ctx, task); err != nil {
		t.Fatal(err)
	}
	if st, _ := ListQueueStatsOf(ctx, s.Client(), q.Key, q.Processing); st.Processing != 0 {
		t.Fatalf("after the ack: %+v", st)
	}
	if _, ok, _ := s.ListQueue("empty").Pop(ctx, 50*time.Millisecond); ok {
		t.Fatal("a pop of an empty queue returned a task")
	}
}

// TestLimiterNeverExceedsItsLimit: 8 clients hit one key at once; the script allows exactly the
// limit, sliding and fixed. A check-then-add, run the same way, lets more through.
func TestLimiterNeverExceedsItsLimit(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, Options{})
	ctx := t.Context()
	const limit, clients, hitsEach = 50, 8, 40
	hammer := func(allow func() bool) int64 {
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range hitsEach {
					if allow() {
						allowed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		return allowed.Load()
	}
	for _, kind := range []LimiterKind{Sliding, Fixed} {
		l, err := s.NewLimiter(LimiterSpec{Name: "api-" + kind.String(), Pattern: "rl:" + kind.String() + ":<user>", Kind: kind, Window: time.Hour, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		got := hammer(func() bool {
			d, err := l.Allow(ctx, "u1")
			if err != nil {
				t.Error(err)
			}
			return d.Allowed
		})
		if got != limit {
			t.Fatalf("%s: %d of %d hits allowed, want exactly %d", kind, got, clients*hitsEach, limit)
		}
		d, _ := l.Allow(ctx, "u1")
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Hour {
			t.Fatalf("%s: a hit past the limit: %+v", kind, d)
		}
		// Refused hits are not counted: the key holds exactly the limit, not "over" it.
		key := "rl:" + kind.String() + ":u1"
		if kind == Fixed && getInt(t, rdb, key) != limit {
			t.Fatalf("fixed: the key counts %d hits, want %d", getInt(t, rdb, key), limit)
		}
		if kind == Sliding && rdb.ZCard(ctx, key).Val() != limit {
			t.Fatalf("sliding: the key holds %d hits, want %d", rdb.ZCard(ctx, key).Val(), limit)
		}
		if ttl := rdb.PTTL(ctx, "rl:"+kind.String()+":u1").Val(); ttl <= 0 || ttl > time.Hour {
			t.Fatalf("%s: the key's TTL is %v", kind, ttl)
		}
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		hour := WindowAt(Hour, s.Now(), s.Location())
		for outcome, want := range map[string]int64{"allowed": limit, "rejected": clients*hitsEach + 1 - limit} {
			k, _ := LimiterStats(l.Spec().Name).Key(hour, []string{l.Spec().Name, outcome})
			if got := getInt(t, rdb, k); got != want {
				t.Fatalf("%s: %s counted %d, want %d", kind, outcome, got, want)
			}
		}
	}

	// A check-then-add limiter: ZREMRANGEBYSCORE, ZCARD, then ZADD if under the limit, three
	// commands.
	naiveAllow := func(key string, member func(now int64) string) bool {
		now := time.Now().UnixMilli()
		rdb.ZRemRangeByScore(ctx, key, "0", fmt.Sprint(now-3600_000))
		if rdb.ZCard(ctx, key).Val() >= limit {
			return false
		}
		rdb.ZAdd(ctx, key, redis.Z{Score: float64(now), Member: member(now)})
		return true
	}
	var seq atomic.Int64
	unique := func(now int64) string { return fmt.Sprint(now, "-", seq.Add(1)) }
	// Two clients interleaved as the race allows: both count 49, both add.
	for range limit - 1 {
		naiveAllow("rl:naive:det", unique)
	}
	n1, n2 := rdb.ZCard(ctx, "rl:naive:det").Val(), rdb.ZCard(ctx, "rl:naive:det").Val()
	if n1 < limit && n2 < limit {
		rdb.ZAdd(ctx, "rl:naive:det", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	}
	if got := rdb.ZCard(ctx, "rl:naive:det").Val(); got <= limit {
		t.Fatalf("the interleaved check-then-add kept %d hits, want past %d", got, limit)
	}
	over := hammer(func() bool { return naiveAllow("rl:naive:live", unique) }) - limit
	t.Logf("the check-then-add under %d clients allowed %d past the limit of %d", clients, over, limit)
	// And its member, the timestamp alone, folds hits of one millisecond into one.
	now := time.Now().UnixMilli()
	for range 3 {
		rdb.ZAdd(ctx, "rl:naive:ms", redis.Z{Score: float64(now), Member: fmt.Sprint(now)})
	}
	if got := rdb.ZCard(ctx, "rl:naive:ms").Val(); got != 1 {
		t.Fatalf("three hits in one millisecond counted %d", got)
	}
}

func TestLocksAreHeldAndReleasedByTheirHolder(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, Options{})
	ctx := t.Context()
	l, ok, err := s.Acquire(ctx, "lock:job", 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if ttl := rdb.PTTL(ctx, "lock:job").Val(); ttl <= 0 {
		t.Fatalf("a lock without its expiry: %v", ttl)
	}
	if _, ok, _ := s.Acquire(ctx, "lock:job", time.Second); ok {
		t.Fatal("a held lock was acquired again")
	}
	thief := &Lock{s: s, Key: "lock:job", Token: "not-the-holder"}
	if ok, err := thief.Release(ctx); ok || err != nil {
		t.Fatalf("a non-holder released the lock: %v %v", ok, err)
	}
	if ok, _ := thief.Extend(ctx, time.Minute); ok {
		t.Fatal("a non-holder extended the lock")
	}
	if ok, _ := l.Extend(ctx, time.Minute); !ok || rdb.PTTL(ctx, "lock:job").Val() <= 10*time.Second {
		t.Fatal("the holder could not extend")
	}
	if ok, _ := l.Release(ctx); !ok || rdb.Exists(ctx, "lock:job").Val() != 0 {
		t.Fatal("the holder could not release")
	}
	if ok, _ := l.Release(ctx); ok {
		t.Fatal("a second release reported success")
	}
	if _, _, err := s.Acquire(ctx, "lock:forever", 0); err == nil {
		t.Fatal("a lock without a TTL was taken")
	}
}

// TestUniquesCountAndUnion: HyperLogLog counts within its error, bitmaps exactly, and unions over
// days match the exact sets; bitmaps union without writing anything.
func TestUniquesCountAndUnion(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, Options{})
	ctx := t.Context()
	uv := s.NewUniques(HyperLogLog, mustFamily(t, FamilySpec{Name: "uv", Pattern: "uv:{<page>}:<window>", DayFormat: "yyyyMMdd", DayRetention: 90 * 24 * time.Hour}))
	dau := s.NewUniques(Bitmap, mustFamily(t, FamilySpec{Name: "dau", Pattern: "dau:{<app>}:<window>", DayFormat: "yyyyMMdd", DayRetention: 90 * 24 * time.Hour}))
	now := s.Now()
	exact := map[int]map[int]bool{} // day -> users
	all := map[int]bool{}
	for d := range 7 {
		exact[d] = map[int]bool{}
		var members []string
		for u := d * 2000; u < d*2000+5000; u++ { // overlapping ranges of users, day after day
			exact[d][u] = true
			all[u] = true
			members = append(members, fmt.Sprint(u))
		}
		at := now.AddDate(0, 0, -d)
		if err := uv.Add(ctx, Day, []string{"home"}, at, members...); err != nil {
			t.Fatal(err)
		}
		if err := dau.Add(ctx, Day, []string{"app"}, at, members...); err != nil {
			t.Fatal(err)
		}
	}
	within := func(got, want int64) bool { return math.Abs(float64(got-want)) <= 0.02*float64(want) }
	for d := range 7 {
		at := now.AddDate(0, 0, -d)
		if n, _ := uv.Count(ctx, Day, []string{"home"}, at); !within(n, int64(len(exact[d]))) {
			t.Fatalf("day -%d: PFCOUNT %d, exact %d", d, n, len(exact[d]))
		}
		if n, _ := dau.Count(ctx, Day, []string{"app"}, at); n != int64(len(exact[d])) {
			t.Fatalf("day -%d: BITCOUNT %d, exact %d", d, n, len(exact[d]))
		}
	}
	before := rdb.DBSize(ctx).Val()
	if n, err := uv.Union(ctx, Day, []string{"home"}, now, 7); err != nil || !within(n, int64(len(all))) {
		t.Fatalf("7-day HLL union %d (%v), exact %d", n, err, len(all))
	}
	if n, err := dau.Union(ctx, Day, []string{"app"}, now, 7); err != nil || n != int64(len(all)) {
		t.Fatalf("7-day bitmap union %d (%v), exact %d", n, err, len(all))
	}
	if rdb.DBSize(ctx).Val() != before {
		t.Fatal("a union wrote a key")
	}
	k, _ := uv.Key(WindowAt(Day, now, s.Location()), []string{"home"})
	if ttl := rdb.TTL(ctx, k).Val(); ttl <= 89*24*time.Hour {
		t.Fatalf("a unique key's TTL is %v, want its window's end plus 90 days", ttl)
	}
	if err := dau.Add(ctx, Day, []string{"app"}, now, "user-7"); err == nil {
		t.Fatal("a bitmap took a member that is not an id")
	}
}
