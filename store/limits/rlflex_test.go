package limits

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// rlflexFixture is what testdata/node/rlflex.mjs prints: per key as stored, what
// rate-limiter-flexible's get() answered, and Date.now() when it printed.
type rlflexFixture struct {
	Now  int64 `json:"now"`
	Keys map[string]struct {
		ConsumedPoints  int64 `json:"consumedPoints"`
		RemainingPoints int64 `json:"remainingPoints"`
		MsBeforeNext    int64 `json:"msBeforeNext"`
		Points          int64 `json:"points"`
		Duration        int64 `json:"duration"`
		Rejected        int64 `json:"rejected"` // consumes refused
	} `json:"keys"`
}

func TestRateLimiterFlexibleReadsAsItAnswers(t *testing.T) {
	node := redistest.Interpreter(t, "node", "rate-limiter-flexible", "ioredis")
	srv := redistest.Start(t)
	var fx rlflexFixture
	redistest.RunFixture(t, node, redistest.NodeDir(), &fx, "rlflex.mjs", "redis://"+srv.Addr)
	rdb := srv.Client(t)
	ctx := t.Context()
	if err := rdb.HSet(ctx, "rlflx:hash", "f", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "rlflx:junk", "1.5", 0).Err(); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range fx.Keys {
			if !yield(k) {
				return
			}
		}
	})
	if len(keys) != 5 {
		t.Fatalf("fixture wrote %d keys, want 5: %+v", len(keys), fx)
	}
	log := logCommands(rdb)
	all := append(slices.Clone(keys), "rlflx:hash", "rlflx:junk", "rlflx:gone")
	got, err := ReadKeys(ctx, rdb, RateLimiterFlexible, all, 5, time.Minute, 0, time.UnixMilli(fx.Now))
	if err != nil {
		t.Fatal(err)
	}
	if trips, names := log.take(); trips != 2 || !slices.Equal(names, []string{"get", "pttl", "type"}) {
		t.Errorf("read in %d round trips with %v, want 2 (counters, then the one foreign key's type) of reads only", trips, names)
	}
	pattern, err := store.ParseKeyPattern(RateLimiterFlexible.DefaultPattern())
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range keys {
		want, s := fx.Keys[key], got[i]
		t.Logf("%s: get() consumed %d remaining %d msBeforeNext %d; read %+v", key, want.ConsumedPoints, want.RemainingPoints, want.MsBeforeNext, s)
		if dims, ok := pattern.Match(key); ok != strings.HasPrefix(key, "rlflx:") || ok && "rlflx:"+dims[0] != key {
			t.Errorf("%s: default pattern %s matched %v %v", key, pattern, ok, dims)
		}
		used := min(want.ConsumedPoints, want.Points)
		if s.Unknown != "" || s.Remaining != want.RemainingPoints || s.Used != used ||
			s.Rejected != want.ConsumedPoints-used || s.AtLimit != (want.ConsumedPoints >= want.Points) ||
			s.Limit != want.Points || s.Window != time.Duration(want.Duration)*time.Second {
			t.Errorf("%s: read %+v; get() answers consumed %d, remaining %d of %d", key, s, want.ConsumedPoints, want.RemainingPoints, want.Points)
		}
		// Refused consumes of one point each are the counter's excess, never "over".
		if key != "rlflx:big" && s.Rejected != want.Rejected {
			t.Errorf("%s: %d rejected, the library refused %d", key, s.Rejected, want.Rejected)
		}
		if s.Used > s.Limit || (s.Rejected > 0 && !s.AtLimit) {
			t.Errorf("%s: counted over its limit: %+v", key, s)
		}
		// msBeforeNext is the PTTL when get() ran; ours was read after it.
		if d := time.Duration(want.MsBeforeNext)*time.Millisecond - s.ResetIn; d < -time.Millisecond || d > 10*time.Second {
			t.Errorf("%s: resets in %v, get() said %dms", key, s.ResetIn, want.MsBeforeNext)
		}
	}
	if s := got[slices.Index(all, "login:blocked")]; !s.AtLimit || s.ResetIn <= time.Minute {
		t.Errorf("a blocked key reads %+v, want at the limit until its 300s block ends", s)
	}
	for i, w := range []string{"unknown layout: a hash", "not a counter", ""} {
		if s := got[len(keys)+i]; (w == "") != (s.Unknown == "") || !strings.Contains(s.Unknown, w) || s.Used != 0 || s.AtLimit {
			t.Errorf("%s reads %+v, want Unknown %q and nothing counted", all[len(keys)+i], s, w)
		}
	}
}
