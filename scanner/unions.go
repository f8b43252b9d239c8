package scanner

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// bitmapBytesPerKey is what a bitmap weighs against the sweep's keys-per-second budget: one key
// for every 4 KiB it holds, beside the key itself. BITCOUNT reads the whole bitmap, and a union
// brings every bitmap it ORs over the network, so a 64 MiB bitmap weighs as much as 16,384 small
// keys.
const bitmapBytesPerKey = 4 << 10

// unionBudget is how much of the sweep's budget one union may take at once: a union of more
// bitmaps than the budget allows in this long is skipped, not read in a burst.
const unionBudget = time.Second

// bitmapCost is the keys a bitmap of n bytes weighs beyond its own.
func bitmapCost(n int64) int { return int(max(n, 0) / bitmapBytesPerKey) }

// unionBytes is what one bitmap union may read: a second of the budget, and never more than a
// union reads into memory.
func (p *Pacer) unionBytes() int64 {
	if p == nil || p.Rate() <= 0 {
		return store.MaxUnionBytes
	}
	return min(store.MaxUnionBytes, int64(p.Rate()*unionBudget.Seconds())*bitmapBytesPerKey)
}

// Why a union is skipped, as UnionSkip.Reason says it.
const (
	skipOverBudget = "a bitmap union may read what one second of the sweep's budget allows ([scan] keys_per_second, a key per 4 KiB of bitmap)"
	skipOverMemory = "a bitmap union reads its bitmaps into memory, 256 MiB at most"
)

// readUnions counts the distinct members of u's dims over the last 7 and 30 days up to today:
// each union read, skipped (a bitmap union over budget) or failed. What a union reads is charged
// to pace, so the sweep's next pages wait for it.
func readUnions(ctx context.Context, rdb redis.UniversalClient, u unionWant, pace *Pacer) unionRead {
	f := u.u.Family
	var r unionRead
	for _, days := range []int{7, 30} {
		var keys []string
		d := u.today
		for range days {
			if k, err := f.Key(d, u.dims); err == nil {
				keys = append(keys, k)
			}
			d = d.Prev()
		}
		n, skip, err := readUnion(ctx, rdb, u.u.Kind, keys, pace)
		if err != nil {
			r.err = err.Error()
		}
		if days == 7 {
			r.n7, r.skip7 = n, skip
		} else {
			r.n30, r.skip30 = n, skip
		}
	}
	return r
}

// readUnion counts the distinct members of keys, or says why it did not: skipped when a bitmap
// union would read more than its budget.
func readUnion(ctx context.Context, rdb redis.UniversalClient, kind store.UniqueKind, keys []string, pace *Pacer) (*int64, *snapshot.UnionSkip, error) {
	cost := len(keys)
	if kind == store.Bitmap {
		size, err := store.BitmapBytes(ctx, rdb, keys)
		pace.Spend(len(keys)) // the STRLENs
		if err != nil {
			return nil, nil, err
		}
		if budget := pace.unionBytes(); size > budget {
			why := skipOverBudget
			if budget == store.MaxUnionBytes {
				why = skipOverMemory
			}
			return nil, &snapshot.UnionSkip{Bytes: size, BudgetBytes: budget, Reason: why}, nil
		}
		cost += bitmapCost(size)
	}
	n, err := store.UnionOf(ctx, rdb, kind, keys)
	pace.Spend(cost)
	if err != nil {
		return nil, nil, err
	}
	return &n, nil, nil
}
