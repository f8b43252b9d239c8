package scanner

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// Counting a sub-filter's bits (docs/bloom.md): one BITCOUNT reads at most bloomRangeBytes, which
// holds Redis well under a millisecond. A bitmap of at most bloomExactBytes is counted whole;
// a larger one is sampled, bloomSampleRanges ranges of bloomRangeBytes drawn at random each
// sweep, its fill the ranges' mean fill with a 95% interval.
const (
	bloomRangeBytes   = 64 << 10
	bloomExactBytes   = 1 << 20
	bloomSampleRanges = 16
)

// partCount is what was counted of one sub-filter: its bits set (set, within lo..hi when
// sampled) of bits, with hashes, and the bytes the count rests on (counted, or known to be zero
// as the bitmap's unallocated tail) of bytes.
type partCount struct {
	bits, bytes, covered int64
	hashes               int
	set, lo, hi          float64
}

// countPart counts the bits set in a sub-filter of bits bits whose bitmap holds strlen bytes,
// calling count(from, to) for each byte range read. The bytes past strlen are zeros (SETBIT has
// not reached them), known without a read. Up to bloomExactBytes allocated, every range is
// counted (exact); past it, a partial last range is counted whole and bloomSampleRanges of the
// full ranges are drawn without replacement: the set bits of the full ranges are estimated as
// their number times the ranges' mean, with a 95% interval from Student's t over the ranges and
// the finite-population correction, clipped to what the counted ranges and the ranges not
// counted allow.
func countPart(bits, strlen int64, hashes int, rng *rand.Rand, count func(from, to int64) (int64, error)) (partCount, error) {
	bytes := (bits + 7) / 8
	alloc := min(max(strlen, 0), bytes)
	pc := partCount{bits: bits, bytes: bytes, hashes: hashes, covered: bytes}
	if alloc <= bloomExactBytes {
		for from := int64(0); from < alloc; from += bloomRangeBytes {
			n, err := count(from, min(from+bloomRangeBytes, alloc)-1)
			if err != nil {
				return pc, err
			}
			pc.set += float64(n)
		}
		pc.lo, pc.hi = pc.set, pc.set
		return pc, nil
	}
	full := alloc / bloomRangeBytes
	rest := alloc - full*bloomRangeBytes
	var exact float64
	if rest > 0 {
		n, err := count(full*bloomRangeBytes, alloc-1)
		if err != nil {
			return pc, err
		}
		exact = float64(n)
	}
	pick := rng.Perm(int(full))[:min(bloomSampleRanges, int(full))]
	sets := make([]float64, len(pick))
	for i, r := range pick {
		from := int64(r) * bloomRangeBytes
		n, err := count(from, from+bloomRangeBytes-1)
		if err != nil {
			return pc, err
		}
		sets[i] = float64(n)
	}
	mid, half := sampledSum(sets, float64(full))
	counted := 0.0
	for _, s := range sets {
		counted += s
	}
	uncounted := float64(full-int64(len(sets))) * bloomRangeBytes * 8
	pc.set = exact + mid
	pc.lo = exact + max(mid-half, counted)
	pc.hi = exact + min(mid+half, counted+uncounted)
	pc.covered = bytes - (full-int64(len(sets)))*bloomRangeBytes
	return pc, nil
}

// sampledSum estimates the sum over n ranges from a simple random sample of their values drawn
// without replacement: n times the mean, and the half width of its 95% interval.
func sampledSum(sample []float64, n float64) (mid, half float64) {
	k := float64(len(sample))
	if k == 0 {
		return 0, 0
	}
	mean := 0.0
	for _, v := range sample {
		mean += v
	}
	mean /= k
	if k < 2 || k >= n {
		return n * mean, 0
	}
	ss := 0.0
	for _, v := range sample {
		ss += (v - mean) * (v - mean)
	}
	se := n * math.Sqrt(ss/(k-1)/k*(1-k/n))
	return n * mean, estimate.TQuantile975(k-1) * se
}

// bloomFigures fills f's Fill, Elements, FalsePositive and OverTarget from its sub-filters'
// counts. Each figure's ends are the formulas (monotone in each fill) at the sub-filters' ends:
// a filter with several sub-filters sums their ends for Elements and combines them for
// FalsePositive, as if every sub-filter were at its low end together (or its high end), so its
// interval is conservative: wider than 95% when more than one sub-filter is sampled.
func bloomFigures(f *snapshot.BloomFilter, parts []partCount) {
	var set, lo, hi, bits, bytes, covered float64
	vals, lows, highs := make([]float64, len(parts)), make([]float64, len(parts)), make([]float64, len(parts))
	hashes := make([]int, len(parts))
	var elems [3]float64
	full := -1
	for i, p := range parts {
		set, lo, hi, bits = set+p.set, lo+p.lo, hi+p.hi, bits+float64(p.bits)
		bytes, covered = bytes+float64(p.bytes), covered+float64(p.covered)
		m := float64(p.bits)
		vals[i], lows[i], highs[i], hashes[i] = p.set/m, p.lo/m, p.hi/m, p.hashes
		for j, fill := range []float64{vals[i], lows[i], highs[i]} {
			elems[j] += store.BloomElements(fill, p.bits, p.hashes)
		}
		if p.hi >= m && full < 0 {
			full = i
		}
	}
	if bits == 0 {
		return
	}
	coverage := covered / bytes
	f.Fill = &snapshot.BloomFigure{Value: set / bits, Low: lo / bits, High: hi / bits, Coverage: coverage}
	f.FalsePositive = &snapshot.BloomFigure{Value: store.BloomFalsePositive(vals, hashes), Low: store.BloomFalsePositive(lows, hashes),
		High: store.BloomFalsePositive(highs, hashes), Coverage: coverage}
	if full >= 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("sub-filter %d may have every bit set: the elements it holds cannot be told", full))
	} else {
		f.Elements = &snapshot.BloomFigure{Value: elems[0], Low: elems[1], High: elems[2], Coverage: coverage}
	}
	if f.TargetRate != nil {
		f.OverTarget = f.FalsePositive.Low > *f.TargetRate
	}
	if coverage < 1 {
		f.Notes = append(f.Notes, fmt.Sprintf("estimated from %.1f%% of its bits (%d-byte ranges drawn at random each sweep); the interval spans its sub-filters' ends together", 100*coverage, bloomRangeBytes))
	}
}
