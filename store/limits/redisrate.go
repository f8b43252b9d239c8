package limits

// Go github.com/go-redis/redis_rate (v10) in Redis: a GCRA limiter (lua.go, rate.go).
// docs/limiter-redis_rate.md has the formulas in full.
//
// Key: "rate:" + the caller's key, the prefix fixed in the library. As a pattern, rate:<key>.
//
// Value: the key's theoretical arrival time (TAT), in float seconds since 2017-01-01T00:00:00Z.
// (The script subtracts 1483228800 from TIME to keep the float's precision.) EX is set to the
// seconds until it passes. The limit is Rate per Period with Burst, and the emission interval is
// Period/Rate. AllowN(n) takes tat = max(TAT, now). It allows when now - (tat + n·interval -
// Burst·interval) >= 0, and then stores tat + n·interval. Refused hits leave the TAT as it was, so
// nothing counts them.
//
// We answer as the library's AllowN(key, limit, 0) does, a check that consumes nothing. We compute
// it in the script's float steps, from GET and now: the server's TIME, to the microsecond as the
// script reads it. Remaining is the check's, truncated to an integer as Redis does, and 0 when
// negative. Used = Burst - Remaining, and Limit = Burst. AtLimit is whether a hit of cost 1 would
// be refused. ResetIn is the retry after at the limit, else the reset after (tat - now).

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	redisRatePrefix = "rate:"
	redisRateEpoch  = 1483228800 // 2017-01-01T00:00:00Z, the scripts' jan_1_2017
)

// readRedisRate reads redis_rate keys against Rate limit per Period window with burst.
func readRedisRate(ctx context.Context, rdb redis.Cmdable, keys []string, limit int64, window time.Duration,
	burst int64, now time.Time) ([]State, error) {
	if limit < 1 || window <= 0 {
		return nil, fmt.Errorf("store: redis_rate keys need the limit's rate and period, got %d per %v", limit, window)
	}
	if burst <= 0 {
		burst = limit
	}
	reads, err := readCounterKeys(ctx, rdb, keys, false) // the TAT says it all; the EX is its shadow
	if err != nil {
		return nil, err
	}
	out := make([]State, len(keys))
	var foreign []int
	for i, r := range reads {
		switch {
		case r.refused != "":
			out[i].Unknown = r.refused
		case r.wrongType:
			foreign = append(foreign, i)
		default:
			// An absent key is answered as the script answers it, with TAT = now.
			out[i] = redisRateState(r.value, r.present, limit, window, burst, now)
		}
	}
	if err := nameForeignTypes(ctx, rdb, keys, foreign, out); err != nil {
		return nil, err
	}
	return out, nil
}

// redisRateState answers for a TAT as the library's scripts would at now.
func redisRateState(value string, present bool, rate int64, period time.Duration, burst int64, now time.Time) State {
	// The script's now: (TIME[1] - jan_1_2017) + TIME[2] / 1000000, in the same float steps.
	nowS := float64(now.Unix()-redisRateEpoch) + float64(now.Nanosecond()/1000)/1000000
	tat := nowS
	if present {
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return State{Unknown: fmt.Sprintf("unknown layout: a string %q that is not a GCRA arrival time", truncateValue(value))}
		}
		tat = v
	}
	interval := period.Seconds() / float64(rate) // period / rate, both sent as decimal text
	burstOffset := interval * float64(burst)
	tat = math.Max(tat, nowS)

	// AllowN(0): remaining = diff / interval with diff = now - (tat - burst_offset).
	var remaining int64
	if r := (nowS - (tat - burstOffset)) / interval; r >= 0 {
		remaining = min(int64(r), burst) // Redis truncates a script's number reply
	}
	s := State{
		Used:      burst - remaining,
		Remaining: remaining,
		Limit:     burst,
		Window:    period,
		ResetIn:   secondsDuration(tat - nowS),
		Kind:      KindGCRA,
	}
	// Allow (cost 1): refused when now - (tat + interval - burst_offset) < 0.
	if diff := nowS - (tat + interval - burstOffset); diff/interval < 0 {
		s.AtLimit = true
		s.ResetIn = secondsDuration(-diff)
	}
	return s
}
