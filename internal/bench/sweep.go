package bench

import (
	"fmt"
	"hourglass/scanner"
	"hourglass/store"
	"maps"
	"slices"
	"time"
)

// sweepFamily is the family of the sweep's keys.
func sweepFamily() *store.Family {
	fam, err := store.NewFamily(store.FamilySpec{Name: "sweep", Pattern: store.BenchKey("sw:<a>:<b>:<window>"),
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		panic(err) // the spec above is valid
	}
	return fam
}

// sweepCase fills n family keys, then measures sweeps and raw SCANs of them in turn, passes of
// each, and a last sweep whose every call is logged for its longest one.
func (b *bencher) sweepCase(rep *Report, n int) error {
	b.step("sweep: writing %s keys", commas(n))
	fam := sweepFamily()
	if err := b.fillSweep(n); err != nil {
		return err
	}
	var sweeps, raws, ratios, sweepUs, rawUs, sweepCPU []float64
	var sweepTime, rawTime *ServerTime
	for i := range b.passes {
		b.step("sweep and raw SCAN of %s keys in turn, pass %d of %d", commas(n), i+1, b.passes)
		mk := b.meter.start(b.ctx)
		raw, seen, err := b.rawScanPass(1000)
		if err != nil {
			return err
		}
		rt := b.meter.since(b.ctx, mk, float64(seen), "key", nil)
		mk = b.meter.start(b.ctx)
		sw, seen, err := b.sweepPass(fam)
		if err != nil {
			return err
		}
		st := b.meter.since(b.ctx, mk, float64(seen), "key", nil)
		sweeps, raws, ratios = append(sweeps, sw), append(raws, raw), append(ratios, sw/raw)
		if st != nil && rt != nil {
			sweepUs, rawUs = append(sweepUs, st.UsPer), append(rawUs, rt.UsPer)
			if st.CPUUsPer != nil {
				sweepCPU = append(sweepCPU, *st.CPUUsPer)
			}
		}
		sweepTime, rawTime = addTime(sweepTime, st), addTime(rawTime, rt)
	}
	if sweepTime != nil {
		b.server["sweep"], b.server["raw_scan"] = sweepTime, rawTime
	}
	sp := &rep.SweepSpread
	sp.Passes = b.passes
	sp.SweepMin, sp.SweepMedian, sp.SweepMax = spread(sweeps)
	sp.RawScanMin, sp.RawScanMedian, sp.RawScanMax = spread(raws)
	sp.RatioMin, sp.RatioMedian, sp.RatioMax = spread(ratios)
	rep.Sweep, rep.RawScan = sp.SweepMedian, sp.RawScanMedian
	if len(sweepUs) > 0 {
		sp.SweepUsMin, rep.SweepUs, sp.SweepUsMax = spreadOf(sweepUs)
		sp.RawScanUsMin, rep.RawScanUs, sp.RawScanUsMax = spreadOf(rawUs)
	}
	if len(sweepCPU) == b.passes {
		sp.SweepCPUMin, sp.SweepCPUMedian, sp.SweepCPUMax = spreadOf(sweepCPU)
	}
	return b.sweepLongest(rep, fam, n, sweepTime)
}

// sweepLongest runs one more sweep with SLOWLOG watching every call (on bench's own server; on
// a given one, with the server's own SLOWLOG settings), and files the longest. Where SLOWLOG
// cannot tell, the LATENCY HISTOGRAM bound of the measured passes stands in.
func (b *bencher) sweepLongest(rep *Report, fam *store.Family, n int, measured *ServerTime) error {
	b.step("sweep of %s keys with SLOWLOG logging its calls", commas(n))
	pass := func() error { _, _, err := b.sweepPass(fam); return err }
	var l Longest
	var err error
	if b.own {
		l, err = b.slowlogEvery(pass)
	} else {
		l, err = b.slowlogGiven(pass)
	}
	if err != nil {
		return err
	}
	rep.SweepLongestUs, rep.SweepLongestCommand, rep.SweepLongestFrom = l.Us, l.Command, l.From
	rep.SweepLongestExact = l.Us != nil
	rep.SweepCalls, rep.SweepCallsOver = l.Calls, l.Over
	if l.Us == nil && measured != nil && measured.LongestAtMost != nil {
		rep.SweepLongestUs = measured.LongestAtMost
		rep.SweepLongestFrom = fmt.Sprintf("at most, from LATENCY HISTOGRAM (a bucket from half of it to it); SLOWLOG: %s", l.From)
	}
	return nil
}

// fillSweep empties the keyspace and writes n keys of the sweep's family.
func (b *bencher) fillSweep(n int) error {
	if err := b.clean(); err != nil {
		return err
	}
	hour := time.Now().UTC().Format("2006010215")
	for start := 0; start < n; start += 10_000 {
		pipe := b.rdb.Pipeline()
		for i := start; i < min(start+10_000, n); i++ {
			pipe.Set(b.ctx, store.BenchKey(fmt.Sprintf("sw:a%d:b%d:%s", i%97, i, hour)), i, 48*time.Hour)
		}
		if _, err := pipe.Exec(b.ctx); err != nil {
			return err
		}
	}
	return nil
}

// sweepPass sweeps the whole server at COUNT 1000, reading every family key's TTL and value, and
// returns keys/s and the keys seen.
func (b *bencher) sweepPass(fam *store.Family) (float64, int, error) {
	start := time.Now()
	var seen int
	s := scanner.New(b.rdb, []*store.Family{fam}, scanner.Options{Count: 1000, Location: time.UTC})
	if err := s.Run(b.ctx, func(p scanner.Page) { seen += p.Seen }); err != nil {
		return 0, 0, err
	}
	return float64(seen) / time.Since(start).Seconds(), seen, nil
}

// rawScanPass SCANs the whole server at count and returns keys/s and the keys seen.
func (b *bencher) rawScanPass(count int64) (float64, int, error) {
	start := time.Now()
	var cursor uint64
	var keys int
	for {
		page, next, err := b.rdb.Scan(b.ctx, cursor, "", count).Result()
		if err != nil {
			return 0, 0, err
		}
		keys += len(page)
		if cursor = next; cursor == 0 {
			return float64(keys) / time.Since(start).Seconds(), keys, nil
		}
	}
}

// spread is the min, median and max of vs (zeros when empty).
func spread(vs []float64) (lo, mid, hi float64) {
	if len(vs) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(vs))
	mid = s[len(s)/2]
	if len(s)%2 == 0 {
		mid = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[0], mid, s[len(s)-1]
}

// spreadOf is spread as pointers, for figures that may be unknown.
func spreadOf(vs []float64) (lo, mid, hi *float64) {
	l, m, h := spread(vs)
	return &l, &m, &h
}

// addTime adds two measurements of the same case; nil when either is unknown.
func addTime(a, b *ServerTime) *ServerTime {
	if b == nil {
		return nil
	}
	if a == nil {
		c := *b
		c.ByCommand = maps.Clone(b.ByCommand)
		return &c
	}
	a.Usec += b.Usec
	a.Calls += b.Calls
	a.Units += b.Units
	if a.Units > 0 {
		a.UsPer = a.Usec / a.Units
	}
	if a.CPUUsPer != nil && b.CPUUsPer != nil { // weighed by units, as the time is
		v := (*a.CPUUsPer*(a.Units-b.Units) + *b.CPUUsPer*b.Units) / a.Units
		a.CPUUsPer = &v
	} else {
		a.CPUUsPer = nil
	}
	for k, v := range b.ByCommand {
		a.ByCommand[k] += v
	}
	if b.LongestAtMost != nil && (a.LongestAtMost == nil || *b.LongestAtMost > *a.LongestAtMost) {
		a.LongestAtMost = b.LongestAtMost
	}
	return a
}
