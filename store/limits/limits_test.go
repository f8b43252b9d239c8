package limits

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// limitsFixture is what testdata/limits/fixture.py prints: per key name, what python limits
// answered for it, and the time.time() at which it printed.
type limitsFixture struct {
	Now  float64 `json:"now"`
	Keys map[string]struct {
		Strategy  string  `json:"strategy"`
		Amount    int64   `json:"amount"`
		Expiry    int64   `json:"expiry"`
		Hits      []bool  `json:"hits"`
		Remaining int64   `json:"remaining"`
		Reset     float64 `json:"reset"`
		Test      bool    `json:"test"`
		// AllowedAt is when limits itself would next allow a hit (its test() asked at later
		// times, for a moving window).
		AllowedAt float64 `json:"allowed_at"`
	} `json:"keys"`
}

func runLimitsFixture(t *testing.T) (*redis.Client, limitsFixture) {
	t.Helper()
	py := redistest.Interpreter(t, "python3", "limits", "redis")
	srv := redistest.Start(t)
	var fx limitsFixture
	redistest.RunFixture(t, py, "testdata/limits", &fx, "fixture.py", "redis://"+srv.Addr)
	if len(fx.Keys) != 9 {
		t.Fatalf("fixture wrote %d keys, want 9: %+v", len(fx.Keys), fx)
	}
	return srv.Client(t), fx
}

// floatTime is a time.time() float as a time.Time.
func floatTime(s float64) time.Time {
	sec := math.Floor(s)
	return time.Unix(int64(sec), int64((s-sec)*1e9))
}

// commandLog records, through a go-redis hook, every command and how many round trips a
// reader made, so tests hold it to reads only and to its pipelines.
type commandLog struct {
	mu    sync.Mutex
	names []string
	trips int
}

func logCommands(rdb *redis.Client) *commandLog {
	l := &commandLog{}
	rdb.AddHook(l)
	return l
}

func (l *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.record(cmd)
		return next(ctx, cmd)
	}
}

func (l *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		l.record(cmds...)
		return next(ctx, cmds)
	}
}

func (l *commandLog) record(cmds ...redis.Cmder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	trip := false
	for _, c := range cmds {
		switch name := c.Name(); name {
		case "hello", "client", "auth", "select": // a new connection's handshake, not the reader's
		default:
			l.names = append(l.names, name)
			trip = true
		}
	}
	if trip {
		l.trips++
	}
}

// take returns the round trips and distinct command names since the last take.
func (l *commandLog) take() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := slices.Compact(slices.Sorted(slices.Values(l.names)))
	trips := l.trips
	l.names, l.trips = nil, 0
	return trips, names
}

func TestLimitsReadsAsLimitsAnswers(t *testing.T) {
	rdb, fx := runLimitsFixture(t)
	ctx := t.Context()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range fx.Keys {
			if !yield(k) {
				return
			}
		}
	})
	log := logCommands(rdb)
	// limit and window 0: each key's own come from its name.
	got, err := ReadKeys(ctx, rdb, Limits, keys, 0, 0, 0, floatTime(fx.Now))
	if err != nil {
		t.Fatal(err)
	}
	if trips, names := log.take(); trips != 2 || !slices.Equal(names, []string{"get", "lrange", "pttl", "type"}) {
		t.Errorf("read in %d round trips with %v, want 2 (counters, then the lists) of reads only", trips, names)
	}
	pattern, err := store.ParseKeyPattern(Limits.DefaultPattern())
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range keys {
		want, s := fx.Keys[key], got[i]
		t.Logf("%s: limits remaining %d test %v reset %+.3fs; read %+v", key, want.Remaining, want.Test, want.Reset-fx.Now, s)
		if _, ok := pattern.Match(key); !ok {
			t.Errorf("%s: not matched by the default pattern %s", key, pattern)
		}
		var allowed, refused int64
		for _, ok := range want.Hits {
			if ok {
				allowed++
			} else {
				refused++
			}
		}
		if want.Strategy == "moving" {
			refused = 0 // a moving window does not store refused hits
		}
		if s.Unknown != "" || s.Remaining != want.Remaining || s.AtLimit != !want.Test ||
			s.Used != allowed || s.Rejected != refused || s.Limit != want.Amount ||
			s.Window != time.Duration(want.Expiry)*time.Second {
			t.Errorf("%s: read %+v; limits answers remaining %d, test %v, %d allowed and %d refused of %d per %ds",
				key, s, want.Remaining, want.Test, allowed, refused, want.Amount, want.Expiry)
		}
		if s.Used > s.Limit || (s.Rejected > 0 && !s.AtLimit) {
			t.Errorf("%s: counted over its limit: %+v", key, s)
		}
		// ResetIn is, at the limit, when limits next allows a hit; below it, limits' reset. limits
		// answers in whole seconds (test() cuts its window there): at most a second off ours, plus
		// the fixture's run.
		wantAt, what := want.Reset, "resets"
		if s.AtLimit {
			wantAt, what = want.AllowedAt, "allows the next hit"
		}
		if at := fx.Now + s.ResetIn.Seconds(); math.Abs(at-wantAt) > 2 {
			t.Errorf("%s: %s in %v (at %.3f), limits says at %.3f", key, what, s.ResetIn, at, wantAt)
		}
	}
	// Hits spread over the window: the next is allowed when the oldest leaves it (10 s on),
	// long before limits' reset, the newest hit plus the window (55 s on), and hourglass says the
	// first.
	spread := fx.Keys["LIMITER/moving/spread/3/1/minute"]
	i := slices.Index(keys, "LIMITER/moving/spread/3/1/minute")
	if i < 0 || spread.Test || spread.AllowedAt-fx.Now > 13 || spread.Reset-fx.Now < 50 {
		t.Fatalf("the spread key: %+v at %.3f; want limits to allow again about 10 s on and reset about 55 s on", spread, fx.Now)
	}
	if s := got[i]; !s.AtLimit || math.Abs(s.ResetIn.Seconds()-(spread.AllowedAt-fx.Now)) > 2 {
		t.Errorf("the spread key: %+v; want at its limit, allowed again in %.1fs", s, spread.AllowedAt-fx.Now)
	}
}

func TestLimitsForeignAndOddKeys(t *testing.T) {
	rdb, fx := runLimitsFixture(t)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rdb.HSet(ctx, "LIMITER/h/5/1/minute", "f", "1").Err())
	must(rdb.Set(ctx, "LIMITER/junk/5/1/minute", "abc", 0).Err())
	must(rdb.RPush(ctx, "LIMITER/badlist/5/1/minute", "yesterday").Err())
	must(rdb.Set(ctx, "custom:alice", "7", time.Minute).Err())
	keys := []string{"LIMITER/h/5/1/minute", "LIMITER/junk/5/1/minute", "LIMITER/badlist/5/1/minute",
		"LIMITER/gone/5/1/minute", "custom:alice", "LIMITER/fixed/at/5/1/minute"}

	got, err := ReadKeys(ctx, rdb, Limits, keys, 0, 0, 0, floatTime(fx.Now))
	if err != nil {
		t.Fatal(err)
	}
	wantUnknown := []string{"unknown layout: a hash", "not a counter", "not a hit time", "", "no limit configured", ""}
	for i, key := range keys {
		if w := wantUnknown[i]; (w == "") != (got[i].Unknown == "") || !strings.Contains(got[i].Unknown, w) {
			t.Errorf("%s: Unknown %q, want %q", key, got[i].Unknown, w)
		}
		if got[i].Unknown != "" && (got[i].Used != 0 || got[i].AtLimit || got[i].Rejected != 0) {
			t.Errorf("%s: unreadable, yet counted: %+v", key, got[i])
		}
	}
	if g := got[3]; g.Used != 0 || g.Remaining != 5 || g.AtLimit {
		t.Errorf("a key gone since it was listed reads %+v, want nothing used", g)
	}
	// With the config's limit, a key outside key_for's form is read as a fixed window.
	got, err = ReadKeys(ctx, rdb, Limits, []string{"custom:alice", "LIMITER/fixed/at/5/1/minute"}, 5, time.Minute, 0, floatTime(fx.Now))
	if err != nil {
		t.Fatal(err)
	}
	if g := got[0]; g.Unknown != "" || g.Used != 5 || g.Rejected != 2 || !g.AtLimit || g.Remaining != 0 {
		t.Errorf("custom:alice (7 against 5 per minute) reads %+v, want 5 used, 2 rejected, at the limit", g)
	}
	if g := got[1]; g.Used != 5 || g.Remaining != 0 || !g.AtLimit || g.Rejected != 0 {
		t.Errorf("a key exactly at its limit reads %+v, want at the limit with nothing rejected", g)
	}
}

func TestLimitsMovingWindowEdges(t *testing.T) {
	// 3 per 10 s at now = 1000.5: hits at 999.9, 995, 990.2 (the last 10.3 s old). The library's
	// get_moving_window cuts at int(990.5) = 990, so it counts all three (remaining 0), while a
	// hit is allowed: the third newest is older than now - 10.
	now := floatTime(1000.5)
	s := limitsMovingState([]string{"999.9", "995", "990.2"}, 3, 10*time.Second, now)
	if s.Used != 3 || s.Remaining != 0 || s.AtLimit {
		t.Errorf("at the whole-second cutoff: %+v, want 3 counted, 0 remaining, a hit allowed", s)
	}
	s = limitsMovingState([]string{"999.9", "995", "990.6"}, 3, 10*time.Second, now)
	if !s.AtLimit || math.Abs(s.ResetIn.Seconds()-0.1) > 1e-6 {
		t.Errorf("the third newest in the window: %+v, want at the limit, allowed again in 100ms", s)
	}
	s = limitsMovingState([]string{"980", "979"}, 3, 10*time.Second, now)
	if s.Used != 0 || s.Remaining != 3 || s.AtLimit {
		t.Errorf("only old hits: %+v, want nothing counted", s)
	}
}

func TestLimiterLayoutNames(t *testing.T) {
	for _, l := range []Layout{Hourglass, Limits, RateLimiterFlexible, RedisRate} {
		back, err := ParseLayout(l.String())
		if err != nil || back != l {
			t.Errorf("%v: parsed back as %v, %v", l, back, err)
		}
		if p := l.DefaultPattern(); p != "" {
			if _, err := store.ParseKeyPattern(p); err != nil {
				t.Errorf("%v: default pattern %q: %v", l, p, err)
			}
		}
	}
	if _, err := ParseLayout("bucket4j"); err == nil {
		t.Error("an unknown layout parsed")
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialed: refused before any command
	defer rdb.Close()
	if _, err := ReadKeys(t.Context(), rdb, Hourglass, []string{"k"}, 5, time.Minute, 0, time.Now()); err == nil {
		t.Error("hourglass's own keys were read as a library's")
	}
}
