package store

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// addAll adds elems in calls of BloomBatch*3.
func addAll(t *testing.T, b *Bloom, elems []string) (added int) {
	t.Helper()
	for i := 0; i < len(elems); i += BloomBatch * 3 {
		r, err := b.AddMany(t.Context(), elems[i:min(i+BloomBatch*3, len(elems))]...)
		if err != nil {
			t.Fatal(err)
		}
		for _, ok := range r {
			if ok {
				added++
			}
		}
	}
	return added
}

// countHeld checks elems in calls of BloomBatch*3 and counts those the filter says it holds.
func countHeld(t *testing.T, b *Bloom, elems []string) (held int) {
	t.Helper()
	for i := 0; i < len(elems); i += BloomBatch * 3 {
		r, err := b.ExistsMany(t.Context(), elems[i:min(i+BloomBatch*3, len(elems))]...)
		if err != nil {
			t.Fatal(err)
		}
		for _, ok := range r {
			if ok {
				held++
			}
		}
	}
	return held
}

func elems(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

// TestBloomHoldsItsErrorRateAsItGrows: filled to 1x and then 4x its first capacity, a filter
// holds every element added, reads at most its target rate of 100,000 elements never added as
// held, and its count estimated from the bits set (BITCOUNT of each sub-filter) is within 5% of
// the distinct elements added; at 4x it has scaled to three sub-filters.
func TestBloomHoldsItsErrorRateAsItGrows(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	s := newStore(t, rdb, Options{})
	const capacity, target = 10_000, 0.01
	b, err := s.Bloom("bf:ids", BloomOptions{Capacity: capacity, ErrorRate: target})
	if err != nil {
		t.Fatal(err)
	}
	absent := elems("absent-", 100_000)
	for _, c := range []struct {
		times, parts int
	}{{1, 1}, {4, 3}} {
		in := elems("id-", c.times*capacity)
		addAll(t, b, in)
		if held := countHeld(t, b, in); held != len(in) {
			t.Fatalf("at %dx: %d of the %d elements added are held", c.times, held, len(in))
		}
		fp := float64(countHeld(t, b, absent)) / float64(len(absent))
		meta, err := ReadBloomMeta(ctx, rdb, b.Key)
		if err != nil || len(meta.Parts) != c.parts {
			t.Fatalf("at %dx: metadata %+v, %v", c.times, meta, err)
		}
		est, fills, hashes := 0.0, []float64{}, []int{}
		for _, p := range meta.Parts {
			set, err := BloomBitsSet(ctx, rdb, p.Key, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			fill := float64(set) / float64(p.Bits)
			est += BloomElements(fill, p.Bits, p.Hashes)
			fills, hashes = append(fills, fill), append(hashes, p.Hashes)
		}
		t.Logf("at %dx: false positives %.4f (%.4f from the fills), estimated %.0f of %d, added %d", c.times, fp,
			BloomFalsePositive(fills, hashes), est, len(in), meta.Added)
		if fp > target {
			t.Fatalf("at %dx: %.4f of the elements never added read as held, over the target %v", c.times, fp, target)
		}
		if math.Abs(est-float64(len(in))) > 0.05*float64(len(in)) {
			t.Fatalf("at %dx: estimated %.0f elements from the bits set, %d added", c.times, est, len(in))
		}
	}
}

// TestBloomBitsAreTheDocumentedOnes: the bits a filter sets are the ones docs/bloom.md says,
// computed here from SHA-1 apart from the script, so another language can read the filter.
func TestBloomBitsAreTheDocumentedOnes(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	s := newStore(t, rdb, Options{})
	b, err := s.Bloom("bf:doc", BloomOptions{Capacity: 50, ErrorRate: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	bits, hashes := BloomSize(50, 0.01)
	want := map[int64]bool{}
	for _, e := range elems("e", 30) {
		if _, err := b.Add(ctx, e); err != nil {
			t.Fatal(err)
		}
		h := sha1.Sum([]byte(e))
		h1, h2 := int64(binary.BigEndian.Uint32(h[0:4])), int64(binary.BigEndian.Uint32(h[4:8]))
		for j := range int64(hashes) {
			want[(h1+j*h2+(j*j*j-j)/6)%bits] = true
		}
	}
	for pos := range bits {
		if got := rdb.GetBit(ctx, BloomPartKey(b.Key, 0), pos).Val() == 1; got != want[pos] {
			t.Fatalf("bit %d of %d is %v, the documented scheme says %v", pos, bits, got, want[pos])
		}
	}
	meta, err := ReadBloomMeta(ctx, rdb, b.Key)
	if err != nil || meta.Parts[0].Bits != bits || meta.Parts[0].Hashes != hashes || meta.Added != 30 {
		t.Fatalf("metadata %+v, %v; want %d bits, %d hashes, 30 added", meta, err, bits, hashes)
	}
}

// TestBloomThatDoesNotScaleFillsUp: a filter that does not scale adds its capacity and refuses
// the rest with ErrBloomFull, as RedisBloom's NONSCALING filter does; what it holds still reads
// as held.
func TestBloomThatDoesNotScaleFillsUp(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	s := newStore(t, rdb, Options{})
	b, err := s.Bloom("bf:fixed", BloomOptions{Capacity: 100, Expansion: -1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.AddMany(t.Context(), elems("x", 150)...)
	added := 0
	for _, ok := range r {
		if ok {
			added++
		}
	}
	if !errors.Is(err, ErrBloomFull) || added != 100 {
		t.Fatalf("added %d, %v; want 100 and ErrBloomFull", added, err)
	}
	if held := countHeld(t, b, elems("x", 100)); held != 100 {
		t.Fatalf("%d of the 100 added are held", held)
	}
}

// TestBloomScalesSeveralTimesInOneCall: a call's elements into a filter of capacity 1 open three
// or more sub-filters in one script (of 1, 2, 4, 8, 16 and 32), as many as the adds it took
// need, and every element is held.
func TestBloomScalesSeveralTimesInOneCall(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	s := newStore(t, rdb, Options{})
	b, err := s.Bloom("bf:tiny", BloomOptions{Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := elems("t", BloomBatch)
	r, err := b.AddMany(t.Context(), in...)
	added := int64(0)
	for _, ok := range r {
		if ok {
			added++
		}
	}
	if err != nil || countHeld(t, b, in) != BloomBatch {
		t.Fatalf("added %d of %d: %v", added, BloomBatch, err)
	}
	want := 1 // sub-filters: one more each time the last is full
	for held, c := int64(1), int64(1); added > held; c *= 2 {
		held += c * 2
		want++
	}
	meta, err := ReadBloomMeta(t.Context(), rdb, b.Key)
	if err != nil || len(meta.Parts) != want || meta.Added != added || want < 4 {
		t.Fatalf("%d added: %d sub-filters, %v; want %d", added, len(meta.Parts), err, want)
	}
}

// TestBloomOnACluster: a filter's metadata and sub-filters are in one hash slot, named with or
// without a hash tag, so its scripts run on a Redis Cluster as it scales.
func TestBloomOnACluster(t *testing.T) {
	rdb := redistest.StartCluster(t, 3).Client(t)
	s := newStore(t, rdb, Options{})
	for _, name := range []string{"bf:users", "bf:{orders}"} {
		b, err := s.Bloom(name, BloomOptions{Capacity: 100})
		if err != nil {
			t.Fatal(err)
		}
		in := elems("u", 700)
		if addAll(t, b, in) < 690 || countHeld(t, b, in) != 700 {
			t.Fatalf("%s: not every element added is held", name)
		}
		meta, err := ReadBloomMeta(t.Context(), rdb, name)
		if err != nil || len(meta.Parts) != 3 {
			t.Fatalf("%s: %+v, %v", name, meta, err)
		}
		for _, p := range meta.Parts {
			if Slot(p.Key) != Slot(name) {
				t.Fatalf("%s: sub-filter %s is in slot %d, the filter in %d", name, p.Key, Slot(p.Key), Slot(name))
			}
		}
	}
}

func TestBloomPartKeys(t *testing.T) {
	for _, c := range []struct{ name, part string }{
		{"bf:users", "{bf:users}:0"},
		{"bf:{orders}", "bf:{orders}:0"},
		{"{x}", "{x}:0"}, // read back as a part of "x": the two share their keys
		{"a{b", "{a{b}:0"},
	} {
		if got := BloomPartKey(c.name, 0); got != c.part {
			t.Errorf("BloomPartKey(%q) = %q, want %q", c.name, got, c.part)
		}
		if Slot(c.part) != Slot(c.name) {
			t.Errorf("%q and its part %q are in different slots", c.name, c.part)
		}
		f, i, ok := BloomPartOf(BloomPartKey(c.name, 7))
		want := c.name
		if c.name == "{x}" {
			want = "x"
		}
		if !ok || f != want || i != 7 {
			t.Errorf("BloomPartOf(%q) = %q, %d, %v", BloomPartKey(c.name, 7), f, i, ok)
		}
	}
	for _, k := range []string{"bf:users", "bf:users:0", "{a}:01", "{a}:x", "{a}:99", ":0"} {
		if f, i, ok := BloomPartOf(k); ok {
			t.Errorf("BloomPartOf(%q) = %q, %d: not a sub-filter's key", k, f, i)
		}
	}
}

// TestBloomOnTheEmbeddedRedis: on miniredis (the console's embedded Redis, which has no
// BITFIELD) a filter sets the same bits, bit by bit, as on a real redis-server, and answers the
// same.
func TestBloomOnTheEmbeddedRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	mini := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	real := redistest.Start(t).Client(t)
	in, probe := elems("m", 300), elems("probe", 2000)
	var held [2]int
	for i, rdb := range []*redis.Client{mini, real} {
		b, err := newStore(t, rdb, Options{}).Bloom("bf:mini", BloomOptions{Capacity: 100})
		if err != nil {
			t.Fatal(err)
		}
		addAll(t, b, in)
		held[i] = countHeld(t, b, probe)
		if countHeld(t, b, in) != len(in) {
			t.Fatalf("client %d: not every element added is held", i)
		}
	}
	for i := range 2 { // of 100 and 200
		part := BloomPartKey("bf:mini", i)
		if a, b := mini.Get(t.Context(), part).Val(), real.Get(t.Context(), part).Val(); a != b || a == "" {
			t.Fatalf("sub-filter %d: %d bytes on miniredis, %d on redis-server, not the same bits", i, len(a), len(b))
		}
	}
	if held[0] != held[1] {
		t.Fatalf("%d of the elements never added read as held on miniredis, %d on redis-server", held[0], held[1])
	}
}

// TestBloomLeavesAnotherProgramsKey: a Bloom filter named as a key another program keeps (a
// hash without the metadata's layout, a string) writes nothing there and says why, naming the
// key, for an add as for a check.
func TestBloomLeavesAnotherProgramsKey(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	s := newStore(t, rdb, Options{})
	rdb.HSet(ctx, "app:user:7", "name", "ann")
	rdb.Set(ctx, "app:flag", "on", 0)
	for _, c := range []struct{ key, why string }{{"app:user:7", "holds no Bloom filter metadata"}, {"app:flag", "WRONGTYPE"}} {
		b, err := s.Bloom(c.key, BloomOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Add(ctx, "x"); err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), c.key) {
			t.Errorf("add to %s: %v, want an error naming it and %q", c.key, err, c.why)
		}
		if _, err := b.Exists(ctx, "x"); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("check of %s: %v, want %q", c.key, err, c.why)
		}
	}
	if h := rdb.HGetAll(ctx, "app:user:7").Val(); len(h) != 1 || h["name"] != "ann" || rdb.Exists(ctx, BloomPartKey("app:user:7", 0)).Val() != 0 {
		t.Errorf("the hash became %v, or a bitmap was written beside it", h)
	}
}
