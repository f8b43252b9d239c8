package limits

// Limiter layouts: the keys that common rate-limiting libraries write, read as the library itself
// would answer for them. hourglass's own limiter (limiter.go) counts only allowed hits, so a key
// past its limit there means a racy writer. These libraries differ. In python limits' fixed window
// and in rate-limiter-flexible, the counter counts refused attempts too. So a key at its limit
// holds more than the limit, and the library still says "at the limit" (remaining 0), not "over".
// The moving window of limits keeps a list of timestamps, and redis_rate keeps a GCRA theoretical
// arrival time. Each library's layout is documented and read in its own file (limits.go, rlflex.go,
// redisrate.go). This file holds what they share. Reads only, pipelined.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Layout names whose layout a limiter's keys are in.
type Layout uint8

// The limiter layouts hourglass reads. The zero value is hourglass's own.
const (
	// Hourglass is hourglass's own limiter (limiter.go): a sorted set of hits (sliding) or a
	// counter of allowed hits (fixed).
	Hourglass Layout = iota
	// Limits is python limits (2.x): a fixed window's counter or a moving window's list of
	// timestamps, the limit's amount and window spelled in the key name.
	Limits
	// RateLimiterFlexible is node rate-limiter-flexible's RateLimiterRedis: a counter of consumed
	// points, refused ones included, expiring with the duration (or a block).
	RateLimiterFlexible
	// RedisRate is Go's github.com/go-redis/redis_rate (v10): a GCRA theoretical arrival time.
	RedisRate
)

// libraries is the table of the limiter layouts, one row a library, indexed by its Layout.
// Adding a library is its file (<library>.go, its layout documented at the top) and its
// row here.
var libraries = [...]library{
	Hourglass: {name: "hourglass", kinds: KindFixed,
		notRead: "hourglass's own limiter keys are read by their kind, not by ReadKeys"},
	Limits:              {name: "limits", pattern: limitsDefaultPattern, kinds: KindFixed + " or " + KindMoving, read: readLimits},
	RateLimiterFlexible: {name: "rate-limiter-flexible", pattern: rlflexDefaultPrefix + ":<key>", kinds: KindFixed, read: readRLFlex},
	RedisRate:           {name: "redis_rate", pattern: redisRatePrefix + "<key>", kinds: KindGCRA, read: readRedisRate},
}

// library is one row of libraries.
type library struct {
	name string // as a config names it
	// pattern is the key pattern (pattern.go's syntax) the library writes when its user sets no
	// prefix of their own; "" for hourglass, whose limiters always name their pattern.
	pattern string
	// kinds are what the library's keys may hold, said when none was read.
	kinds string
	// read reads a page of the library's keys (ReadKeys); nil with notRead saying why.
	read    func(ctx context.Context, rdb redis.Cmdable, keys []string, limit int64, window time.Duration, burst int64, now time.Time) ([]State, error)
	notRead string
}

// ParseLayout reads a layout's name as a config gives it.
func ParseLayout(s string) (Layout, error) {
	for l, lib := range libraries {
		if s == lib.name {
			return Layout(l), nil
		}
	}
	return 0, fmt.Errorf("unknown limiter layout %q (want hourglass, limits, rate-limiter-flexible or redis_rate)", s)
}

func (l Layout) String() string {
	if int(l) < len(libraries) {
		return libraries[l].name
	}
	return "LimiterLayout(" + strconv.Itoa(int(l)) + ")"
}

// DefaultPattern is the key pattern (pattern.go's syntax) the library writes when its user sets
// no prefix of their own; "" for hourglass, whose limiters always name their pattern.
func (l Layout) DefaultPattern() string {
	if int(l) < len(libraries) {
		return libraries[l].pattern
	}
	return ""
}

// Kinds says what the library's keys may hold (KindFixed, KindMoving, KindGCRA), for a limiter
// none of whose keys was read.
func (l Layout) Kinds() string {
	if int(l) < len(libraries) {
		return libraries[l].kinds
	}
	return KindFixed
}

// State is one key as the library itself would answer for it now.
type State struct {
	Used int64 // hits counted against the limit in the current window (at most Limit)
	// Rejected is the refused attempts (points, for rate-limiter-flexible) the stored value also
	// counts: limits' fixed window and rate-limiter-flexible; 0 where the library keeps none
	// (KeepsRejected says which).
	Rejected  int64
	Remaining int64 // as the library reports it (never negative)
	// Limit is the limit the key was read against: the config's, limits' own from the key name,
	// and for redis_rate the burst (what the key can hold at once), so Used never exceeds it.
	Limit  int64
	Window time.Duration
	// AtLimit: the library would refuse the next hit (of cost 1). A key at its limit is never
	// "over": these libraries keep counting what they refuse.
	AtLimit bool
	// ResetIn, when AtLimit, is the time until the library would allow a hit again. Otherwise it is
	// the time until the window ends: the key's expiry, or for limits' moving window and
	// redis_rate, the reset the library reports. -1: unknown or never (a key without expiry).
	ResetIn time.Duration
	// Unknown, when not empty, says why the key could not be read in this layout (e.g.
	// "unknown layout: a hash"); the other fields are then zero and mean nothing.
	Unknown string
	// Kind is how the key counts. KindFixed is a counter of the window's attempts, refused ones
	// included, so Rejected is kept. KindMoving is limits' list of allowed hit times, and KindGCRA
	// redis_rate's arrival time. Neither of those two keeps what it refused, so their Rejected is 0
	// for want of a count, not a count of 0. Kind is "" for a key gone since it was listed, or one
	// not read (Unknown).
	Kind string
}

// The kinds of library limiter keys (State.Kind).
const (
	KindFixed  = "fixed"
	KindMoving = "moving"
	KindGCRA   = "gcra"
)

// KeepsRejected reports whether the key counts the attempts it refused (Rejected is a count).
func (s State) KeepsRejected() bool { return s.Kind == KindFixed }

// ReadKeys reads keys, all of one limiter, as of now, the server's time. It never writes. It takes
// one pipeline, and a second only for keys whose type must be told apart: limits' moving-window
// lists, or a key of a foreign type.
//
// limit and window are the config's. For limits they may be 0. A limits key name spells its own
// amount and window, which the library counts that key against, so they win. The config's serve
// only a name not in key_for's form. (The default pattern also matches keys of several limits at
// once.) burst is redis_rate's (0: the limit).
//
// A key that cannot be read in the layout says why in its Unknown; only a connection-level error is
// returned.
func ReadKeys(ctx context.Context, rdb redis.Cmdable, layout Layout, keys []string,
	limit int64, window time.Duration, burst int64, now time.Time) ([]State, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if int(layout) >= len(libraries) {
		return nil, fmt.Errorf("store: unknown limiter layout %d", layout)
	}
	lib := libraries[layout]
	if lib.read == nil {
		// hourglass's own keys are read by kind (ZCOUNT over the window, or GET), where a count
		// past the limit means a racy writer, which a State cannot say.
		return nil, errors.New("store: " + lib.notRead)
	}
	return lib.read(ctx, rdb, keys, limit, window, burst, now)
}

// counterRead is one key's GET and PTTL.
type counterRead struct {
	value     string
	present   bool
	wrongType bool   // GET said WRONGTYPE: the key is not a string
	refused   string // another error reply about this key (an ACL's NOPERM): why it is unreadable
	ttl       time.Duration
}

// readCounterKeys reads every key's value, and with withTTL its PTTL, in one pipeline. Replies
// about one key (WRONGTYPE) stay with the key; a connection error is returned.
func readCounterKeys(ctx context.Context, rdb redis.Cmdable, keys []string, withTTL bool) ([]counterRead, error) {
	pipe := rdb.Pipeline()
	gets := make([]*redis.StringCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		gets[i] = pipe.Get(ctx, k)
		if withTTL {
			ttls[i] = pipe.PTTL(ctx, k)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !store.KeyLevel(err) {
		return nil, fmt.Errorf("store: read limiter keys: %w", err)
	}
	out := make([]counterRead, len(keys))
	for i := range keys {
		v, err := gets[i].Result()
		switch {
		case err == redis.Nil:
		case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			out[i].wrongType = true
		case err != nil && !store.KeyLevel(err):
			return nil, fmt.Errorf("store: read limiter key %q: %w", keys[i], err)
		case err != nil:
			out[i].refused = "unreadable: " + err.Error()
		default:
			out[i].value, out[i].present = v, true
		}
		out[i].ttl = -1
		if withTTL {
			out[i].ttl = pttlOf(ttls[i])
		}
	}
	return out, nil
}

// pttlOf turns a PTTL reply into ResetIn's terms: -1 for a key without expiry (it never resets
// on its own), 0 for a key gone since (its window is over).
func pttlOf(cmd *redis.DurationCmd) time.Duration {
	d, err := cmd.Result()
	switch {
	case err != nil:
		return -1
	case d == -1: // go-redis passes -1 (no expiry) and -2 (no key) through as nanoseconds
		return -1
	case d < 0:
		return 0
	}
	return d
}

// readTypes names the Redis type of keys whose value was not what the layout keeps, in one
// pipeline, so a foreign key reads as "unknown layout: a hash" rather than as a 0.
func readTypes(ctx context.Context, rdb redis.Cmdable, keys []string) ([]string, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.StatusCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Type(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !store.KeyLevel(err) {
		return nil, fmt.Errorf("store: read limiter key types: %w", err)
	}
	out := make([]string, len(keys))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// foreignType says that a key holds a type the layout does not keep.
func foreignType(typ string) string {
	switch typ {
	case "":
		return "unknown layout: a key whose type could not be read"
	case "zset":
		return "unknown layout: a sorted set"
	case "none":
		return "unknown layout: the key changed while it was read"
	}
	return "unknown layout: a " + typ
}

// counterKey is a counter key read as limits' fixed window and rate-limiter-flexible answer for
// it; wrongType is set, and the state left zero, for a key of another type, which the caller
// reads again (limits' moving-window lists) or names.
func (r counterRead) counterKey(limit int64, window time.Duration) (st State, wrongType bool) {
	switch {
	case r.refused != "":
		st.Unknown = r.refused
	case r.wrongType:
		return st, true
	case !r.present:
		st = absentState(limit, window)
	default:
		n, bad := parseCounter(r.value)
		if bad != "" {
			st.Unknown = bad
			return st, false
		}
		st = counterState(n, limit, window, r.ttl)
	}
	return st, false
}

// counterState is a counter that counts refused attempts too (limits' fixed window,
// rate-limiter-flexible). The libraries allow a hit while the counter is below the limit, and
// report remaining = max(limit - counter, 0). So a counter past the limit is at the limit with the
// excess refused, never "over". A counter below 0 (rate-limiter-flexible's reward) has used
// nothing. As the library reports it, it has more than the limit remaining.
func counterState(counted, limit int64, window, ttl time.Duration) State {
	return State{
		Used:      min(max(counted, 0), limit),
		Rejected:  max(counted-limit, 0),
		Remaining: max(limit-counted, 0),
		Limit:     limit,
		Window:    window,
		AtLimit:   counted >= limit,
		ResetIn:   ttl,
		Kind:      KindFixed,
	}
}

// absentState is a key that no longer exists (it expired since it was listed): nothing used.
func absentState(limit int64, window time.Duration) State {
	return State{Remaining: limit, Limit: limit, Window: window}
}

// parseCounter reads a counter as the libraries do (a base-10 integer, INCRBY's own format).
func parseCounter(v string) (int64, string) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Sprintf("unknown layout: a string %q that is not a counter", truncateValue(v))
	}
	return n, ""
}

// truncateValue keeps an unknown value short enough to show.
func truncateValue(v string) string {
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}
