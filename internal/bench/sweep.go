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

// sweepCase fills n family keys, then measures sweeps, raw SCANs and read floors of them in turn,
// passes of each, every raw SCAN and read floor at the mean COUNT the sweep before it asked for
// (the sweep's COUNT adapts to [scan] max_call), and a last sweep and raw SCAN whose every call
// is logged for the longest.
func (b *bencher) sweepCase(rep *Report, n int) error {
	b.step("sweep: writing %s keys", commas(n))
	fam := sweepFamily()
	if err := b.fillSweep(n); err != nil {
		return err
	}
	var p sweepPasses
	for i := range b.passes {
		b.step("sweep, raw SCAN and read floor of %s keys in turn, pass %d of %d", commas(n), i+1, b.passes)
		if err := b.sweepRound(fam, &p); err != nil {
			return err
		}
	}
	if p.sweepTime != nil {
		b.server["sweep"], b.server["raw_scan"], b.server["read_floor"] = p.sweepTime, p.rawTime, p.floorTime
	}
	p.file(rep, b.passes)
	fileCalls(rep, p.calls, p.counts, b.defaults.Scan.MaxCall)
	return b.sweepLongest(rep, fam, n, p.sweepTime, p.rawTime, int64(rep.SweepSpread.countMedian()))
}

// sweepPasses gathers the figures of the sweep's passes, and of the raw SCAN's and the read floor's
// beside them.
type sweepPasses struct {
	sweeps, raws, ratios, counts       []float64 // keys/s, and the COUNT each sweep asked for
	sweepUs, rawUs, usRatios, sweepCPU []float64 // server µs a key, and Redis' CPU a key
	floorUs, floorRatios               []float64
	sweepTime, rawTime, floorTime      *ServerTime // all passes together
	calls                              scanner.CallStats
}

// sweepRound measures one pass of each in turn: a sweep, then a raw SCAN and a read floor at the
// mean COUNT it asked for.
func (b *bencher) sweepRound(fam *store.Family, p *sweepPasses) error {
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
	mk = b.meter.start(b.ctx)
	if seen, err = b.readFloorPass(count); err != nil {
		return err
	}
	ft := b.meter.since(b.ctx, mk, float64(seen), "key", nil)
	p.sweeps, p.raws, p.ratios = append(p.sweeps, sw), append(p.raws, raw), append(p.ratios, sw/raw)
	p.counts = append(p.counts, float64(count))
	p.calls = addCalls(p.calls, c)
	if st != nil && rt != nil && ft != nil {
		p.sweepUs, p.rawUs, p.floorUs = append(p.sweepUs, st.UsPer), append(p.rawUs, rt.UsPer), append(p.floorUs, ft.UsPer)
		if rt.UsPer > 0 {
			p.usRatios = append(p.usRatios, st.UsPer/rt.UsPer)
		}
		if ft.UsPer > 0 {
			p.floorRatios = append(p.floorRatios, st.UsPer/ft.UsPer)
		}
		if st.CPUUsPer != nil {
			p.sweepCPU = append(p.sweepCPU, *st.CPUUsPer)
		}
	}
	p.sweepTime, p.rawTime, p.floorTime = addTime(p.sweepTime, st), addTime(p.rawTime, rt), addTime(p.floorTime, ft)
	return nil
}

// file puts the passes' spreads into rep.
func (p *sweepPasses) file(rep *Report, n int) {
	sp := &rep.SweepSpread
	sp.Passes = n
	sp.SweepMin, sp.SweepMedian, sp.SweepMax = spread(p.sweeps)
	sp.RawScanMin, sp.RawScanMedian, sp.RawScanMax = spread(p.raws)
	sp.RatioMin, sp.RatioMedian, sp.RatioMax = spread(p.ratios)
	rep.Sweep, rep.RawScan = sp.SweepMedian, sp.RawScanMedian
	if len(p.sweepUs) > 0 {
		sp.SweepUsMin, rep.SweepUs, sp.SweepUsMax = spreadOf(p.sweepUs)
		sp.RawScanUsMin, rep.RawScanUs, sp.RawScanUsMax = spreadOf(p.rawUs)
	}
	if len(p.usRatios) == n {
		sp.UsRatioMin, sp.UsRatioMedian, sp.UsRatioMax = spreadOf(p.usRatios)
	}
	if len(p.sweepCPU) == n {
		sp.SweepCPUMin, sp.SweepCPUMedian, sp.SweepCPUMax = spreadOf(p.sweepCPU)
	}
	rf := &rep.ReadFloorFigures
	if len(p.floorUs) > 0 {
		rf.ReadFloorUsMin, rf.ReadFloorUs, rf.ReadFloorUsMax = spreadOf(p.floorUs)
	}
	if len(p.floorRatios) == n {
		rf.SweepVsReadFloorMin, rf.SweepVsReadFloor, rf.SweepVsReadFloorMax = spreadOf(p.floorRatios)
	}
	if p.sweepTime != nil && p.floorTime != nil {
		rf.SweepByCommand, rf.ReadFloorByCommand = perKey(p.sweepTime), perKey(p.floorTime)
	}
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
