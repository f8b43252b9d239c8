package scanner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestSnapshotOfStructures writes queues, limiter keys, uniques and locks (ours, and
// hand-rolled ones) and checks every number of their Snapshot sections.
func TestSnapshotOfStructures(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	st := store.New(rdb, store.Options{Location: shanghai})
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	now := st.Now()
	mustPattern := func(text string) *store.Pattern {
		p, err := store.ParseKeyPattern(text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	uvFam, _ := store.NewFamily(store.FamilySpec{Name: "uv", Pattern: "uv:{<page>}:<window>", DayFormat: "yyyyMMdd", DayRetention: 90 * 24 * time.Hour})
	structs := Structures{
		DelayQueues: []DelayQueueSpec{{Name: "orders", Key: "delay:orders", Unit: store.Milliseconds}, {Name: "legacy", Key: "legacy:queue", Unit: store.Milliseconds},
			{Name: "topics", Pattern: mustPattern("topic:<name>"), Unit: store.Seconds}},
		ListQueues: []ListQueueSpec{{Name: "jobs", Key: "queue:jobs"}},
		Limiters: []LimiterSpec{{LimiterSpec: store.LimiterSpec{Name: "api", Pattern: "rl:api:<user>", Kind: store.Sliding, Window: time.Minute, Limit: 5},
			Pattern: mustPattern("rl:api:<user>")},
			{LimiterSpec: store.LimiterSpec{Name: "fx", Pattern: "rl:fx:<user>", Kind: store.Fixed, Window: time.Hour, Limit: 10},
				Pattern: mustPattern("rl:fx:<user>")}},
		Uniques: []UniqueSpec{{Kind: store.HyperLogLog, Family: uvFam}},
		Locks:   []LockSpec{{Name: "jobs", Pattern: mustPattern("lock:job:<id>")}},
	}

	// Delay queues: ours with a claimed task, and a hand-rolled one (ZADD due ms, no in-flight set).
	q := st.DelayQueue("delay:orders", store.Milliseconds)
	q.Enqueue(ctx, now.Add(-2*time.Minute), "a", "b")
	q.Enqueue(ctx, now.Add(5*time.Minute), "c")
	if got, _ := q.Claim(ctx, 1, time.Minute); len(got.Tasks) != 1 {
		t.Fatal("claim")
	}
	rdb.ZAdd(ctx, "legacy:queue", redis.Z{Score: float64(now.Add(-10 * time.Second).UnixMilli()), Member: "x"})
	for i, topic := range []string{"topic:a", "topic:b"} { // queues by pattern, scored in seconds
		for j := range i + 1 {
			rdb.ZAdd(ctx, topic, redis.Z{Score: float64(now.Add(-time.Minute).Unix()), Member: fmt.Sprint(j)})
		}
	}
	lq := st.ListQueue("queue:jobs")
	lq.Push(ctx, "1", "2", "3")
	lq.Pop(ctx, time.Second)

	// Limiter keys: u1 at its limit through our limiter, u2 once, and a racy writer's u3 past it.
	l, err := st.NewLimiter(structs.Limiters[0].LimiterSpec)
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		l.Allow(ctx, "u1")
	}
	l.Allow(ctx, "u2")
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		rdb.ZAdd(ctx, "rl:api:u3", redis.Z{Score: float64(now.UnixMilli()), Member: fmt.Sprint(i)})
	}

	// Uniques: two pages today, one of them yesterday too.
	uv := st.NewUniques(store.HyperLogLog, uvFam)
	for i := range 100 {
		uv.Add(ctx, store.Day, []string{"home"}, now, fmt.Sprint("u", i))
		uv.Add(ctx, store.Day, []string{"home"}, now.AddDate(0, 0, -1), fmt.Sprint("u", i+50))
	}
	uv.Add(ctx, store.Day, []string{"about"}, now, "u1", "u2")

	// Locks: ours, and a hand-rolled SETNX whose PEXPIRE never ran.
	if _, ok, _ := st.Acquire(ctx, "lock:job:1", time.Minute); !ok {
		t.Fatal("acquire")
	}
	rdb.SetNX(ctx, "lock:job:2", "pid-4711", 0)

	// Keys that fit a pattern but not its type: a hash where a limiter's zset, a lock's string
	// or an HLL belongs, and a fixed limiter's count reading 12abc. Each is counted apart and
	// left out of every other figure.
	rdb.Set(ctx, "rl:fx:a", 3, time.Hour)
	rdb.Set(ctx, "rl:fx:b", "12abc", time.Hour)
	rdb.HSet(ctx, "rl:api:u9", "f", 1)
	rdb.HSet(ctx, "lock:job:9", "f", 1)
	junk, _ := uvFam.Key(store.WindowAt(store.Day, now, shanghai), []string{"junk"})
	rdb.HSet(ctx, junk, "f", 1)

	snap, err := Take(ctx, rdb, nil, Options{Location: shanghai, Structures: structs, Now: st.Now})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.DelayQueues) != 4 || len(snap.ListQueues) != 1 || len(snap.Limiters) != 2 || len(snap.Uniques) != 1 || len(snap.Locks) != 1 {
		t.Fatalf("sections: %+v", snap)
	}
	dq := snap.DelayQueues[0]
	if dq.Depth != 2 || *dq.Due != 1 || dq.InFlight == nil || *dq.InFlight != 1 || *dq.OldestDueAgeMS < 110_000 || *dq.NextDueInMS < 290_000 || dq.Schedule["10m"] != 1 {
		t.Errorf("delay queue %+v", dq)
	}
	if sq := snap.DelayQueues[1]; sq.Depth != 1 || *sq.Due != 1 || sq.InFlight == nil || *sq.InFlight != 0 || *sq.OldestDueAgeMS < 9_000 || *sq.NextDueInMS != -1 {
		t.Errorf("hand-rolled queue %+v", sq)
	}
	if a, b := snap.DelayQueues[2], snap.DelayQueues[3]; a.Name != "topics" || a.Key != "topic:b" || a.Depth != 2 || *a.Due != 2 ||
		*a.OldestDueAgeMS < 59_000 || b.Key != "topic:a" || b.Depth != 1 {
		t.Errorf("queues by pattern (deepest first): %+v %+v", a, b)
	}
	if lqs := snap.ListQueues[0]; lqs.Length != 2 || lqs.Processing == nil || *lqs.Processing != 1 {
		t.Errorf("list queue %+v", lqs)
	}
	// Its payloads carry no time: its latency is unknown, and says why (never 0).
	if lqs := snap.ListQueues[0]; lqs.LatencyMS != nil || !strings.Contains(lqs.LatencyNote, "payload holds no time") {
		t.Errorf("list queue latency %v (%q), want unknown with why", lqs.LatencyMS, lqs.LatencyNote)
	}
	lim := snap.Limiters[0]
	if lim.Keys != 3 || lim.Hits != 5+1+8 || lim.AtLimit != 1 || lim.OverLimit == nil || *lim.OverLimit != 1 || lim.Allowed == nil || *lim.Allowed != 6 || lim.Rejected == nil || *lim.Rejected != 2 || lim.WrongType != 1 ||
		len(lim.Top) != 3 || lim.Top[0].Key != "rl:api:u3" || lim.Top[0].Dims["user"] != "u3" {
		t.Errorf("limiter %+v", lim)
	}
	if fx := snap.Limiters[1]; fx.Keys != 1 || fx.Hits != 3 || fx.WrongType != 1 || len(fx.Top) != 1 {
		t.Errorf("fixed limiter with a 12abc key %+v", fx)
	}
	// Its keys were written by hand, not through hourglass's store: no decision was counted, so
	// none is known (not 0).
	if fx := snap.Limiters[1]; fx.Allowed != nil || fx.Rejected != nil {
		t.Errorf("a limiter with no decision counters: allowed %v, rejected %v; want unknown", fx.Allowed, fx.Rejected)
	}
	u := snap.Uniques[0]
	var today snapshot.UniqueWindow
	for _, w := range u.Windows {
		if w.Current {
			today = w
		}
	}
	if len(u.Windows) != 2 || today.Keys != 2 || u.WrongType != 1 || today.Count < 100 || today.Count > 104 || u.UnionDims["page"] != "home" ||
		u.Union7d == nil || *u.Union7d < 147 || *u.Union7d > 153 || u.Union30d == nil || *u.Union30d != *u.Union7d {
		t.Errorf("uniques %+v (today %+v)", u, today)
	}
	lk := snap.Locks[0]
	if lk.Held != 2 || lk.NoTTL != 1 || lk.WrongType != 1 || snap.TTLHealth.LockNoTTL.Keys != 1 || snap.TTLHealth.LockNoTTL.Examples[0].Key != "lock:job:2" {
		t.Errorf("locks %+v, health %+v", lk, snap.TTLHealth.LockNoTTL)
	}
	for _, ex := range lk.Examples {
		if ex.Key == "lock:job:1" && (ex.AgeMS < 0 || ex.AgeMS > 60_000 || ex.TTLMS <= 0) {
			t.Errorf("our lock's holder %+v: want its age from the token", ex)
		}
		if ex.Key == "lock:job:2" && (ex.AgeMS != -1 || ex.TTLMS != -1 || ex.Token != "pid-4711") {
			t.Errorf("the hand-rolled lock %+v", ex)
		}
	}
	// Limiter keys, unique keys, locks, queues by pattern, queues by key with the in-flight set and
	// processing list read with them, and 5 above.
	if snap.Scan.KeysMatched != 3+3+2+2+3+2+5 {
		t.Errorf("matched %d", snap.Scan.KeysMatched)
	}
}
