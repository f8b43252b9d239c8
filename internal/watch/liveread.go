package watch

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// read reads every family's live keys again (MGET, in chunks of at most valueChunk keys of one
// hash slot on a cluster), charges them to pace, and returns each family's figures. The keys
// read are held to liveShare of pace's budget since the last read: a family gets its top keys
// and the part of its sample of the highest priorities that fits, a priority sample too. last is
// the last complete Snapshot (nil before the first), whose window counts say how many keys the
// window holds; b what the sweep says of the masters and the budget.
func (s *liveSampler) read(ctx context.Context, rdb redis.UniversalClient, pace *scanner.Pacer, last *snapshot.Snapshot,
	b liveBudget) ([]snapshot.LiveFamily, int, error) {
	s.dbsize = b.dbsize
	now := s.now()
	var fams []*famSample
	for _, fs := range s.order {
		fs.roll(now, s.loc)
		if len(fs.top)+len(fs.sample) > 0 {
			fams = append(fams, fs)
		}
	}
	if len(fams) == 0 {
		return nil, 0, nil
	}
	allow := s.allowance(pace)
	if fams = s.inTurn(fams, allow); len(fams) == 0 {
		// The budget since the last read does not cover even one family's largest keys: the
		// last figures stand (their ReadAt says when they were read) until it does.
		return s.lastFigures, 0, nil
	}
	share := allow / len(fams)
	keys := make([][]*liveKey, len(fams))
	taus := make([]float64, len(fams))
	var names []string
	for i, fs := range fams {
		keys[i], taus[i] = fs.toRead(share)
		for _, k := range keys[i] {
			names = append(names, k.name)
		}
	}
	vals, err := scanner.ReadLive(ctx, rdb, names)
	if err != nil {
		return nil, 0, err
	}
	at := s.clock()
	s.lastRead = at
	pace.Spend(len(names))
	out := make([]snapshot.LiveFamily, 0, len(fams))
	j := 0
	for i, fs := range fams {
		got := vals[j : j+len(keys[i])]
		j += len(keys[i])
		out = append(out, fs.figures(keys[i], got, taus[i], at, last, b))
	}
	s.lastFigures = s.keep(out)
	return s.lastFigures, len(names), nil
}

// inTurn is the families this read covers: all of them when the budget covers every family's
// largest keys; otherwise as many as it covers, in turn, starting after the last read's, so that
// with many families on a tight budget each is read every few Polls rather than none ever.
func (s *liveSampler) inTurn(fams []*famSample, allow int) []*famSample {
	exact := 0
	for _, fs := range fams {
		exact += len(fs.top)
	}
	if exact <= allow {
		return fams
	}
	var out []*famSample
	used := 0
	for i := range fams {
		fs := fams[(s.turn+i)%len(fams)]
		if used+len(fs.top) > allow {
			break
		}
		used += len(fs.top)
		out = append(out, fs)
	}
	s.turn = (s.turn + len(out)) % len(fams)
	return out
}

// keep is this read's figures with, for the families it did not read, their last ones while
// they are still of the family's current window, in the families' order.
func (s *liveSampler) keep(read []snapshot.LiveFamily) []snapshot.LiveFamily {
	byName := map[string]snapshot.LiveFamily{}
	for _, lf := range s.lastFigures {
		byName[lf.Family] = lf
	}
	for _, lf := range read {
		byName[lf.Family] = lf
	}
	var out []snapshot.LiveFamily
	for _, fs := range s.order {
		if lf, ok := byName[fs.f.Name()]; ok && lf.WindowStart.Equal(fs.win.Start) {
			out = append(out, lf)
		}
	}
	return out
}

// allowance is how many keys this read may take: liveShare of the keys the budget allows since
// the last read (a second's worth for the first, at most two seconds' after a pause), or no
// limit without a budget.
func (s *liveSampler) allowance(pace *scanner.Pacer) int {
	if pace == nil || pace.Rate() <= 0 {
		return 1 << 30
	}
	gap := time.Second
	if !s.lastRead.IsZero() {
		gap = min(time.Since(s.lastRead), 2*time.Second)
	}
	return int(pace.Rate() * gap.Seconds() * liveShare)
}

// toRead is the family's keys to read: every top key, and the sample's keys of the highest
// priorities, as many as share leaves room for. tau is the threshold of the keys read: the
// highest priority of the keys not read, among those offered.
func (fs *famSample) toRead(share int) (keys []*liveKey, tau float64) {
	keys = slices.Clone(fs.top)
	n := min(len(fs.sample), max(share-len(fs.top), 0))
	sample := slices.Clone([]*liveKey(fs.sample))
	tau = fs.tau
	if n < len(sample) {
		slices.SortFunc(sample, func(a, b *liveKey) int { return cmp.Compare(b.prio, a.prio) })
		tau = max(tau, sample[n].prio)
		sample = sample[:n]
	}
	keys = append(keys, sample...)
	// The base read's top keys are read exactly through the span, wherever they are now: the
	// rate counts them as that read saw them (sampleFigures).
	for _, k := range fs.base.keys {
		if k.held.top && fs.byName[k.name] != k {
			keys = append(keys, k)
		}
	}
	return keys, tau
}

// figures takes a family's live reads in (keys and their values, read at at; tau the threshold
// of the sample's keys read) and estimates its window's total and rate. While no sweep has
// counted the window whole, they are scaled from the pages walked since it began (b says what
// the masters hold); else they are the sample's.
func (fs *famSample) figures(keys []*liveKey, vals []scanner.LiveValue, tau float64, at time.Time, last *snapshot.Snapshot,
	b liveBudget) snapshot.LiveFamily {
	lf := snapshot.LiveFamily{Family: fs.f.Name(), Granularity: fs.g.String(), WindowStart: fs.win.Start, ReadAt: at}
	if wf, ok := fs.f.Format(fs.g); ok {
		lf.Window = wf.Format(fs.win)
	}
	_, _, partial := fs.population(last, 0)
	scale := partial && len(b.dbsize) > 0
	fs.counted = !partial
	newBase, newMid := fs.advance(at, sampledKeys(keys))
	span := at.Sub(fs.baseT).Seconds()
	rows := make([]liveRow, 0, len(keys))
	for i, k := range keys {
		if vals[i].Gone {
			fs.drop(k)
			continue
		}
		r := liveRow{k: k, top: k.idx < 0, p: 1, held: fs.byName[k.name] != k}
		if r.held {
			r.top = false // a base read's top key left since: its rate counts, not its value (toRead)
		}
		r.rate, r.since, r.rated = k.take(vals[i].Value, at, span, newBase, newMid)
		r.v, r.grown = float64(k.value), float64(k.value-k.framed.v)
		switch {
		case r.top:
			lf.Top++
		case !r.held:
			lf.Sampled++
			r.p = chance(k.w, tau)
		}
		rows = append(rows, r)
	}
	if !newBase {
		lf.RateSince = fs.baseT
	}
	if newBase || newMid {
		fs.hold(rows, tau, newBase)
	}
	lf.Keys, lf.KeysFrom, lf.Partial = fs.population(last, int64(lf.Top+lf.Sampled))
	if scale {
		fs.scaledFigures(&lf, rows, tau, newBase, b)
	} else {
		fs.sampleFigures(&lf, rows, tau, newBase, b)
	}
	return lf
}

// liveRow is one key read live: its value now, its growth since its page offered it, its rate
// and what the rate counts from (rated is false when it has no earlier read to count from), and
// its chance to be read (1 for a top key).
type liveRow struct {
	k          *liveKey
	top, rated bool
	// held is set for a key read for the base read's sake only: a top key then, gone from the
	// top list and the sample since.
	held     bool
	v, grown float64
	rate, p  float64
	since    time.Time
}

// population is the number of the window's keys (the figures do not scale by it: it says what
// share of the keys was read, and whether the sweeps have seen them all): the last complete
// sweep's count when it was taken in this window, or the sweep under way's when it has seen
// more; read is the keys read now, at least that many. partial is set unless the last complete sweep began in the window,
// when it saw every key the window had then.
func (fs *famSample) population(last *snapshot.Snapshot, read int64) (n int64, from string, partial bool) {
	n, from, partial = fs.swept, "sweep", true
	if last != nil {
		began := last.TakenAt.Add(-time.Duration(last.Scan.DurationMS) * time.Millisecond)
		var snap int64
		if f := last.Family(fs.f.Name()); f != nil {
			if w := f.Window(fs.g.String(), fs.win.Start); w != nil {
				snap = w.Keys
			}
		}
		if !began.Before(fs.win.Start) || snap > 0 {
			partial = partial && began.Before(fs.win.Start)
			if snap >= n {
				n, from = snap, "snapshot"
			}
		}
	}
	return max(n, read), from, partial
}

// advance moves the family's base and mid reads on for a read at at: the mid read becomes the
// base once the base is liveRateSpan old (then the mid read is now). The first read is the base,
// and so is the first once a sweep has counted the window: a base read before drew its sample
// from the keys the sweeps had offered by then, which the keys offered since are not counted
// with. So does a first sweep's base read taken too soon for a scaled rate (baseTooSoon). It says
// which of the two reads this one is.
func (fs *famSample) advance(at time.Time, sampled int) (newBase, newMid bool) {
	all := slices.Concat(fs.top, fs.sample, fs.base.keys, fs.mid.keys)
	switch {
	case fs.baseT.IsZero() || fs.counted && !fs.base.counted, !fs.counted && fs.baseTooSoon(sampled):
		for _, k := range all {
			k.base, k.mid, k.held = livePoint{}, livePoint{}, heldKey{}
		}
		fs.baseT, fs.midT, fs.base, fs.mid = at, time.Time{}, heldRead{}, heldRead{}
		return true, false
	case !fs.midT.IsZero() && at.Sub(fs.baseT) >= liveRateSpan:
		fs.baseT, fs.midT = fs.midT, at
		for _, k := range all {
			k.base, k.held = livePoint{}, heldKey{}
		}
		for _, k := range fs.mid.keys {
			k.base, k.held = k.mid, k.heldMid
		}
		for _, k := range all {
			k.mid = livePoint{}
		}
		fs.base, fs.mid = fs.mid, heldRead{}
		return false, true
	case fs.midT.IsZero() && at.Sub(fs.baseT) >= liveRateSpan/2:
		fs.midT = at
		return false, true
	}
	return false, false
}

// baseTooSoon says whether the base read came too soon in a first sweep to scale a rate from, and
// this read (holding sampled keys of the sample) would not: the base's frame held fewer than
// estimate.MinFound clusters, or it read fewer keys of the sample than that, beyond the largest
// keys (scaledFigures gives no rate over either). Its first pages offer little more than the
// largest keys, and a base read waits a minute to be replaced.
func (fs *famSample) baseTooSoon(sampled int) bool {
	clusters := func(mark map[string]frameMark) int {
		n := 0
		for _, m := range mark {
			n += m.frame.Clusters
		}
		return n
	}
	if clusters(fs.frame.mark()) < estimate.MinFound {
		return false
	}
	return clusters(fs.base.frame) < estimate.MinFound || fs.base.sampled < estimate.MinFound && sampled >= estimate.MinFound
}

// sampledKeys is how many of keys are of the sample, beyond the top keys.
func sampledKeys(keys []*liveKey) int {
	n := 0
	for _, k := range keys {
		if k.idx >= 0 {
			n++
		}
	}
	return n
}

// hold keeps the keys of this read (rows, read at threshold tau) as the base read's, or the mid
// read's: each key's weight, priority and place in the top list as this read saw them.
func (fs *famSample) hold(rows []liveRow, tau float64, base bool) {
	hr := heldRead{tau: tau, counted: fs.counted, frame: fs.frame.mark()}
	for _, r := range rows {
		if r.held {
			continue
		}
		h := heldKey{w: r.k.w, prio: r.k.prio, top: r.top}
		if !r.top {
			hr.sampled++
		}
		if base {
			r.k.held = h
		} else {
			r.k.heldMid = h
		}
		hr.keys = append(hr.keys, r.k)
	}
	if base {
		fs.base = hr
	} else {
		fs.mid = hr
	}
}

// take records the key's value v read at at (the base or mid read when newBase or newMid), and
// returns its growth per second and the read it counts from: the family's base read, when the
// key was read then; else the page that offered it when it joined the sample (or its weight
// last changed), once that is over a second old; else its first live read since. The spans
// differ, but give the same rate while traffic is steady. ok is false when the key has no
// earlier read to count from.
func (k *liveKey) take(v int64, at time.Time, span float64, newBase, newMid bool) (float64, time.Time, bool) {
	k.value = v
	p := livePoint{v: v, t: at, set: true}
	hadBase, first := k.base.set && !newBase, k.first
	if newBase {
		k.base = p
	}
	if newMid {
		k.mid = p
	}
	if !first.set {
		k.first = p
	}
	switch {
	case hadBase && span > 0:
		return float64(v-k.base.v) / span, k.base.t, true
	case k.page.set && at.Sub(k.page.t) > time.Second:
		return float64(v-k.page.v) / at.Sub(k.page.t).Seconds(), k.page.t, true
	case first.set && at.After(first.t):
		return float64(v-first.v) / at.Sub(first.t).Seconds(), first.t, true
	}
	return 0, time.Time{}, false
}
