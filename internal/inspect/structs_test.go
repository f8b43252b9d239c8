package inspect

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// hostileUser is a limiter or lock key's dim with an escape sequence, a newline and binary.
const hostileUser = "\x1b[31mu\n\xff"

// structWatcher watches a sliding, a fixed and a rate-limiter-flexible limiter and a lock, its
// clock now (time.Now when nil).
func structWatcher(t *testing.T, rdb redis.UniversalClient, now func() time.Time) drilled {
	sliding := store.LimiterSpec{Name: "api", Pattern: "rl:api:<user>", Kind: store.Sliding, Window: 3 * time.Second, Limit: 5}
	fixed := store.LimiterSpec{Name: "login", Pattern: "rl:login:<user>", Kind: store.Fixed, Window: time.Minute, Limit: 10}
	flex := store.LimiterSpec{Name: "flex", Pattern: "rlflx:<key>", Window: time.Minute, Limit: 5}
	return watching(rdb, nil, scanner.Options{Structures: scanner.Structures{
		Limiters: []scanner.LimiterSpec{
			{LimiterSpec: sliding, Pattern: pattern(t, sliding.Pattern), Exclude: globs(t, "rl:api:admin")},
			{LimiterSpec: fixed, Pattern: pattern(t, fixed.Pattern)},
			{LimiterSpec: flex, Pattern: pattern(t, flex.Pattern), Layout: limits.RateLimiterFlexible},
		},
		Locks: []scanner.LockSpec{{Name: "jobs", Pattern: pattern(t, "lock:<job>")}},
	}, Now: now})
}

// TestLimiterKeyOfEachLayout: a sliding key's hits are counted over its window and bucketed by
// when they came, the hits past the window left out; a fixed key's count has no buckets and says
// why; a library's key answers as the library does; a key the limiter does not cover is refused.
func TestLimiterKeyOfEachLayout(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	w := structWatcher(t, rdb, func() time.Time { return now }) // the window ends at now, to the millisecond
	key := "rl:api:" + hostileUser
	ago := func(ms int64) float64 { return float64(now.UnixMilli() - ms) }
	rdb.ZAdd(ctx, key, redis.Z{Score: ago(3500), Member: "old"}, redis.Z{Score: ago(2450), Member: "a"},
		redis.Z{Score: ago(1450), Member: "b"}, redis.Z{Score: ago(1420), Member: "c"}, redis.Z{Score: ago(30), Member: "d"})
	rdb.PExpire(ctx, key, 3*time.Second)
	d, err := w.LimiterKey(ctx, "api", key)
	if err != nil {
		t.Fatal(err)
	}
	// 30 buckets of 100 ms ending now: 2450 ms ago falls in bucket 29-24, 1450 and 1420 in 29-14.
	want := make([]int64, 30)
	want[5], want[15], want[29] = 1, 2, 1
	if d.Hits != 4 || d.Limit != 5 || d.BucketMS != 100 || !equalInts(d.Buckets, want) || d.BucketsNote != "" ||
		d.TTLMS <= 0 || d.TTLMS > 3000 || d.Remaining != nil || d.Key != key {
		t.Errorf("sliding: %+v", d)
	}
	if d.Command != w.RedisCLI("ZRANGE", key, "0", "-1", "WITHSCORES") || !strings.Contains(d.Command, `$'rl:api:\x1b[31mu\x0a\xff'`) {
		t.Errorf("command %s", d.Command)
	}

	// A limiter of hourglass's own, written by it.
	s := store.New(rdb, store.Options{})
	lim, err := s.NewLimiter(store.LimiterSpec{Name: "login", Pattern: "rl:login:<user>", Kind: store.Fixed, Window: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := lim.Allow(ctx, hostileUser); err != nil {
			t.Fatal(err)
		}
	}
	d, err = w.LimiterKey(ctx, "login", "rl:login:"+hostileUser)
	if err != nil || d.Hits != 3 || d.Buckets != nil || !strings.Contains(d.BucketsNote, "one count") || d.TTLMS <= 0 {
		t.Errorf("fixed: %+v %v", d, err)
	}
	if d, err = w.LimiterKey(ctx, "login", "rl:login:nobody"); err != nil || d.Hits != 0 || d.TTLMS != -2 {
		t.Errorf("a key gone: %+v %v", d, err)
	}

	rdb.Set(ctx, "rlflx:k", 7, time.Minute) // 7 points consumed against 5: 2 refused
	d, err = w.LimiterKey(ctx, "flex", "rlflx:k")
	if err != nil || d.Hits != 5 || d.Refused == nil || *d.Refused != 2 || d.Remaining == nil || *d.Remaining != 0 || d.Buckets != nil ||
		d.BucketsNote == "" || d.Command != w.RedisCLI("GET", "rlflx:k") {
		t.Errorf("rate-limiter-flexible: %+v %v", d, err)
	}
	if !d.AtLimit || d.AllowedInMS <= 0 || d.AllowedInMS > 60_000 { // it takes a hit again when the key expires
		t.Errorf("rate-limiter-flexible at its limit: at limit %v, allowed in %d ms", d.AtLimit, d.AllowedInMS)
	}

	for _, c := range []struct{ limiter, key string }{{"api", "rl:api:admin"}, {"api", "rl:login:x"}, {"nope", key}} {
		if _, err := w.LimiterKey(ctx, c.limiter, c.key); err == nil {
			t.Errorf("%s %q was read", c.limiter, c.key)
		}
	}
	rdb.Set(ctx, "rl:api:str", "x", 0)
	var ce *store.CommandError
	if _, err := w.LimiterKey(ctx, "api", "rl:api:str"); !errors.As(err, &ce) || ce.Command != "ZCOUNT" || ce.User != "default" {
		t.Errorf("a string under a sliding limiter: %v", err)
	}
}

// TestLockHolder: hourglass's own lock says how long it has been held; another's token does not,
// and one without a TTL says so; a lock released since is Gone; a key of another type is refused
// naming GET.
func TestLockHolder(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	w := structWatcher(t, rdb, nil)
	s := store.New(rdb, store.Options{})
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	key := "lock:" + hostileUser
	l, ok, err := s.Acquire(ctx, key, 10*time.Second)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	d, err := w.LockHolder(ctx, "jobs", key)
	taken, _ := store.LockTokenTime(l.Token)
	if err != nil || d.Holder != l.Token || d.Gone || d.PTTLMS <= 0 || d.PTTLMS > 10000 || d.HeldMS != max(d.ReadAt.UnixMilli()-taken, 0) ||
		d.Command != w.RedisCLI("GET", key) {
		t.Errorf("our lock: %+v %v", d, err)
	}
	rdb.Set(ctx, "lock:theirs", "\x1b]0;x\x07host-1", 0)
	if d, err := w.LockHolder(ctx, "jobs", "lock:theirs"); err != nil || d.HeldMS != -1 || d.PTTLMS != -1 || d.Holder != "\x1b]0;x\x07host-1" {
		t.Errorf("their lock: %+v %v", d, err)
	}
	if _, err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if d, err := w.LockHolder(ctx, "jobs", key); err != nil || !d.Gone || d.Holder != "" || d.PTTLMS != -2 || d.HeldMS != -1 {
		t.Errorf("released: %+v %v", d, err)
	}
	rdb.RPush(ctx, "lock:list", "x")
	var ce *store.CommandError
	if _, err := w.LockHolder(ctx, "jobs", "lock:list"); !errors.As(err, &ce) || ce.Command != "GET" || !store.Permanent(err) {
		t.Errorf("a list: %v", err)
	}
	if _, err := w.LockHolder(ctx, "jobs", "other:x"); err == nil {
		t.Error("a key the lock does not cover was read")
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
