package inspect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// limiterBuckets is how many buckets a sliding limiter key's window is cut into; limiterMembers
// the most hits of a window one read takes (a limit past it is shown from its oldest hits, and
// says so).
const (
	limiterBuckets = 30
	limiterMembers = 10_000
)

// LimiterKey reads one key of the limiter named limiter, as the sweep reads its layout: for
// hourglass's sliding limiter its hits in the window (ZCOUNT) and their times, bucketed over the
// window (at most the limit and one more, or limiterMembers, are read); for the fixed one its
// count (GET); for a library's layout what the library would answer (limits.ReadKeys). The
// key must be one the limiter's pattern covers. A key that is not there has no hits and TTLMS -2.
func (in *Inspector) LimiterKey(ctx context.Context, limiter, key string) (snapshot.LimiterKeyDetail, error) {
	specs := in.w.Watched().Structures.Limiters
	var spec *scanner.LimiterSpec
	for i := range specs {
		if specs[i].Name == limiter && keyCovered(specs[i].Pattern, specs[i].Exclude, key) {
			spec = &specs[i]
		}
	}
	if spec == nil {
		return snapshot.LimiterKeyDetail{}, fmt.Errorf("inspect: no limiter %q covers %s", limiter, format.Escape(key))
	}
	now := in.w.Now()
	d := snapshot.LimiterKeyDetail{Limiter: limiter, Key: key, Limit: spec.Limit, ReadAt: now}
	var err error
	switch {
	case spec.Layout != limits.Hourglass:
		err = in.libraryLimiterKey(ctx, *spec, &d)
	case spec.Kind == store.Fixed:
		d.Command = in.RedisCLI("GET", key)
		d.BucketsNote = "a fixed window keeps one count for the window"
		err = in.fixedLimiterKey(ctx, &d)
	default:
		d.Command = in.RedisCLI("ZRANGE", key, "0", "-1", "WITHSCORES")
		err = in.slidingLimiterKey(ctx, spec.Window, &d)
	}
	in.w.Charge(1)
	return d, in.refusal(err, key)
}

// slidingLimiterKey reads a sliding limiter's key: its hits since now less the window (the hits
// its script still counts) and their times, bucketed.
func (in *Inspector) slidingLimiterKey(ctx context.Context, window time.Duration, d *snapshot.LimiterKeyDetail) error {
	nowMS := d.ReadAt.UnixMilli()
	from := "(" + strconv.FormatInt(nowMS-window.Milliseconds(), 10)
	pipe := in.rdb.Pipeline()
	ttl := pipe.PTTL(ctx, d.Key)
	hits := pipe.ZCount(ctx, d.Key, from, "+inf")
	times := pipe.ZRangeByScoreWithScores(ctx, d.Key, &redis.ZRangeBy{Min: from, Max: "+inf",
		Count: min(d.Limit+1, limiterMembers)})
	if _, err := pipe.Exec(ctx); err != nil {
		return namedReply(err, d.Key, ttl, hits, times)
	}
	d.TTLMS, d.Hits = pttlMS(ttl.Val()), hits.Val()
	d.BucketMS = max((window.Milliseconds()+limiterBuckets-1)/limiterBuckets, 1)
	d.Buckets = make([]int64, limiterBuckets)
	for _, z := range times.Val() {
		i := limiterBuckets - 1 - (nowMS-int64(z.Score))/d.BucketMS
		d.Buckets[min(max(i, 0), limiterBuckets-1)]++ // a hit stamped after now (clocks apart) is the newest
	}
	if n := int64(len(times.Val())); n < d.Hits {
		d.BucketsNote = fmt.Sprintf("the buckets hold the oldest %d of the window's %d hits", n, d.Hits)
	}
	return nil
}

// fixedLimiterKey reads a fixed limiter's key: its count in the current window.
func (in *Inspector) fixedLimiterKey(ctx context.Context, d *snapshot.LimiterKeyDetail) error {
	pipe := in.rdb.Pipeline()
	ttl := pipe.PTTL(ctx, d.Key)
	get := pipe.Get(ctx, d.Key)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return namedReply(err, d.Key, ttl, get)
	}
	d.TTLMS = pttlMS(ttl.Val())
	if v, err := get.Result(); err == nil {
		n, ok := scanner.ParseInteger(v)
		if !ok {
			return fmt.Errorf("inspect: the limiter key %s holds %s, not a count", format.Escape(d.Key), format.Escape(v))
		}
		d.Hits = n
	}
	return nil
}

// libraryLimiterKey reads a key in a library's layout as the library would answer for it, and
// its PTTL and type (for the command that reads it).
func (in *Inspector) libraryLimiterKey(ctx context.Context, spec scanner.LimiterSpec, d *snapshot.LimiterKeyDetail) error {
	d.BucketsNote = fmt.Sprintf("the %s layout keeps one count per window", spec.Layout)
	states, err := limits.ReadKeys(ctx, in.rdb, spec.Layout, []string{d.Key}, spec.Limit, spec.Window, spec.Burst, d.ReadAt)
	if err != nil {
		return err
	}
	pipe := in.rdb.Pipeline()
	ttl, typ := pipe.PTTL(ctx, d.Key), pipe.Type(ctx, d.Key)
	if _, err := pipe.Exec(ctx); err != nil {
		return namedReply(err, d.Key, ttl, typ)
	}
	st := states[0]
	if st.Unknown != "" {
		return fmt.Errorf("inspect: the limiter key %s cannot be read as %s's: %s", format.Escape(d.Key), spec.Layout, st.Unknown)
	}
	d.Hits, d.Limit, d.Remaining = st.Used, st.Limit, &st.Remaining
	if st.KeepsRejected() {
		d.Refused = &st.Rejected
	}
	d.TTLMS = pttlMS(ttl.Val())
	d.AtLimit, d.AllowedInMS = st.AtLimit, -1
	if st.ResetIn >= 0 {
		d.AllowedInMS = st.ResetIn.Milliseconds()
	}
	if typ.Val() == "list" { // limits' moving window: its hit times
		d.Command = in.RedisCLI("LRANGE", d.Key, "0", "-1")
	} else {
		d.Command = in.RedisCLI("GET", d.Key)
	}
	return nil
}

// LockHolder reads one key of the lock named lock: its holder's token (GET), its PTTL, and how
// long it has been held when the token says when it was taken (hourglass's own "<unix ms>-<hex>").
// A lock released or expired since the sweep is Gone. The key must be one the lock's pattern
// covers.
func (in *Inspector) LockHolder(ctx context.Context, lock, key string) (snapshot.LockDetail, error) {
	specs := in.w.Watched().Structures.Locks
	found := false
	for _, l := range specs {
		found = found || l.Name == lock && keyCovered(l.Pattern, l.Exclude, key)
	}
	if !found {
		return snapshot.LockDetail{}, fmt.Errorf("inspect: no lock %q covers %s", lock, format.Escape(key))
	}
	now := in.w.Now()
	d := snapshot.LockDetail{Lock: lock, Key: key, ReadAt: now, HeldMS: -1, Command: in.RedisCLI("GET", key)}
	pipe := in.rdb.Pipeline()
	get, ttl := pipe.Get(ctx, key), pipe.PTTL(ctx, key)
	_, err := pipe.Exec(ctx)
	in.w.Charge(1)
	if err != nil && err != redis.Nil {
		return d, in.refusal(namedReply(err, key, get, ttl), key)
	}
	d.Holder, d.PTTLMS = get.Val(), pttlMS(ttl.Val())
	d.Gone = get.Err() == redis.Nil
	if ms, ok := store.LockTokenTime(d.Holder); ok {
		d.HeldMS = max(now.UnixMilli()-ms, 0)
	}
	return d, nil
}

// keyCovered reports whether key is one of a limiter's or lock's: its pattern matches it and its
// exclude does not.
func keyCovered(p *store.Pattern, exclude store.Globs, key string) bool {
	if p == nil {
		return false
	}
	_, ok := p.Match(key)
	return ok && !exclude.Match(key)
}

// pttlMS is a PTTL reply in milliseconds: -1 for no expiry, -2 for no key (go-redis passes both
// through as nanoseconds).
func pttlMS(d time.Duration) int64 {
	switch {
	case d == -2 || d == -2*time.Millisecond:
		return -2
	case d < 0:
		return -1
	}
	return d.Milliseconds()
}

// namedReply names the first command of a pipeline Redis answered with an error, and the key;
// an error that is not a reply is returned as it is.
func namedReply(err error, key string, cmds ...redis.Cmder) error {
	for _, c := range cmds {
		if ce := c.Err(); ce != nil && ce != redis.Nil && keyLevel(ce) {
			return &store.CommandError{Command: strings.ToUpper(c.Name()), Key: key, Err: ce}
		}
	}
	return err
}
