package store

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// UniqueKind says how a unique family remembers members.
type UniqueKind int

const (
	// HyperLogLog counts distinct members of any kind in 12 KB a key, within about 0.81%.
	HyperLogLog UniqueKind = iota
	// Bitmap sets one bit per member, the member being a non-negative integer id (a user id): exact,
	// and an eighth of a byte per possible id.
	Bitmap
)

func (k UniqueKind) String() string {
	if k == Bitmap {
		return "bitmap"
	}
	return "hll"
}

// MaxBitmapID bounds a bitmap member: one id sets one bit, so the largest id sizes the key (2^29
// ids make a 64 MB key per window, which a union reads whole).
const MaxBitmapID = 1 << 29

// MaxUnionBytes bounds what a bitmap union reads into memory.
const MaxUnionBytes = 256 << 20

// Uniques counts distinct members per window (UV, DAU) of one family of keys: its pattern has a
// <window> and may have dims; each key gets its window-aligned expiry when written.
type Uniques struct {
	s    *Store
	Kind UniqueKind
	*Family
}

// NewUniques returns the uniques of kind over family f (whose windows and retention it uses).
func (s *Store) NewUniques(kind UniqueKind, f *Family) *Uniques {
	return &Uniques{s: s, Kind: kind, Family: f}
}

// Add records members for dims in the window of granularity g holding at (the server's now when
// zero): PFADD (or SETBIT for each integer member) and the key's expiry, in one pipeline.
func (u *Uniques) Add(ctx context.Context, g Granularity, dims []string, at time.Time, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	if at.IsZero() {
		at = u.s.serverNow(ctx)
	}
	w := WindowAt(g, at, u.Zone(u.s.loc))
	key, err := u.Key(w, dims)
	if err != nil {
		return fmt.Errorf("store: uniques %s: %w", u.Name(), err)
	}
	pipe := u.s.rdb.Pipeline()
	if u.Kind == Bitmap {
		for _, m := range members {
			off, err := strconv.ParseUint(m, 10, 64)
			if err != nil || off >= MaxBitmapID {
				return fmt.Errorf("store: uniques %s: bitmap member %q is not an id from 0 to %d", u.Name(), m, MaxBitmapID-1)
			}
			pipe.SetBit(ctx, key, int64(off), 1)
		}
	} else {
		vals := make([]any, len(members))
		for i, m := range members {
			vals[i] = m
		}
		pipe.PFAdd(ctx, key, vals...)
	}
	pipe.ExpireAt(ctx, key, u.ExpireAt(w))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("store: uniques %s: %w", u.Name(), err)
	}
	return nil
}

// Count returns the distinct members of dims in the window of granularity g holding at.
func (u *Uniques) Count(ctx context.Context, g Granularity, dims []string, at time.Time) (int64, error) {
	n, err := u.Union(ctx, g, dims, at, 1)
	return n, err
}

// Union returns the distinct members of dims over the n windows of granularity g ending with the
// one holding at. For HyperLogLog it is PFCOUNT over the keys. On a cluster those must share a hash
// slot, so put the dims in a hash tag. For bitmaps the keys are read and OR-ed here, so a read-only
// user can ask and nothing is written.
func (u *Uniques) Union(ctx context.Context, g Granularity, dims []string, at time.Time, n int) (int64, error) {
	if at.IsZero() {
		at = u.s.serverNow(ctx)
	}
	w := WindowAt(g, at, u.Zone(u.s.loc))
	var keys []string
	for range n {
		k, err := u.Key(w, dims)
		if err != nil {
			return 0, fmt.Errorf("store: uniques %s: %w", u.Name(), err)
		}
		keys = append(keys, k)
		w = w.Prev()
	}
	return UnionOf(ctx, u.s.rdb, u.Kind, keys)
}

// UnionOf counts the distinct members of keys of kind.
func UnionOf(ctx context.Context, rdb redis.Cmdable, kind UniqueKind, keys []string) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	if kind == HyperLogLog {
		n, err := rdb.PFCount(ctx, keys...).Result()
		if err != nil {
			return 0, fmt.Errorf("store: pfcount: %w", err)
		}
		return n, nil
	}
	if len(keys) == 1 {
		n, err := rdb.BitCount(ctx, keys[0], nil).Result()
		if err != nil {
			return 0, fmt.Errorf("store: bitcount: %w", err)
		}
		return n, nil
	}
	total, err := BitmapBytes(ctx, rdb, keys)
	if err != nil {
		return 0, err
	}
	if total > MaxUnionBytes {
		return 0, fmt.Errorf("store: bitmap union: %d MB of bitmaps is more than a union reads here (%d MB)", total>>20, MaxUnionBytes>>20)
	}
	pipe := rdb.Pipeline()
	gets := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		gets[i] = pipe.Get(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, fmt.Errorf("store: bitmap union: %w", err)
	}
	var union []byte
	for _, g := range gets {
		b, err := g.Bytes()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("store: bitmap union: %w", err)
		}
		if len(b) > len(union) {
			union = append(union, make([]byte, len(b)-len(union))...)
		}
		for i, c := range b {
			union[i] |= c
		}
	}
	var n int64
	for _, c := range union {
		n += int64(bits.OnesCount8(c))
	}
	return n, nil
}

// BitmapBytes is the size of the bitmaps at keys (STRLEN, in one pipeline): what a union of
// them reads. A key that is not there is 0.
func BitmapBytes(ctx context.Context, rdb redis.Cmdable, keys []string) (int64, error) {
	pipe := rdb.Pipeline()
	lens := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		lens[i] = pipe.StrLen(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("store: bitmap union: %w", err)
	}
	var total int64
	for _, l := range lens {
		total += l.Val() // each at most 512 MB: no sum of a union's keys comes near the int64 end
	}
	return total, nil
}
