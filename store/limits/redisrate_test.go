package limits

import (
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// redis_rate is a test dependency only: hourglass reads its keys and never links it; the test
// writes them with the library itself and asks it what it answers.
func TestRedisRateReadsAsRedisRateAnswers(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	lim := redis_rate.NewLimiter(rdb)
	// An hour's period: an emission interval of 6 or 3 minutes, so the answers hold while the
	// test runs.
	groups := []struct {
		limit redis_rate.Limit
		hits  map[string]int // key → hits of cost 1
	}{
		{redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Hour}, map[string]int{"under": 3, "at": 10, "over": 13, "idle": 0}},
		{redis_rate.Limit{Rate: 20, Burst: 5, Period: time.Hour}, map[string]int{"b-under": 4, "b-at": 5, "b-over": 9}},
	}
	for _, g := range groups {
		var keys, names []string
		for name, n := range g.hits {
			for range n {
				if _, err := lim.Allow(ctx, name, g.limit); err != nil {
					t.Fatal(err)
				}
			}
			names = append(names, name)
			keys = append(keys, "rate:"+name)
		}
		checkRedisRate(t, srv, lim, g.limit, names, keys)
	}
}

// checkRedisRate reads keys at the server's TIME and compares each with what redis_rate answers
// right after: a zero-cost AllowN (remaining, reset after), then Allow (allowed, retry after).
func checkRedisRate(t *testing.T, srv *redistest.Server, lim *redis_rate.Limiter, limit redis_rate.Limit, names, keys []string) {
	t.Helper()
	rdb := srv.Client(t)
	ctx := t.Context()
	log := logCommands(rdb)
	before, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	log.take()
	got, err := ReadKeys(ctx, rdb, RedisRate, keys, int64(limit.Rate), limit.Period, int64(limit.Burst), before)
	if err != nil {
		t.Fatal(err)
	}
	if trips, cmds := log.take(); trips != 1 || len(cmds) != 1 || cmds[0] != "get" {
		t.Errorf("read in %d round trips with %v, want one pipeline of GETs", trips, cmds)
	}
	pattern, err := store.ParseKeyPattern(RedisRate.DefaultPattern())
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		s := got[i]
		check, err := lim.AllowN(ctx, name, limit, 0)
		if err != nil {
			t.Fatal(err)
		}
		hit, err := lim.Allow(ctx, name, limit)
		if err != nil {
			t.Fatal(err)
		}
		after, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: AllowN(0) remaining %d reset after %v; Allow allowed %d retry after %v; read %+v",
			keys[i], check.Remaining, check.ResetAfter, hit.Allowed, hit.RetryAfter, s)
		if dims, ok := pattern.Match(keys[i]); !ok || dims[0] != name {
			t.Errorf("%s: default pattern %s matched %v %v", keys[i], pattern, ok, dims)
		}
		if s.Unknown != "" || s.Remaining != int64(check.Remaining) || s.AtLimit != (hit.Allowed == 0) ||
			s.Used != int64(limit.Burst)-s.Remaining || s.Rejected != 0 || s.Limit != int64(limit.Burst) || s.Window != limit.Period {
			t.Errorf("%s: read %+v; redis_rate answers remaining %d, next hit allowed %d", keys[i], s, check.Remaining, hit.Allowed)
		}
		// The library ran at a later TIME than ours: its wait is shorter by at most the time
		// between, and agrees to the microsecond it reads.
		libWait := check.ResetAfter
		if s.AtLimit {
			libWait = hit.RetryAfter
		}
		if d := s.ResetIn - libWait; d < -time.Microsecond || d > after.Sub(before)+time.Microsecond {
			t.Errorf("%s: resets in %v, redis_rate says %v (%v after our read)", keys[i], s.ResetIn, libWait, after.Sub(before))
		}
	}
}

func TestRedisRateForeignKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	if err := rdb.HSet(ctx, "rate:hash", "f", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "rate:junk", "soon", 0).Err(); err != nil {
		t.Fatal(err)
	}
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadKeys(ctx, rdb, RedisRate, []string{"rate:hash", "rate:junk"}, 10, time.Minute, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []string{"unknown layout: a hash", "not a GCRA arrival time"} {
		if s := got[i]; !strings.Contains(s.Unknown, w) || s.Used != 0 || s.AtLimit {
			t.Errorf("key %d reads %+v, want Unknown %q and nothing counted", i, s, w)
		}
	}
	if _, err := ReadKeys(ctx, rdb, RedisRate, []string{"rate:x"}, 0, time.Minute, 0, now); err == nil {
		t.Error("redis_rate keys were read without a rate")
	}
}
