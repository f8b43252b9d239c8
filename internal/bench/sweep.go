package bench

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
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
// each, every raw SCAN at the mean COUNT the sweep before it asked for (the sweep's COUNT adapts
// to [scan] max_call), and a last sweep and raw SCAN whose every call is logged for the longest.
func (b *bencher) sweepCase(rep *Report, n int) error {
	b.step("sweep: writing %s keys", commas(n))
	fam := sweepFamily()
	if err := b.fillSweep(n); err != nil {
		return err
	}
	var sweeps, raws, ratios, sweepUs, rawUs, usRatios, sweepCPU, counts []float64
	var sweepTime, rawTime *ServerTime
	var calls scanner.CallStats
	for i := range b.passes {
		b.step("sweep and raw SCAN of %s keys in turn, pass %d of %d", commas(n), i+1, b.passes)
		mk := b.meter.start(b.ctx)
		sw, seen, c, err := b.sweepPass(fam)
		if err != nil {
			return err
		}
		st := b.meter.since(b.ctx, mk, float64(seen), "key", nil)
		count := int64(1000) // a pass that made no SCAN (an empty keyspace) compares with the default COUNT
		if c.Scans > 0 {
			count = max(c.CountSum/c.Scans, 1)
		}
		mk = b.meter.start(b.ctx)
		raw, seen, err := b.rawScanPass(count)
		if err != nil {
			return err
		}
		rt := b.meter.since(b.ctx, mk, float64(seen), "key", nil)
		sweeps, raws, ratios = append(sweeps, sw), append(raws, raw), append(ratios, sw/raw)
		counts = append(counts, float64(count))
		calls = addCalls(calls, c)
		if st != nil && rt != nil {
			sweepUs, rawUs = append(sweepUs, st.UsPer), append(rawUs, rt.UsPer)
			if rt.UsPer > 0 {
				usRatios = append(usRatios, st.UsPer/rt.UsPer)
			}
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
	if len(usRatios) == b.passes {
		sp.UsRatioMin, sp.UsRatioMedian, sp.UsRatioMax = spreadOf(usRatios)
	}
	if len(sweepCPU) == b.passes {
		sp.SweepCPUMin, sp.SweepCPUMedian, sp.SweepCPUMax = spreadOf(sweepCPU)
	}
	fileCalls(rep, calls, counts, b.defaults.Scan.MaxCall)
	return b.sweepLongest(rep, fam, n, sweepTime, rawTime, int64(sp.countMedian()))
}

// addCalls adds one pass's calls to those of the passes before.
func addCalls(a, c scanner.CallStats) scanner.CallStats {
	a.Scans += c.Scans
	a.CountSum += c.CountSum
	if a.CountMin == 0 || (c.CountMin > 0 && c.CountMin < a.CountMin) {
		a.CountMin = c.CountMin
	}
	a.CountMax = max(a.CountMax, c.CountMax)
	a.LongestScan = max(a.LongestScan, c.LongestScan)
	a.Reads += c.Reads
	a.LongestRead = max(a.LongestRead, c.LongestRead)
	if a.ChunkMin == 0 || (c.ChunkMin > 0 && c.ChunkMin < a.ChunkMin) {
		a.ChunkMin = c.ChunkMin
	}
	return a
}

// fileCalls files what the sweep's passes asked of SCAN and how long their calls took the client.
func fileCalls(rep *Report, c scanner.CallStats, counts []float64, maxCall time.Duration) {
	sp := &rep.SweepSpread
	sp.MaxCallUs = float64(maxCall.Microseconds())
	sp.CountMin, sp.CountMax = c.CountMin, c.CountMax
	_, sp.CountMedian, _ = spread(counts)
	sp.ClientLongestScanUs = float64(c.LongestScan.Microseconds())
	sp.ClientLongestReadUs = float64(c.LongestRead.Microseconds())
	sp.ChunkMin = c.ChunkMin
}

// sweepLongest runs one more sweep, then one more raw SCAN at count, with SLOWLOG watching every
// call (on bench's own server; on a given one, with the server's own SLOWLOG settings), and files
// the longest of each. Where SLOWLOG cannot tell, the LATENCY HISTOGRAM bound of the measured
// passes stands in.
func (b *bencher) sweepLongest(rep *Report, fam *store.Family, n int, sweepTime, rawTime *ServerTime, count int64) error {
	s := &rep.ServerFigures
	for _, c := range []struct {
		what     string
		pass     func() error
		measured *ServerTime
		us       **float64
		exact    *bool
		from     *string
		cmd      *string
	}{
		{fmt.Sprintf("sweep of %s keys with SLOWLOG logging its calls", commas(n)),
			func() error { _, _, _, err := b.sweepPass(fam); return err },
			sweepTime, &s.SweepLongestUs, &s.SweepLongestExact, &s.SweepLongestFrom, &s.SweepLongestCommand},
		{fmt.Sprintf("raw SCAN of %s keys at COUNT %d with SLOWLOG logging its calls", commas(n), count),
			func() error { _, _, err := b.rawScanPass(count); return err },
			rawTime, &s.RawScanLongestUs, &s.RawScanLongestExact, &s.RawScanLongestFrom, nil},
	} {
		b.step("%s", c.what)
		var l Longest
		var err error
		if b.own {
			l, err = b.slowlogEvery(c.pass)
		} else {
			l, err = b.slowlogGiven(c.pass)
		}
		if err != nil {
			return err
		}
		*c.us, *c.from, *c.exact = l.Us, l.From, l.Us != nil
		if c.cmd != nil {
			*c.cmd = l.Command
			s.SweepCalls, s.SweepCallsOver = l.Calls, l.Over
		}
		if l.Us == nil && c.measured != nil && c.measured.LongestAtMost != nil {
			*c.us = c.measured.LongestAtMost
			*c.from = fmt.Sprintf("at most, from LATENCY HISTOGRAM (a bucket from half of it to it); SLOWLOG: %s", l.From)
		}
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

// sweepPass sweeps the whole server from COUNT 1000 at the built-in config's [scan] max_call,
// reading every family key's TTL and value, and returns keys/s, the keys seen and its calls.
func (b *bencher) sweepPass(fam *store.Family) (float64, int, scanner.CallStats, error) {
	start := time.Now()
	var seen int
	s := scanner.New(b.rdb, []*store.Family{fam}, scanner.Options{Count: 1000, MaxCall: b.defaults.Scan.MaxCall, Location: time.UTC})
	if err := s.Run(b.ctx, func(p scanner.Page) { seen += p.Seen }); err != nil {
		return 0, 0, scanner.CallStats{}, err
	}
	return float64(seen) / time.Since(start).Seconds(), seen, s.Calls(), nil
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
