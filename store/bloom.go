package store

// A scalable Bloom filter on plain Redis, with no module. It behaves like RedisBloom: BF.RESERVE's
// capacity and error rate, BF.ADD, BF.MADD, BF.EXISTS and BF.MEXISTS, and a new, larger sub-filter
// once the newest holds its capacity. The sub-filters are bitmaps, and each call is one script
// (bloom.lua) handed each element's two hashes. The hash scheme and the sizes are in docs/bloom.md,
// so another language can read and write the same filter.
//
//	<name>          hash: the filter's metadata, all a reader needs
//	  layout          "hourglass-bloom 1", how a sweep knows the filter
//	  capacity        the first sub-filter's capacity (elements at its error rate)
//	  error_rate      the target false-positive rate of the whole filter
//	  expansion       each new sub-filter's capacity over the last's (0: it does not scale)
//	  filters         the sub-filters so far
//	  added           elements added: adds that found the element absent
//	  f<i>:bits, f<i>:hashes, f<i>:capacity, f<i>:error_rate, f<i>:added   sub-filter i
//	{<name>}:<i>    string: sub-filter i's bitmap, in the hash slot of <name> (a name with a
//	                hash tag of its own: <name>:<i>)
//
// Sub-filter i holds capacity·expansion^i elements at error_rate/2^(i+1). So the filter's compound
// rate, the sum of its sub-filters', stays under error_rate as it grows. (Small sub-filters stray
// from their design rate by chance; docs/bloom.md.)

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

var bloomScript = luaScript("bloom")

// BloomLayout is the metadata's layout field, by which a reader knows one of our filters.
const BloomLayout = "hourglass-bloom 1"

// Bounds of a filter: the sub-filters it may have, one sub-filter's bits (a Redis string holds at
// most 512 MB), and the elements one script takes. An element costs Redis about 10 µs at 8 to 11
// hashes (docs/bloom.md), so a script holds Redis well under a millisecond.
const (
	BloomMaxFilters = 32
	BloomMaxBits    = 1 << 32
	BloomBatch      = 32
)

// ErrBloomFull is returned with the elements a filter could not add: it does not scale, or one
// more sub-filter would pass BloomMaxFilters or BloomMaxBits.
var ErrBloomFull = errors.New("the Bloom filter is full")

// BloomOptions size a filter when an add creates it (BF.RESERVE's arguments); an existing filter
// keeps the sizes in its metadata.
type BloomOptions struct {
	Capacity  int64   // the first sub-filter's elements at the error rate: 100 when 0
	ErrorRate float64 // the target false-positive rate, in (0, 0.5]: 0.01 when 0
	Expansion int     // each new sub-filter's capacity over the last's, 1..16; 0: 2; -1: never scales
}

func (o BloomOptions) withDefaults() (BloomOptions, error) {
	if o.Capacity == 0 {
		o.Capacity = 100
	}
	if o.ErrorRate == 0 {
		o.ErrorRate = 0.01
	}
	switch {
	case o.Expansion == 0:
		o.Expansion = 2
	case o.Expansion < 0:
		o.Expansion = 0
	}
	switch {
	case math.IsNaN(o.ErrorRate) || o.ErrorRate < 1e-9 || o.ErrorRate > 0.5:
		return o, fmt.Errorf("an error rate from 0.000000001 to 0.5, got %v", o.ErrorRate)
	case o.Capacity < 1:
		return o, fmt.Errorf("a capacity of at least 1, got %d", o.Capacity)
	case o.Expansion > 16:
		return o, fmt.Errorf("an expansion from 1 to 16, got %d", o.Expansion)
	}
	if bits, _ := BloomSize(o.Capacity, o.ErrorRate/2); bits > BloomMaxBits {
		return o, fmt.Errorf("a first sub-filter of at most %d bits (512 MB), got %d for %d elements at %v", int64(BloomMaxBits), bits, o.Capacity, o.ErrorRate/2)
	}
	return o, nil
}

// BloomSize is the bits and hashes of a sub-filter of capacity elements at error rate e:
// ⌈n·ln(1/e)/ln²2⌉ bits and ⌈log2(1/e)⌉ hashes (docs/bloom.md).
func BloomSize(capacity int64, e float64) (bits int64, hashes int) {
	return int64(math.Ceil(float64(capacity) * -math.Log(e) / (math.Ln2 * math.Ln2))), int(math.Ceil(-math.Log2(e)))
}

// BloomHashes are an element's h1 and h2: the first two 32-bit big-endian words of its SHA-1. A
// sub-filter of m bits and k hashes sets bits BloomBit(h1, h2, j, m), j = 0 .. k−1.
func BloomHashes(elem string) (h1, h2 uint32) {
	h := sha1.Sum([]byte(elem))
	return binary.BigEndian.Uint32(h[0:4]), binary.BigEndian.Uint32(h[4:8])
}

// BloomBit is the j-th bit of an element with hashes h1, h2 in a sub-filter of m bits: enhanced
// double hashing, (h1 + j·h2 + (j³ − j)/6) mod m (Dillinger and Manolios, 2004). Its cubic term
// keeps the k bits apart where plain double hashing folds them onto a few (h2 a multiple of a
// small sub-filter's m, or of a large factor of it).
func BloomBit(h1, h2 uint32, j, m int64) int64 {
	return (int64(h1) + j*int64(h2) + (j*j*j-j)/6) % m
}

// Bloom is a scalable Bloom filter at Key.
type Bloom struct {
	s    *Store
	Key  string
	opt  BloomOptions
	keys []string // the metadata and every sub-filter it may have, named for its scripts
}

// Bloom returns the filter at key, created with opt by the first add.
func (s *Store) Bloom(key string, opt BloomOptions) (*Bloom, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("store: bloom %s: %w", key, err)
	}
	b := &Bloom{s: s, Key: key, opt: o, keys: []string{key}}
	for i := range BloomMaxFilters {
		b.keys = append(b.keys, BloomPartKey(key, i))
	}
	return b, nil
}

// Add adds elem; false when the filter holds it already (or takes it for one it holds).
func (b *Bloom) Add(ctx context.Context, elem string) (bool, error) {
	r, err := b.AddMany(ctx, elem)
	if err != nil {
		return false, err
	}
	return r[0], nil
}

// AddMany adds elems, BloomBatch a script, each script atomic: each true when added, false when
// held already. Elements a full filter could not add are false, with ErrBloomFull.
func (b *Bloom) AddMany(ctx context.Context, elems ...string) ([]bool, error) {
	flags, err := b.run(ctx, "add", elems)
	if err != nil {
		return nil, err
	}
	out, full := make([]bool, len(flags)), 0
	for i, f := range flags {
		out[i] = f == 1
		if f < 0 {
			full++
		}
	}
	if full > 0 {
		return out, fmt.Errorf("store: bloom add %s: %d of %d elements not added: %w", b.Key, full, len(elems), ErrBloomFull)
	}
	return out, nil
}

// Exists tells whether the filter may hold elem: false means it was never added.
func (b *Bloom) Exists(ctx context.Context, elem string) (bool, error) {
	r, err := b.ExistsMany(ctx, elem)
	if err != nil {
		return false, err
	}
	return r[0], nil
}

// ExistsMany is Exists for elems, BloomBatch a script.
func (b *Bloom) ExistsMany(ctx context.Context, elems ...string) ([]bool, error) {
	flags, err := b.run(ctx, "exists", elems)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(flags))
	for i, f := range flags {
		out[i] = f == 1
	}
	return out, nil
}

// run calls the filter's script (bloom.lua) for op on elems, BloomBatch a call, with every key
// the filter may have (a call that scales it names its new sub-filter).
func (b *Bloom) run(ctx context.Context, op string, elems []string) ([]int64, error) {
	flags := make([]int64, 0, len(elems))
	for i := 0; i < len(elems); i += BloomBatch {
		batch := elems[i:min(i+BloomBatch, len(elems))]
		a := []any{op, b.opt.Capacity, b.opt.ErrorRate, b.opt.Expansion, BloomMaxFilters, int64(BloomMaxBits)}
		for _, e := range batch {
			h1, h2 := BloomHashes(e)
			a = append(a, h1, h2)
		}
		r, err := bloomScript.Run(ctx, b.s.rdb, b.keys, a...).Slice()
		if err != nil {
			return nil, fmt.Errorf("store: bloom %s %s: %w", op, b.Key, err)
		}
		if len(r) != len(batch) {
			return nil, fmt.Errorf("store: bloom %s %s: %d flags for %d elements (%v)", op, b.Key, len(r), len(batch), r)
		}
		for _, v := range r {
			f, ok := v.(int64)
			if !ok {
				return nil, fmt.Errorf("store: bloom %s %s: reply %v is not a flag", op, b.Key, v)
			}
			flags = append(flags, f)
		}
	}
	return flags, nil
}
