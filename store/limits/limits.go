package limits

// python limits (2.8, Debian's python3-limits) in Redis, as read from storage/redis.py, its Lua
// scripts under resources/redis/lua_scripts, strategies.py and limits.py. docs/limiter-limits.md
// has the layout and how each answer is derived.
//
// Key: RateLimitItem.key_for(*identifiers),
// "<namespace>/<identifier>/…/<amount>/<multiples>/<granularity>". The namespace is "LIMITER"
// unless the item names another. The granularity is second, minute, hour, day, month (30 days) or
// year (360 days), and the window is multiples of it. So "LIMITER/login/alice/5/1/minute" is 5 per
// minute. As a pattern it is LIMITER/<key>. Identifiers may hold "/" themselves, so the amount and
// window are read from the end of the name, not matched as placeholders. Both strategies name their
// keys alike; the type tells them apart.
//
// Fixed window (FixedWindowRateLimiter): a string counter, which counts refused hits too. We read
// GET and PTTL and answer as get_window_stats and test() do. Used = min(value, amount), Rejected =
// the excess, AtLimit = value >= amount, ResetIn = the PTTL.
//
// Moving window (MovingWindowRateLimiter): a list of the allowed hits' times, newest first. Each is
// the hitting client's time.time(), float seconds since the Unix epoch. Refused hits are not
// stored. We read the same LRANGE as get_moving_window, in a second pipeline, only for the keys GET
// found not to be strings. Used and Remaining come from the library's count. AtLimit comes from the
// entry at amount - 1, as a hit of cost 1 would find it. Within a second of an entry leaving the
// window, Remaining may say 0 while a hit would be allowed; so does the library. ResetIn is the
// library's reset; at the limit, it is the time until that entry leaves the window, when the
// library would allow again. The list read costs what the library's own check costs: up to amount
// entries per key.

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

const limitsDefaultPattern = "LIMITER/<key>"

// limitsGranularity is limits' TIME_TYPES: the seconds of each granularity name.
var limitsGranularity = map[string]time.Duration{
	"second": time.Second,
	"minute": time.Minute,
	"hour":   time.Hour,
	"day":    24 * time.Hour,
	"month":  30 * 24 * time.Hour,
	"year":   360 * 24 * time.Hour,
}

// limitsKeyLimit reads the amount and window key_for spells at the end of a key name; false for
// a name not in its form.
func limitsKeyLimit(key string) (int64, time.Duration, bool) {
	parts := strings.Split(key, "/")
	n := len(parts)
	if n < 4 { // the namespace, then amount, multiples and granularity at least
		return 0, 0, false
	}
	unit, ok := limitsGranularity[parts[n-1]]
	amount, err1 := strconv.ParseInt(parts[n-3], 10, 64)
	multiples, err2 := strconv.ParseInt(parts[n-2], 10, 64)
	if !ok || err1 != nil || err2 != nil || amount < 1 || multiples < 1 || multiples > math.MaxInt64/int64(unit) {
		return 0, 0, false
	}
	return amount, time.Duration(multiples) * unit, true
}

// readLimits reads limits keys of either strategy. The amount and window come from each key's
// name, which is what the library itself counts against; the config's limit and window serve a
// name not in key_for's form.
func readLimits(ctx context.Context, rdb redis.Cmdable, keys []string, limit int64, window time.Duration,
	_ int64, now time.Time) ([]State, error) {
	reads, err := readCounterKeys(ctx, rdb, keys, true)
	if err != nil {
		return nil, err
	}
	out := make([]State, len(keys))
	amounts := make([]int64, len(keys))
	windows := make([]time.Duration, len(keys))
	var lists []int // keys that are not strings: moving windows, or foreign
	for i, key := range keys {
		amount, win, ok := limitsKeyLimit(key)
		if !ok {
			amount, win = limit, window
		}
		if amount < 1 || win <= 0 {
			out[i].Unknown = "unknown layout: not a limits key name (…/<amount>/<multiples>/<granularity>), and no limit configured"
			continue
		}
		amounts[i], windows[i] = amount, win
		st, list := reads[i].counterKey(amount, win)
		if list {
			lists = append(lists, i)
			continue
		}
		out[i] = st
	}
	if len(lists) > 0 {
		if err := readLimitsLists(ctx, rdb, keys, lists, amounts, windows, now, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readLimitsLists reads the moving windows among keys (at the indexes in which) in one pipeline:
// the type, to tell a moving window from a foreign key, and the entries get_moving_window reads.
func readLimitsLists(ctx context.Context, rdb redis.Cmdable, keys []string, which []int, amounts []int64,
	windows []time.Duration, now time.Time, out []State) error {
	pipe := rdb.Pipeline()
	types := make([]*redis.StatusCmd, len(which))
	ranges := make([]*redis.StringSliceCmd, len(which))
	for j, i := range which {
		types[j] = pipe.Type(ctx, keys[i])
		ranges[j] = pipe.LRange(ctx, keys[i], 0, amounts[i])
	}
	if _, err := pipe.Exec(ctx); err != nil && !store.KeyLevel(err) {
		return fmt.Errorf("store: read limits moving windows: %w", err)
	}
	for j, i := range which {
		entries, err := ranges[j].Result()
		if err != nil && !store.KeyLevel(err) {
			return fmt.Errorf("store: read limits moving window %q: %w", keys[i], err)
		}
		switch typ := types[j].Val(); {
		case typ == "list" && err == nil:
			out[i] = limitsMovingState(entries, amounts[i], windows[i], now)
		case typ == "none": // expired between the two pipelines
			out[i] = absentState(amounts[i], windows[i])
		default:
			out[i].Unknown = foreignType(typ)
		}
	}
	return nil
}

// limitsMovingState answers for a moving window's entries (LRANGE 0 amount) as limits would at
// now: get_window_stats' count and reset, and whether acquire_moving_window would refuse a hit.
func limitsMovingState(entries []string, amount int64, window time.Duration, now time.Time) State {
	times := make([]float64, len(entries))
	for i, e := range entries {
		t, err := strconv.ParseFloat(e, 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return State{Unknown: fmt.Sprintf("unknown layout: a list whose entry %q is not a hit time", truncateValue(e))}
		}
		times[i] = t
	}
	nowS := float64(now.UnixNano()) / 1e9
	win := window.Seconds()
	cutoff := math.Trunc(nowS - win) // python sends int(time.time() - expiry)
	var counted int64
	for _, t := range times {
		if t < cutoff { // moving_window.lua stops at the first entry out of the window
			break
		}
		counted++
	}
	start := math.Trunc(nowS) // no entry counted: the library answers int(time.time())
	if counted > 0 {
		start = math.Trunc(times[0]) // Redis makes a script's number reply an integer
	}
	s := State{
		Used:      min(counted, amount),
		Remaining: max(amount-counted, 0),
		Limit:     amount,
		Window:    window,
		ResetIn:   secondsDuration(start + win - nowS),
		Kind:      KindMoving,
	}
	// acquire_moving_window.lua, cost 1: refused while the amount-th newest hit is in the window.
	if int64(len(times)) >= amount && times[amount-1] >= nowS-win {
		s.AtLimit = true
		s.ResetIn = secondsDuration(times[amount-1] + win - nowS)
	}
	return s
}

// secondsDuration turns float seconds into a Duration, never negative: a reset already past
// is due now.
func secondsDuration(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}
