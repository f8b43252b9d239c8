package scanner

import (
	"sync"
	"time"
)

// A sweep holds each call it makes to Redis under Options.MaxCall: Redis runs one command at a
// time, so a SCAN that walks many keys delays every other client's command behind it. SCAN's
// COUNT and the size of the reads' MGETs adapt, per master, to the measured time of each call.
//
// Redis does not say how long one call took (INFO commandstats sums every client's calls of a
// command, and costs more to read than a SCAN; SLOWLOG needs a setting changed and is the
// operator's), so the measure is the client's round trip of the call: the time from sending it
// to its reply. That holds Redis' own time of the call and more (the network, the wait for a core
// on either side), so it bounds that time from above: a COUNT whose round trip fits the target
// cannot hold Redis longer. To keep the bound close, Run takes turns on each master: its SCAN and
// its pipelines of reads never overlap, so nothing of the sweep's is queued at Redis ahead of a
// call being timed (master.turn). The bound is loose when the client's machine
// is busy: a round trip now and then takes several times Redis' time, when the client waited for
// a core. So the next COUNT is set by the least time a unit of COUNT took over the last few calls
// (recentCalls), which follows a keyspace that really got costlier within those calls, and is not
// thrown down by one late reply; a COUNT made too small costs round trips, not Redis time, since
// SCAN's cost a key hardly depends on COUNT.

// Bounds of the adaptation.
const (
	// DefaultMaxCall is Options.MaxCall when zero, and the [scan] max_call of the shipped config.
	DefaultMaxCall = time.Millisecond
	// minCount is the least COUNT a SCAN asks for (or the configured COUNT, when smaller): below
	// it a round trip costs more than the keys it brings.
	minCount = 10
	// callAim is the share of MaxCall a call aims at, so that a call a little costlier than the
	// one measured before it (a denser stretch of the keyspace) still fits.
	callAim = 0.8
	// countGrowth is how much COUNT grows at most from one call to the next: a round trip that
	// was short by chance should not set a COUNT the next call cannot keep to.
	countGrowth = 1.5
	// recentCalls is how many of the last calls the time a unit is taken over.
	recentCalls = 4
)

// CallStats are what a sweep's calls took, as the client measured them: round trips, each an
// upper bound of Redis' own time of the call.
type CallStats struct {
	Scans int64 // SCAN calls
	// CountSum, CountMin and CountMax are the COUNTs the SCANs asked for: their sum (over Scans,
	// the mean) and extremes.
	CountSum           int64
	CountMin, CountMax int
	LongestScan        time.Duration // the longest SCAN round trip
	Reads              int64         // pipelines of a page's reads
	LongestRead        time.Duration // the longest of those pipelines' round trips, whole
	// ChunkMin is the fewest keys an MGET of a page's reads was given (valueChunk when the
	// reads' time never made it smaller).
	ChunkMin int
}

// tuner adapts one master's SCAN COUNT and MGET size to the time of its calls.
type tuner struct {
	target time.Duration
	max    int // the COUNT of the first call, and the most any asks for
	least  int // the least COUNT any asks for

	mu    sync.Mutex
	count float64
	chunk int    // keys an MGET of the reads is given
	scans recent // SCAN's time a unit of COUNT, of the last calls
	reads recent // the reads' time a key, of the last pages
	stats CallStats
}

// recent are the last recentCalls times a unit (ns), in a ring.
type recent struct {
	v [recentCalls]float64
	n int
}

// add records v and returns the least of the recent ones.
func (r *recent) add(v float64) float64 {
	r.v[r.n%recentCalls] = v
	r.n++
	least := v
	for i := range min(r.n, recentCalls) {
		least = min(least, r.v[i])
	}
	return least
}

func newTuner(target time.Duration, count int) *tuner {
	count = max(count, 1)
	return &tuner{target: target, max: count, least: min(count, minCount), count: float64(count), chunk: valueChunk,
		stats: CallStats{ChunkMin: valueChunk}}
}

// scanCount is the COUNT of the next SCAN.
func (t *tuner) scanCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int(t.count)
}

// scanned records a SCAN of count that took took, and sets the next COUNT: what would take
// callAim of the target at the recent calls' least time a unit of COUNT, at once when smaller,
// and growing by at most countGrowth when larger.
func (t *tuner) scanned(count int, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.stats
	s.Scans++
	s.CountSum += int64(count)
	if s.CountMin == 0 || count < s.CountMin {
		s.CountMin = count
	}
	s.CountMax = max(s.CountMax, count)
	s.LongestScan = max(s.LongestScan, took)
	if took <= 0 || count <= 0 {
		return
	}
	fits := callAim * float64(t.target) / t.scans.add(float64(took)/float64(count))
	next := min(fits, float64(count)*countGrowth, float64(t.max))
	t.count = max(next, float64(t.least))
}

// readChunk is how many keys an MGET of the next page's reads is given.
func (t *tuner) readChunk() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.chunk
}

// read records a pipeline of a page's reads of keys keys that took took. Its round trip over
// its keys bounds an MGET's time a key from above (each key's time in the pipeline holds its
// share of the MGET and more: its PTTL), so an MGET of callAim×target over that fits the target;
// over the recent pages' least, as for SCAN.
func (t *tuner) read(keys int, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.Reads++
	t.stats.LongestRead = max(t.stats.LongestRead, took)
	if keys <= 0 || took <= 0 {
		return
	}
	fits := int(callAim * float64(t.target) / t.reads.add(float64(took)/float64(keys)))
	t.chunk = max(1, min(fits, t.chunk*2, valueChunk))
	t.stats.ChunkMin = min(t.stats.ChunkMin, t.chunk)
}

// tunerOf is master addr's tuner, made at the first call.
func (s *Sweep) tunerOf(addr string) *tuner {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tuners[addr]
	if !ok {
		t = newTuner(s.maxCall, s.count)
		s.tuners[addr] = t
	}
	return t
}

// Calls are what the sweep's calls took so far, over every master: counts summed, extremes
// over all.
func (s *Sweep) Calls() CallStats {
	s.mu.Lock()
	tuners := make([]*tuner, 0, len(s.tuners))
	for _, t := range s.tuners {
		tuners = append(tuners, t)
	}
	s.mu.Unlock()
	var all CallStats
	for _, t := range tuners {
		t.mu.Lock()
		c := t.stats
		t.mu.Unlock()
		all.Scans += c.Scans
		all.CountSum += c.CountSum
		if c.CountMin > 0 && (all.CountMin == 0 || c.CountMin < all.CountMin) {
			all.CountMin = c.CountMin
		}
		all.CountMax = max(all.CountMax, c.CountMax)
		all.LongestScan = max(all.LongestScan, c.LongestScan)
		all.Reads += c.Reads
		all.LongestRead = max(all.LongestRead, c.LongestRead)
		if all.ChunkMin == 0 || c.ChunkMin < all.ChunkMin {
			all.ChunkMin = c.ChunkMin
		}
	}
	return all
}
