package store

// Reading a Bloom filter's health (docs/bloom.md): its metadata, the bits its sub-filters have
// set, and from them the elements it holds and its false-positive rate now.

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// BloomLayoutField is the metadata hash's field holding BloomLayout: the one field a reader that
// meets a hash reads to know it for one of our filters.
const BloomLayoutField = "layout"

// BloomMeta is one of our filters' metadata (bloom.go), as its hash holds it.
type BloomMeta struct {
	Key       string
	Capacity  int64   // the first sub-filter's
	ErrorRate float64 // the target
	Expansion int     // 0: it does not scale
	Added     int64   // adds that found the element absent
	Parts     []BloomPart
}

// BloomPart is one sub-filter.
type BloomPart struct {
	Key       string // its bitmap
	Bits      int64
	Hashes    int
	Capacity  int64
	ErrorRate float64
	Added     int64
}

// ReadBloomMeta reads the metadata of the filter at key (HGETALL of a hash of a few dozen
// fields).
func ReadBloomMeta(ctx context.Context, rdb redis.Cmdable, key string) (BloomMeta, error) {
	h, err := rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return BloomMeta{}, fmt.Errorf("store: bloom %s: HGETALL: %w", key, err)
	}
	return ParseBloomMeta(key, h)
}

// ParseBloomMeta reads a filter's metadata from its hash's fields; an error says what is not
// one of our filters' metadata.
func ParseBloomMeta(key string, h map[string]string) (BloomMeta, error) {
	if h[BloomLayoutField] != BloomLayout {
		return BloomMeta{}, fmt.Errorf("store: bloom %s: the hash's layout field is %q, not %q", key, h[BloomLayoutField], BloomLayout)
	}
	var bad []string
	num := func(field string, lo, hi float64) float64 {
		v, err := strconv.ParseFloat(h[field], 64)
		if err != nil || math.IsNaN(v) || v < lo || v > hi {
			bad = append(bad, field+"="+strconv.Quote(h[field]))
			return 0
		}
		return v
	}
	m := BloomMeta{Key: key, Capacity: int64(num("capacity", 1, 1e15)), ErrorRate: num("error_rate", 1e-12, 1),
		Expansion: int(num("expansion", 0, 16)), Added: int64(num("added", 0, 1e18))}
	n := int(num("filters", 1, BloomMaxFilters))
	for i := range n {
		p := "f" + strconv.Itoa(i) + ":"
		m.Parts = append(m.Parts, BloomPart{Key: BloomPartKey(key, i), Bits: int64(num(p+"bits", 1, BloomMaxBits)),
			Hashes: int(num(p+"hashes", 1, 64)), Capacity: int64(num(p+"capacity", 1, 1e18)),
			ErrorRate: num(p+"error_rate", 1e-15, 1), Added: int64(num(p+"added", 0, 1e18))})
	}
	if len(bad) > 0 {
		return BloomMeta{}, fmt.Errorf("store: bloom %s: metadata out of range: %v", key, bad)
	}
	return m, nil
}

// BloomBitsSet counts the bits set in bytes from..to (inclusive) of a sub-filter's bitmap: one
// BITCOUNT, which holds Redis for about a microsecond per 8 KB.
func BloomBitsSet(ctx context.Context, rdb redis.Cmdable, part string, from, to int64) (int64, error) {
	n, err := rdb.BitCount(ctx, part, &redis.BitCount{Start: from, End: to}).Result()
	if err != nil {
		return 0, fmt.Errorf("store: bloom %s: BITCOUNT: %w", part, err)
	}
	return n, nil
}

// BloomElements estimates the distinct elements a sub-filter of m bits and k hashes holds from
// the fraction of its bits set: n ≈ −(m/k)·ln(1 − fill) (Swamidass and Baldi, 2007). +Inf when
// every bit is set.
func BloomElements(fill float64, m int64, k int) float64 {
	if fill >= 1 {
		return math.Inf(1)
	}
	return -float64(m) / float64(k) * math.Log1p(-fill)
}

// BloomFalsePositive is the chance that an element never added reads as held, for sub-filters
// with these fills and hashes: 1 − Π(1 − fillᵢ^kᵢ).
func BloomFalsePositive(fills []float64, hashes []int) float64 {
	none := 1.0
	for i, f := range fills {
		none *= 1 - math.Pow(f, float64(hashes[i]))
	}
	return 1 - none
}
