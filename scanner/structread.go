package scanner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// readsNothing reports whether a structure key needs no read: a job library's key (the sweep only
// finds its queue) or a queue's key that its entry reads by name.
func readsNothing(k *Key) bool {
	return k.kind == kindJob || k.kind == kindClaimed || k.kind == kindBloomPart
}

// libraryLimiter reports whether a key is a limiter key in a library's layout, read by
// readLibraryLimits rather than the page's pipeline.
func (s *Sweep) libraryLimiter(k *Key) bool {
	return k.kind == kindLimiter && s.structs.Limiters[k.spec].Layout != limits.Hourglass
}

// readLibraryLimits reads the library limiters' keys among keys (by index), one limiter at a
// time, as each library answers for them now.
func (s *Sweep) readLibraryLimits(ctx context.Context, c redis.Cmdable, keys []Key, idx []int) error {
	bySpec := map[int][]int{}
	for _, i := range idx {
		if s.libraryLimiter(&keys[i]) {
			bySpec[keys[i].spec] = append(bySpec[keys[i].spec], i)
		}
	}
	if len(bySpec) == 0 {
		return nil
	}
	now, err := s.serverTime(ctx, c) // the libraries answer by the server's clock (redis_rate reads TIME)
	if err != nil {
		return err
	}
	for spec, ids := range bySpec {
		l := s.structs.Limiters[spec]
		names := make([]string, len(ids))
		for j, i := range ids {
			names[j] = keys[i].Name
		}
		states, err := limits.ReadKeys(ctx, c, l.Layout, names, l.Limit, l.Window, l.Burst, now)
		if err != nil {
			return err
		}
		for j, i := range ids {
			st := states[j]
			keys[i].limit = &st
		}
	}
	return nil
}

func countStructures(keys []Key) int {
	n := 0
	for i := range keys {
		if keys[i].kind != kindCounter {
			n++
		}
	}
	return n
}

// readStructures reads the structure keys among keys (by index) in one pipeline: PTTL, and the
// hits in a limiter's window (ZCOUNT for a sliding one, GET for a fixed one), a lock's holder
// token (GET) or a unique's distinct count (PFCOUNT, BITCOUNT). The count goes to Value. A
// bitmap's BITCOUNT reads all of it, so its size (STRLEN) is charged to the sweep's budget.
func (s *Sweep) readStructures(ctx context.Context, c redis.Cmdable, keys []Key, idx []int) error {
	pipe := c.Pipeline()
	ttls := make([]*redis.DurationCmd, len(idx))
	vals := make([]redis.Cmder, len(idx))
	var sizes []*redis.IntCmd // the bitmaps' STRLEN
	nowMS := time.Now().UnixMilli()
	for j, i := range idx {
		k := &keys[i]
		if readsNothing(k) || s.libraryLimiter(k) {
			continue
		}
		ttls[j] = pipe.PTTL(ctx, k.Name)
		switch k.kind {
		case kindLimiter:
			l := s.structs.Limiters[k.spec]
			if l.Kind == store.Fixed {
				vals[j] = pipe.Get(ctx, k.Name)
			} else {
				vals[j] = pipe.ZCount(ctx, k.Name, fmt.Sprint(nowMS-l.Window.Milliseconds()), "+inf")
			}
		case kindLock:
			vals[j] = pipe.Get(ctx, k.Name)
		case kindDelayQueue:
			vals[j] = pipe.ZCard(ctx, k.Name)
		case kindListQueue:
			vals[j] = pipe.LLen(ctx, k.Name)
		case kindBloom: // its type says how it is read (Sweep.Finish)
			vals[j] = pipe.Type(ctx, k.Name)
		case kindUnique:
			if s.structs.Uniques[k.spec].Kind == store.Bitmap {
				sizes = append(sizes, pipe.StrLen(ctx, k.Name))
				vals[j] = pipe.BitCount(ctx, k.Name, nil)
			} else {
				vals[j] = pipe.PFCount(ctx, k.Name)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return err
	}
	for _, n := range sizes {
		s.pace.Spend(bitmapCost(n.Val())) // a key that is not a string has no size: 0
	}
	if err := s.readLibraryLimits(ctx, c, keys, idx); err != nil {
		return err
	}
	for j, i := range idx {
		k := &keys[i]
		if readsNothing(k) || s.libraryLimiter(k) {
			continue
		}
		if err := readTTL(k, ttls[j]); err != nil {
			return err
		}
		var err error
		switch v := vals[j].(type) {
		case *redis.StringCmd:
			k.Value, err = v.Result()
		case *redis.StatusCmd:
			k.Value, err = v.Result()
		case *redis.IntCmd:
			var n int64
			n, err = v.Result()
			k.Value = fmt.Sprint(n)
		}
		switch {
		case err == redis.Nil:
			k.Gone = true
		case err != nil && (strings.HasPrefix(err.Error(), "WRONGTYPE") || strings.Contains(err.Error(), "not a valid HyperLogLog")):
			k.WrongType = true
		case err != nil:
			return err
		}
	}
	return nil
}
