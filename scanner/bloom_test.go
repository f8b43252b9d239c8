package scanner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// seedBlooms makes the byte ranges a sweep samples the same on every run, so that a test's
// figures are a function of the filters written.
func seedBlooms(t *testing.T) {
	old := bloomRand
	bloomRand = func() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }
	t.Cleanup(func() { bloomRand = old })
}

func bloomSpec(t *testing.T, name, pattern string) BloomSpec {
	t.Helper()
	p, err := store.ParseKeyPattern(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return BloomSpec{Name: name, Pattern: p}
}

// addBloom adds n elements named prefix0, prefix1, ... to a filter written by the store.
func addBloom(t *testing.T, st *store.Store, key string, opt store.BloomOptions, prefix string, n int) *store.Bloom {
	t.Helper()
	b, err := st.Bloom(key, opt)
	if err != nil {
		t.Fatal(err)
	}
	elems := make([]string, n)
	for i := range elems {
		elems[i] = fmt.Sprint(prefix, i)
	}
	if _, err := b.AddMany(t.Context(), elems...); err != nil {
		t.Fatal(err)
	}
	return b
}

// trueFill is the share of a filter's bits set, counted whole by the test: BITCOUNT of each
// sub-filter over the bits its metadata gives.
func trueFill(t *testing.T, rdb redis.UniversalClient, key string) (fill float64, fills []float64, hashes []int) {
	t.Helper()
	meta, err := store.ReadBloomMeta(t.Context(), rdb, key)
	if err != nil {
		t.Fatal(err)
	}
	var set, bits float64
	for _, p := range meta.Parts {
		n := rdb.BitCount(t.Context(), p.Key, nil).Val()
		set, bits = set+float64(n), bits+float64(p.Bits)
		fills, hashes = append(fills, float64(n)/float64(p.Bits)), append(hashes, p.Hashes)
	}
	return set / bits, fills, hashes
}

// measuredFP checks n elements never added and returns the share the filter takes for held.
func measuredFP(t *testing.T, b *store.Bloom, n int) float64 {
	t.Helper()
	elems := make([]string, n)
	for i := range elems {
		elems[i] = fmt.Sprint("never-", i)
	}
	got, err := b.ExistsMany(t.Context(), elems...)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, ok := range got {
		if ok {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

func filterOf(t *testing.T, b snapshot.Bloom, key string) snapshot.BloomFilter {
	t.Helper()
	for _, f := range b.Filters {
		if f.Raw == key {
			return f
		}
	}
	t.Fatalf("no filter %s in %+v", key, b)
	return snapshot.BloomFilter{}
}

// TestSnapshotOfBlooms writes filters through store.Bloom (a small one counted whole, a scaling
// one with several sub-filters, one past 1 MB that is sampled, one whose bitmap was deleted),
// keys of the pattern that are no filter, and checks every figure against the test's own
// count of their bits, the elements added and the false positives measured.
func TestSnapshotOfBlooms(t *testing.T) {
	seedBlooms(t)
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	st := store.New(rdb, store.Options{})
	small := addBloom(t, st, "bf:small", store.BloomOptions{Capacity: 1000, ErrorRate: 0.01}, "s", 800)
	addBloom(t, st, "bf:scaled", store.BloomOptions{Capacity: 100, ErrorRate: 0.01}, "x", 700)
	addBloom(t, st, "bf:big", store.BloomOptions{Capacity: 1_000_000, ErrorRate: 0.01}, "b", 50_000)
	addBloom(t, st, "bf:gone", store.BloomOptions{Capacity: 100, ErrorRate: 0.01}, "g", 10)
	rdb.Del(ctx, store.BloomPartKey("bf:gone", 0))
	rdb.PExpire(ctx, "bf:small", time.Hour)
	addBloom(t, st, "{tagged}:bf:t", store.BloomOptions{Capacity: 100, ErrorRate: 0.05}, "t", 50)
	rdb.Set(ctx, "bf:string", "x", 0)
	rdb.HSet(ctx, "bf:hash", "field", 1)

	structs := Structures{Blooms: []BloomSpec{bloomSpec(t, "seen", "bf:<name>"), bloomSpec(t, "tagged", "{tagged}:bf:<name>")}}
	snap, err := Take(ctx, rdb, nil, Options{Structures: structs})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Blooms) != 2 {
		t.Fatalf("bloom sections: %+v", snap.Blooms)
	}
	seen := snap.Blooms[0]
	if len(seen.Filters) != 4 || seen.More {
		t.Fatalf("filters of bf:<name>: %+v", seen.Filters)
	}
	// Every part key is claimed with its filter, though bf:<name> does not match {bf:small}:0.
	if snap.Unclaimed.Keys != 0 || snap.Scan.KeysMatched != rdb.DBSize(ctx).Val() {
		t.Errorf("%d keys unclaimed (%+v), %d matched of %d", snap.Unclaimed.Keys, snap.Unclaimed.Groups, snap.Scan.KeysMatched, rdb.DBSize(ctx).Val())
	}
	// The string and the hash without metadata are counted, each under why.
	if len(seen.Unreadable) != 2 {
		t.Errorf("unreadable %v, want the string and the hash", seen.Unreadable)
	}
	for why := range seen.Unreadable {
		if !strings.Contains(why, "string") && !strings.Contains(why, "bf:hash") {
			t.Errorf("unreadable reason %q names neither the type nor the key", why)
		}
	}

	checkExactBloom(t, rdb, filterOf(t, seen, "bf:small"), "bf:small", 800, measuredFP(t, small, 20_000))
	checkExactBloom(t, rdb, filterOf(t, seen, "bf:scaled"), "bf:scaled", 700, -1)
	checkSampledBloom(t, rdb, filterOf(t, seen, "bf:big"), "bf:big", 50_000)
	checkExactBloom(t, rdb, filterOf(t, snap.Blooms[1], "{tagged}:bf:t"), "{tagged}:bf:t", 50, -1)

	if f := filterOf(t, seen, "bf:small"); f.TTLMS <= 0 || f.TTLMS > 3_600_000 {
		t.Errorf("bf:small's TTL %d ms, want its PEXPIRE's", f.TTLMS)
	}
	if f := filterOf(t, seen, "bf:scaled"); f.TTLMS != -1 || f.SubFilters == nil || *f.SubFilters < 3 || f.Expansion == nil || *f.Expansion != 2 {
		t.Errorf("bf:scaled: TTL %d, %v sub-filters, expansion %v; want none, 3 or more, 2", f.TTLMS, f.SubFilters, f.Expansion)
	}
	gone := filterOf(t, seen, "bf:gone")
	if gone.Fill == nil || gone.Fill.Value != 0 || gone.FalsePositive.Value != 0 || !strings.Contains(strings.Join(gone.Notes, "\n"), "absent") {
		t.Errorf("a filter whose bitmap is gone: %+v, want no bit set and a note", gone)
	}
}

// checkExactBloom checks a filter counted whole: its fill is the test's own BITCOUNT, its
// elements near those added, its false-positive rate the formula at that fill and near the rate
// measured (fp < 0: not measured), its memory MEMORY USAGE of its keys.
func checkExactBloom(t *testing.T, rdb redis.UniversalClient, f snapshot.BloomFilter, key string, added int, fp float64) {
	t.Helper()
	fill, fills, hashes := trueFill(t, rdb, key)
	meta, _ := store.ReadBloomMeta(t.Context(), rdb, key)
	if f.Layout != "hourglass" || f.Fill == nil || f.Elements == nil || f.FalsePositive == nil || f.TargetRate == nil || f.Added == nil || f.MemoryBytes == nil {
		t.Fatalf("%s: a figure unknown: %+v", key, f)
	}
	if !f.Fill.Exact() || !f.FalsePositive.Exact() || !f.Elements.Exact() || math.Abs(f.Fill.Value-fill) > 1e-12 {
		t.Errorf("%s: fill %+v, want exactly %v", key, *f.Fill, fill)
	}
	if want := store.BloomFalsePositive(fills, hashes); math.Abs(f.FalsePositive.Value-want) > 1e-12 {
		t.Errorf("%s: false-positive rate %v, want %v", key, f.FalsePositive.Value, want)
	}
	if fp >= 0 && math.Abs(f.FalsePositive.Value-fp) > 4*math.Sqrt(fp*(1-fp)/20_000)+0.001 {
		t.Errorf("%s: false-positive rate %v, measured %v", key, f.FalsePositive.Value, fp)
	}
	if e := f.Elements.Value; math.Abs(e-float64(added)) > 0.08*float64(added) {
		t.Errorf("%s: %v elements estimated, %d added", key, e, added)
	}
	if *f.Added != meta.Added || *f.TargetRate != meta.ErrorRate || f.Capacity == nil || *f.Capacity != meta.Capacity || f.SubFilters == nil || *f.SubFilters != len(meta.Parts) {
		t.Errorf("%s: metadata %+v, filter %+v", key, meta, f)
	}
	// A filter of small sub-filters strays from its design rate by chance (bf:scaled's three, of
	// 100 to 400 elements, read about 1.03% at a target of 1%): the flag says what the fill says.
	if f.OverTarget != (f.FalsePositive.Value > *f.TargetRate) {
		t.Errorf("%s: over target %v at %v (target %v)", key, f.OverTarget, f.FalsePositive.Value, *f.TargetRate)
	}
	mem := rdb.MemoryUsage(t.Context(), key).Val()
	for _, p := range meta.Parts {
		mem += rdb.MemoryUsage(t.Context(), p.Key).Val()
	}
	if *f.MemoryBytes != mem {
		t.Errorf("%s: memory %d, MEMORY USAGE of its keys %d", key, *f.MemoryBytes, mem)
	}
}

// checkSampledBloom checks a filter past 1 MB: its coverage is the ranges counted (16 of 64 KB,
// and the last, partial one), and its intervals hold the test's whole count and the elements
// added.
func checkSampledBloom(t *testing.T, rdb redis.UniversalClient, f snapshot.BloomFilter, key string, added int) {
	t.Helper()
	fill, fills, hashes := trueFill(t, rdb, key)
	meta, _ := store.ReadBloomMeta(t.Context(), rdb, key)
	if len(meta.Parts) != 1 || f.Fill == nil || f.Elements == nil || f.FalsePositive == nil {
		t.Fatalf("%s: %+v (metadata %+v)", key, f, meta)
	}
	bytes := (meta.Parts[0].Bits + 7) / 8
	strlen := rdb.StrLen(t.Context(), meta.Parts[0].Key).Val()
	full := strlen / bloomRangeBytes
	if strlen <= bloomExactBytes || full <= bloomSampleRanges {
		t.Fatalf("%s: its bitmap holds %d bytes, too few to be sampled", key, strlen)
	}
	cov := float64(bytes-(full-bloomSampleRanges)*bloomRangeBytes) / float64(bytes)
	if f.Fill.Exact() || math.Abs(f.Fill.Coverage-cov) > 1e-12 || f.Elements.Coverage != f.Fill.Coverage {
		t.Errorf("%s: coverage %v, want %v", key, f.Fill.Coverage, cov)
	}
	if f.Fill.Low > fill || f.Fill.High < fill || f.Fill.High-f.Fill.Low > 0.1*fill {
		t.Errorf("%s: fill %+v, counted whole %v", key, *f.Fill, fill)
	}
	if e := f.Elements; e.Low > float64(added)*1.02 || e.High < float64(added)*0.98 || e.Low > e.Value || e.Value > e.High {
		t.Errorf("%s: elements %+v, %d added", key, *e, added)
	}
	fp := store.BloomFalsePositive(fills, hashes)
	if p := f.FalsePositive; p.Low > fp || p.High < fp {
		t.Errorf("%s: false-positive rate %+v, from the whole count %v", key, *p, fp)
	}
	if !strings.Contains(strings.Join(f.Notes, "\n"), "estimated from") {
		t.Errorf("%s: notes %q do not say it was sampled", key, f.Notes)
	}
}

// TestBloomReadsChargeTheBudget reads a sampled filter and checks what it charged the sweep's
// budget: a key for its metadata, one per key of its sizes' pipeline, and for each BITCOUNT a
// key per 4 KiB it read (at least one).
func TestBloomReadsChargeTheBudget(t *testing.T) {
	seedBlooms(t)
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	st := store.New(rdb, store.Options{})
	addBloom(t, st, "bf:big", store.BloomOptions{Capacity: 1_000_000, ErrorRate: 0.01}, "b", 20_000)
	s := New(rdb, nil, Options{KeysPerSecond: 10_000_000})
	before := s.pace.spent
	r := s.readBlooms(t.Context(), []bloomWant{{spec: 0, filters: []bloomFound{{key: "bf:big", typ: "hash"}}}})
	if len(r[0].filters) != 1 {
		t.Fatalf("read %+v", r[0])
	}
	strlen := rdb.StrLen(t.Context(), store.BloomPartKey("bf:big", 0)).Val()
	rest := strlen % bloomRangeBytes
	want := int64(1 + 3 + bloomSampleRanges*bitmapCost(bloomRangeBytes))
	if rest > 0 {
		want += int64(max(bitmapCost(rest), 1))
	}
	if got := s.pace.spent - before; got != want {
		t.Errorf("charged %d keys to the budget, want %d", got, want)
	}
}

// TestBloomsOnACluster reads filters spread over a 3-master cluster: each is read on its
// master, its sub-filters beside it in its slot, and none of their keys is left unclaimed.
func TestBloomsOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	st := store.New(rdb, store.Options{})
	var keys []string
	for i := range 6 {
		key := fmt.Sprint("bf:user", i)
		addBloom(t, st, key, store.BloomOptions{Capacity: 50, ErrorRate: 0.01}, key, 120) // 2 sub-filters or more
		keys = append(keys, key)
	}
	snap, err := Take(t.Context(), rdb, nil, Options{Structures: Structures{Blooms: []BloomSpec{bloomSpec(t, "users", "bf:<name>")}}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Unclaimed.Keys != 0 || len(snap.Blooms) != 1 || len(snap.Blooms[0].Filters) != len(keys) || len(snap.Blooms[0].Unreadable) != 0 {
		t.Fatalf("unclaimed %d, blooms %+v", snap.Unclaimed.Keys, snap.Blooms)
	}
	for _, key := range keys {
		checkExactBloom(t, rdb, filterOf(t, snap.Blooms[0], key), key, 120, -1)
	}
}

// TestBloomFiguresOverTarget checks the figures of counts given: a filter whose rate now is past
// its target is over it, one whose interval still reaches below the target is not, and one
// with a sub-filter that may be full has no elements estimate, and says why.
func TestBloomFiguresOverTarget(t *testing.T) {
	target := 0.01
	part := func(set, lo, hi float64) partCount {
		return partCount{bits: 1000, bytes: 125, covered: 125, hashes: 7, set: set, lo: lo, hi: hi}
	}
	f := snapshot.BloomFilter{TargetRate: &target}
	bloomFigures(&f, []partCount{part(600, 600, 600)}) // 0.6^7 ≈ 0.028
	if !f.OverTarget || f.FalsePositive.Value < 0.027 || f.FalsePositive.Value > 0.029 {
		t.Errorf("at fill 0.6: %+v, over target %v", *f.FalsePositive, f.OverTarget)
	}
	f = snapshot.BloomFilter{TargetRate: &target}
	bloomFigures(&f, []partCount{part(600, 400, 700)}) // its low end 0.4^7 is under 0.01
	if f.OverTarget {
		t.Errorf("over target with %+v", *f.FalsePositive)
	}
	f = snapshot.BloomFilter{TargetRate: &target}
	bloomFigures(&f, []partCount{part(995, 990, 1000)})
	if f.Elements != nil || !strings.Contains(strings.Join(f.Notes, "\n"), "every bit") || !f.OverTarget {
		t.Errorf("a sub-filter maybe full: elements %v, notes %q", f.Elements, f.Notes)
	}
}

// TestCountPart counts a synthetic bitmap through countPart: whole up to 1 MB, in ranges of at
// most 64 KB; past it, 16 ranges and the partial last, an interval that holds the truth, and
// no read of the unallocated tail.
func TestCountPart(t *testing.T) {
	perRange := func(from int64) int64 { return 200_000 + (from/bloomRangeBytes)%5*1000 } // set bits in a range
	var reads [][2]int64
	count := func(from, to int64) (int64, error) {
		reads = append(reads, [2]int64{from, to})
		if to-from+1 > bloomRangeBytes {
			t.Fatalf("a BITCOUNT of bytes %d..%d: more than 64 KB", from, to)
		}
		return perRange(from) * (to - from + 1) / bloomRangeBytes, nil
	}
	pc, err := countPart(8*bloomExactBytes, bloomExactBytes/2, 7, rand.New(rand.NewPCG(1, 2)), count)
	if err != nil || pc.covered != pc.bytes || pc.lo != pc.set || pc.hi != pc.set || len(reads) != 8 || reads[7][1] != bloomExactBytes/2-1 {
		t.Fatalf("a half-allocated 1 MB bitmap: %+v, reads %v", pc, reads)
	}
	reads = nil
	const ranges = 40
	strlen := int64(ranges*bloomRangeBytes + 1000)
	pc, err = countPart(8*(strlen+5000), strlen, 7, rand.New(rand.NewPCG(1, 2)), count)
	if err != nil {
		t.Fatal(err)
	}
	var truth float64
	for r := range int64(ranges) {
		truth += float64(perRange(r * bloomRangeBytes))
	}
	truth += float64(perRange(ranges*bloomRangeBytes) * 1000 / bloomRangeBytes)
	if len(reads) != bloomSampleRanges+1 || pc.lo > truth || pc.hi < truth || pc.covered != 5000+1000+bloomSampleRanges*bloomRangeBytes {
		t.Errorf("a 2.6 MB bitmap: %+v (truth %v), %d reads", pc, truth, len(reads))
	}
	for _, r := range reads {
		if r[1] >= strlen {
			t.Errorf("read bytes %d..%d past its %d allocated", r[0], r[1], strlen)
		}
	}
}

// TestBloomKeyGoneSinceScan: a key of the pattern deleted between SCAN and its page's TYPE
// (which answers none) is neither a filter nor unreadable.
func TestBloomKeyGoneSinceScan(t *testing.T) {
	var b bloomAgg
	b.add(&Key{Name: "bf:gone", kind: kindBloom, Value: "none"})
	b.add(&Key{Name: "bf:str", kind: kindBloom, Value: "string"})
	b.add(&Key{Name: "bf:str", kind: kindBloom, Value: "string"})
	b.add(&Key{Name: "bf:a", kind: kindBloom, Value: bloomHash})
	if len(b.filters) != 1 || len(b.unreadable) != 1 || b.unreadable["a string, not a filter's metadata hash or RedisBloom's MBbloom--"] != 1 {
		t.Errorf("filters %+v, unreadable %v", b.filters, b.unreadable)
	}
}
