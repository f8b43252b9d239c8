package scanner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
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
// count (GET); for a library's layout what the library would answer (store.ReadLimitKeys). The
// key must be one the limiter's pattern covers. A key that is not there has no hits and TTLMS -2.
func (w *Watcher) LimiterKey(ctx context.Context, limiter, key string) (LimiterKeyDetail, error) {
	w.specMu.RLock()
	specs := w.opt.Structures.Limiters
	w.specMu.RUnlock()
	var spec *LimiterSpec
	for i := range specs {
		if specs[i].Name == limiter && keyCovered(specs[i].Pattern, specs[i].Exclude, key) {
			spec = &specs[i]
		}
	}
	if spec == nil {
		return LimiterKeyDetail{}, fmt.Errorf("scanner: no limiter %q covers %s", limiter, Escape(key))
	}
	now := w.inspectNow()
	d := LimiterKeyDetail{Limiter: limiter, Key: key, Limit: spec.Limit, ReadAt: now}
	var err error
	switch {
	case spec.Layout != store.Hourglass:
		err = w.libraryLimiterKey(ctx, *spec, &d)
	case spec.Kind == store.Fixed:
		d.Command = w.RedisCLI("GET", key)
		d.BucketsNote = "a fixed window keeps one count for the window"
		err = w.fixedLimiterKey(ctx, &d)
	default:
		d.Command = w.RedisCLI("ZRANGE", key, "0", "-1", "WITHSCORES")
		err = w.slidingLimiterKey(ctx, spec.Window, &d)
	}
	w.inspectSpend(1)
	return d, w.inspectRefusal(err, key)
}

// slidingLimiterKey reads a sliding limiter's key: its hits since now less the window (the hits
// its script still counts) and their times, bucketed.
func (w *Watcher) slidingLimiterKey(ctx context.Context, window time.Duration, d *LimiterKeyDetail) error {
	nowMS := d.ReadAt.UnixMilli()
	from := "(" + strconv.FormatInt(nowMS-window.Milliseconds(), 10)
	pipe := w.rdb.Pipeline()
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
func (w *Watcher) fixedLimiterKey(ctx context.Context, d *LimiterKeyDetail) error {
	pipe := w.rdb.Pipeline()
	ttl := pipe.PTTL(ctx, d.Key)
	get := pipe.Get(ctx, d.Key)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return namedReply(err, d.Key, ttl, get)
	}
	d.TTLMS = pttlMS(ttl.Val())
	if v, err := get.Result(); err == nil {
		n, ok := ParseInteger(v)
		if !ok {
			return fmt.Errorf("scanner: the limiter key %s holds %s, not a count", Escape(d.Key), Escape(v))
		}
		d.Hits = n
	}
	return nil
}

// libraryLimiterKey reads a key in a library's layout as the library would answer for it, and
// its PTTL and type (for the command that reads it).
func (w *Watcher) libraryLimiterKey(ctx context.Context, spec LimiterSpec, d *LimiterKeyDetail) error {
	d.BucketsNote = fmt.Sprintf("the %s layout keeps one count per window", spec.Layout)
	states, err := store.ReadLimitKeys(ctx, w.rdb, spec.Layout, []string{d.Key}, spec.Limit, spec.Window, spec.Burst, d.ReadAt)
	if err != nil {
		return err
	}
	pipe := w.rdb.Pipeline()
	ttl, typ := pipe.PTTL(ctx, d.Key), pipe.Type(ctx, d.Key)
	if _, err := pipe.Exec(ctx); err != nil {
		return namedReply(err, d.Key, ttl, typ)
	}
	st := states[0]
	if st.Unknown != "" {
		return fmt.Errorf("scanner: the limiter key %s cannot be read as %s's: %s", Escape(d.Key), spec.Layout, st.Unknown)
	}
	d.Hits, d.Limit, d.Refused, d.Remaining = st.Used, st.Limit, st.Rejected, &st.Remaining
	d.TTLMS = pttlMS(ttl.Val())
	if typ.Val() == "list" { // limits' moving window: its hit times
		d.Command = w.RedisCLI("LRANGE", d.Key, "0", "-1")
	} else {
		d.Command = w.RedisCLI("GET", d.Key)
	}
	return nil
}

// LockHolder reads one key of the lock named lock: its holder's token (GET), its PTTL, and how
// long it has been held when the token says when it was taken (hourglass's own "<unix ms>-<hex>").
// A lock released or expired since the sweep is Gone. The key must be one the lock's pattern
// covers.
func (w *Watcher) LockHolder(ctx context.Context, lock, key string) (LockDetail, error) {
	w.specMu.RLock()
	specs := w.opt.Structures.Locks
	w.specMu.RUnlock()
	found := false
	for _, l := range specs {
		found = found || l.Name == lock && keyCovered(l.Pattern, l.Exclude, key)
	}
	if !found {
		return LockDetail{}, fmt.Errorf("scanner: no lock %q covers %s", lock, Escape(key))
	}
	now := w.inspectNow()
	d := LockDetail{Lock: lock, Key: key, ReadAt: now, HeldMS: -1, Command: w.RedisCLI("GET", key)}
	pipe := w.rdb.Pipeline()
	get, ttl := pipe.Get(ctx, key), pipe.PTTL(ctx, key)
	_, err := pipe.Exec(ctx)
	w.inspectSpend(1)
	if err != nil && err != redis.Nil {
		return d, w.inspectRefusal(namedReply(err, key, get, ttl), key)
	}
	d.Holder, d.PTTLMS = get.Val(), pttlMS(ttl.Val())
	d.Gone = get.Err() == redis.Nil
	if ms, ok := tokenTime(d.Holder); ok {
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
