package bench

// The goals bench holds its figures to, each a ratio or a bound of Redis' own time.
const (
	goalFresh          = 0.6  // the writer's server µs/pair on fresh keys ÷ redis-benchmark's, at most
	goalSweepLongestUs = 2000 // the sweep's longest call, µs, at most
	// The goals against the floors: the writer's server µs/pair on keys there ÷ the INCRBY and
	// PEXPIREAT NX floor's, and the sweep's server µs a key ÷ the read floor's, at most.
	goalExpiryFloor = 1.3
	goalReadFloor   = 1.15
)

// ratio is a ÷ b, or nil when either is unknown or b is 0.
func ratio(a, b *float64) *float64 {
	if a == nil || b == nil || *b == 0 {
		return nil
	}
	r := *a / *b
	return &r
}

// atMost says whether v ≤ limit; nil when v is unknown.
func atMost(v *float64, limit float64) *bool {
	if v == nil {
		return nil
	}
	ok := *v <= limit
	return &ok
}

// settle computes the ratios and the goals from the figures measured.
func (r *Report) settle() {
	pairs := func(i int) *float64 {
		if i >= len(r.Writer) {
			return nil
		}
		return &r.Writer[i].PairsPerSec
	}
	r.SinglePairVsRedisBenchmark = ratio(pairs(0), r.RedisBenchmark)
	r.WriterVsRedisBenchmark = ratio(pairs(1), r.RedisBenchmark)
	r.SinglePairVsRedisBenchmark4 = ratio(pairs(2), r.RedisBenchmark4)
	r.WriterVsRedisBenchmark4 = ratio(pairs(3), r.RedisBenchmark4)
	r.BareClientVsRedisBenchmark = ratio(&r.BareClient, r.RedisBenchmark)
	r.BareClientVsRedisBenchmark4 = ratio(&r.BareClient4, r.RedisBenchmark4)
	if len(r.Writer) > 5 && r.Writer[5].ScriptsPerSec > 0 {
		r.ZipfEventsPerScript = r.Writer[5].EventsPerSec / r.Writer[5].ScriptsPerSec
	}
	if r.RawScan > 0 {
		r.SweepVsRawScan = r.Sweep / r.RawScan
	}
	us := func(i int) *float64 {
		if i >= len(r.Writer) {
			return nil
		}
		return r.Writer[i].ServerUsPerPair
	}
	s := &r.ServerFigures
	s.SinglePairC1, s.WriterFreshC1, s.SinglePairC4, s.WriterFreshC4 = us(0), us(1), us(2), us(3)
	s.WriterSteadyC1, s.WriterSteadyC4 = us(6), us(7)
	s.WriterFreshC1VsRB, s.WriterFreshC4VsRB = ratio(s.WriterFreshC1, s.RBFreshC1), ratio(s.WriterFreshC4, s.RBFreshC4)
	s.WriterSteadyC1VsRB, s.WriterSteadyC4VsRB = ratio(s.WriterSteadyC1, s.RBSteadyC1), ratio(s.WriterSteadyC4, s.RBSteadyC4)
	s.SinglePairC1VsRB, s.SinglePairC4VsRB = ratio(s.SinglePairC1, s.RBFreshC1), ratio(s.SinglePairC4, s.RBFreshC4)
	s.BareC1VsRB, s.BareC4VsRB = ratio(s.BareC1, s.RBFreshC1), ratio(s.BareC4, s.RBFreshC4)
	s.SweepUsVsRawScan = ratio(s.SweepUs, s.RawScanUs)
	r.settleFloors(s)
	if r.Discover != nil {
		r.Discover.ServerUsVsSweep = ratio(r.Discover.DiscoverServerUs, r.Discover.SweepServerUs)
	}

	g := &r.Goals
	f := &r.FloorFigures
	g.WriterFreshC1, g.WriterFreshC4 = atMost(s.WriterFreshC1VsRB, goalFresh), atMost(s.WriterFreshC4VsRB, goalFresh)
	g.WriterSteadyC1VsExpiryFloor = atMost(f.WriterSteadyC1VsExpiryFloor, goalExpiryFloor)
	g.WriterSteadyC4VsExpiryFloor = atMost(f.WriterSteadyC4VsExpiryFloor, goalExpiryFloor)
	g.SweepVsReadFloor = atMost(r.SweepVsReadFloor, goalReadFloor)
	g.SweepLongest = atMost(s.SweepLongestUs, goalSweepLongestUs)
	if l := s.SweepLongestUs; l != nil && !s.SweepLongestExact && *l > goalSweepLongestUs && *l/2 < goalSweepLongestUs {
		g.SweepLongest = nil // the bound's bucket straddles the goal
	}
}
