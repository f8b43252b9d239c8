package limits

// node rate-limiter-flexible (5.x) RateLimiterRedis in Redis (lib/RateLimiterRedis.js,
// RateLimiterStoreAbstract.js, RateLimiterAbstract.js). docs/limiter-rate-limiter-flexible.md has
// the layout and the answers.
//
// Key: "<keyPrefix>:<key>", keyPrefix "rlflx" unless the limiter names another; an empty one leaves
// the key bare. As a pattern, rlflx:<key>.
//
// Value: a string counter of consumed points, refused consumes included. consume(key, points) runs
// one script: SET key 0 EX duration NX, INCRBY points, PTTL (and EXPIRE if the TTL was lost). It is
// refused when the new count exceeds the limiter's points, so the counter keeps counting past them.
// With blockDuration, the first refusal rewrites the key with the count and the block's expiry (SET
// … EX blockDuration). So a blocked key is a counter past its points that expires when the block
// ends. A duration of 0 sets no expiry: points never reset. A reward() decrements and can leave the
// counter below 0.
//
// We answer as get(key) does, from the same GET and PTTL, in one pipeline. (The library gives null
// for a key that does not exist, and msBeforeNext -1 without expiry.) Used = min(counter, points),
// and Rejected = the points past them. AtLimit = counter >= points: the next consume of 1 takes it
// past. ResetIn = the PTTL, which is also when a blocked key is allowed again. Blocks kept in the
// process's memory (inMemoryBlockOnConsumed) are not in Redis.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

const rlflexDefaultPrefix = "rlflx"

// readRLFlex reads rate-limiter-flexible keys against the limiter's points (limit) and duration
// (window, for the record: the expiry already says when a key resets).
func readRLFlex(ctx context.Context, rdb redis.Cmdable, keys []string, limit int64, window time.Duration,
	_ int64, _ time.Time) ([]State, error) {
	if limit < 1 {
		return nil, fmt.Errorf("store: rate-limiter-flexible keys need the limiter's points (limit), got %d", limit)
	}
	reads, err := readCounterKeys(ctx, rdb, keys, true)
	if err != nil {
		return nil, err
	}
	out := make([]State, len(keys))
	var foreign []int
	for i, r := range reads {
		st, wrongType := r.counterKey(limit, window)
		if wrongType {
			foreign = append(foreign, i)
			continue
		}
		out[i] = st
	}
	if err := nameForeignTypes(ctx, rdb, keys, foreign, out); err != nil {
		return nil, err
	}
	return out, nil
}

// nameForeignTypes says, for the keys at the indexes in which (GET found them not to be strings),
// which type they hold instead, in one more pipeline only when there are any.
func nameForeignTypes(ctx context.Context, rdb redis.Cmdable, keys []string, which []int, out []State) error {
	if len(which) == 0 {
		return nil
	}
	names := make([]string, len(which))
	for j, i := range which {
		names[j] = keys[i]
	}
	types, err := readTypes(ctx, rdb, names)
	if err != nil {
		return err
	}
	for j, i := range which {
		out[i].Unknown = foreignType(types[j])
	}
	return nil
}
