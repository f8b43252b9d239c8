package watch

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
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
// window holds.
func (s *liveSampler) read(ctx context.Context, rdb redis.UniversalClient, pace *scanner.Pacer, last *snapshot.Snapshot) ([]snapshot.LiveFamily, int, error) {
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
	at := time.Now()
	s.lastRead = at
	pace.Spend(len(names))
	out := make([]snapshot.LiveFamily, 0, len(fams))
	j := 0
	for i, fs := range fams {
		got := vals[j : j+len(keys[i])]
		j += len(keys[i])
		out = append(out, fs.figures(keys[i], got, taus[i], at, last))
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
	return append(keys, sample...), tau
}

// figures takes a family's live reads in (keys and their values, read at at; tau the threshold
// of the sample's keys read) and estimates its window's total and rate.
func (fs *famSample) figures(keys []*liveKey, vals []scanner.LiveValue, tau float64, at time.Time, last *snapshot.Snapshot) snapshot.LiveFamily {
	lf := snapshot.LiveFamily{Family: fs.f.Name(), Granularity: fs.g.String(), WindowStart: fs.win.Start, ReadAt: at}
	if wf, ok := fs.f.Format(fs.g); ok {
		lf.Window = wf.Format(fs.win)
	}
	var total, rate htSum
	// The sampled keys read for the first time (found by a sweep since the last read) count in
	// the rate as the others do: the rated keys' sum is scaled by the weight of all the sampled
	// keys read over theirs (as Horvitz-Thompson estimates).
	var wAll, wRated float64
	topRated := true
	newBase, newMid := fs.advance(keys, at)
	span := at.Sub(fs.baseT).Seconds()
	for i, k := range keys {
		if vals[i].Gone {
			fs.drop(k)
			continue
		}
		y, ok := k.take(vals[i].Value, at, span, newBase, newMid)
		if k.idx < 0 {
			lf.Top++
			total.exact(float64(k.value))
			rate.exact(y)
			topRated = topRated && ok
		} else {
			lf.Sampled++
			total.add(float64(k.value), k.w, tau)
			w := k.w / chance(k.w, tau)
			wAll += w
			if ok {
				wRated += w
				rate.add(y, k.w, tau)
			}
		}
	}
	if !newBase {
		lf.RateSince = fs.baseT
	}
	if wRated > 0 {
		rate.scale(wAll / wRated)
	}
	lf.Keys, lf.KeysFrom, lf.Partial = fs.population(last, int64(lf.Top+lf.Sampled))
	cover := float64(lf.Top+lf.Sampled) / math.Max(float64(lf.Keys), 1)
	var notes []string
	// Keys of the window offered and not kept, or not read now, or counted by a sweep and never
	// offered (created since, or past the sweep under way's place): the keys read are not all.
	leftOut := tau > 0 || lf.Keys > int64(lf.Top+lf.Sampled)
	if fig, ok := total.figure(cover, leftOut); ok {
		lf.Total = &fig
	} else {
		notes = append(notes, fmt.Sprintf("total: fewer than %d of the %d keys sampled hold a value", estimate.MinFound, lf.Sampled))
	}
	switch fig, ok := rate.figure(cover, leftOut); {
	case newBase:
		notes = append(notes, "rate: measured from this read on (the sample changed)")
	case !topRated || (rate.n == 0 && lf.Sampled > 0):
		notes = append(notes, "rate: keys read a first time; their growth is known from the next read")
	case !ok:
		notes = append(notes, fmt.Sprintf("rate: fewer than %d of the %d keys sampled grew", estimate.MinFound, rate.n))
	default:
		lf.RatePerSec = &fig
	}
	lf.Note = strings.Join(notes, "; ")
	return lf
}

// htSum is the Horvitz-Thompson estimate of a figure's sum over a family's keys: the exact keys'
// sum, plus each sampled key's figure over its chance to be sampled, min(1, w/tau), with the
// variance of that sum (the sampled keys drawn with certainty add none).
type htSum struct {
	exactSum, est, variance float64
	n, nonzero, uncertain   int
	seen                    float64
}

func (h *htSum) exact(y float64) { h.exactSum += y; h.seen += y }

// chance is a sampled key's chance to be drawn: min(1, w/tau), 1 when no key was left out.
func chance(w, tau float64) float64 {
	if tau <= 0 {
		return 1
	}
	return math.Min(1, w/tau)
}

// scale multiplies the sampled keys' part of the estimate by f (and its variance by f²).
func (h *htSum) scale(f float64) {
	h.est *= f
	h.variance *= f * f
}

func (h *htSum) add(y, w, tau float64) {
	p := chance(w, tau)
	h.n++
	h.seen += y
	h.est += y / p
	if p < 1 {
		h.uncertain++
		if y != 0 {
			h.nonzero++
		}
		h.variance += y * y * (1 - p) / (p * p)
	}
}

// figure is the estimate with its 95% interval; ok is false when keys were left out (leftOut:
// offered and not kept, or not read this time) and fewer than estimate.MinFound keys drawn by
// chance hold the figure (then their spread says too little, and with none read at all the keys
// left out would count for nothing). cover is the share of the window's keys read.
func (h *htSum) figure(cover float64, leftOut bool) (estimate.Figure, bool) {
	if (h.uncertain > 0 || leftOut) && h.nonzero < estimate.MinFound {
		return estimate.Figure{}, false
	}
	est := h.exactSum + h.est
	half := estimate.TQuantile975(float64(max(h.uncertain-1, 1))) * math.Sqrt(h.variance)
	fig := estimate.Figure{Estimate: est, Low: est - half, High: est + half, Seen: h.seen, Coverage: math.Min(cover, 1)}
	if h.uncertain == 0 && !leftOut {
		fig.Coverage = 1 // every key offered was read
	}
	return fig, true
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

// advance moves the family's base and mid reads on for a read at at of keys: the mid read
// becomes the base once the base is liveRateSpan old (then the mid read is now); the first read,
// or one where more than a quarter of the sampled keys read have no value at the base read (the
// sample changed: keys a sweep found since joined), is a new base, from which the rate is
// measured at the next read. It says which of the two reads this one is.
func (fs *famSample) advance(keys []*liveKey, at time.Time) (newBase, newMid bool) {
	all := append(slices.Clone(fs.top), fs.sample...)
	if !fs.midT.IsZero() && at.Sub(fs.baseT) >= liveRateSpan {
		fs.baseT, fs.midT, newMid = fs.midT, at, true
		for _, k := range all {
			k.base, k.mid = k.mid, livePoint{}
		}
	} else if !fs.baseT.IsZero() && fs.midT.IsZero() && at.Sub(fs.baseT) >= liveRateSpan/2 {
		fs.midT, newMid = at, true
	}
	sampled, unbased := 0, 0
	for _, k := range keys {
		if k.idx >= 0 {
			sampled++
			if !k.base.set {
				unbased++
			}
		}
	}
	if fs.baseT.IsZero() || unbased*4 > sampled {
		fs.baseT, fs.midT = at, time.Time{}
		for _, k := range all {
			k.base, k.mid = livePoint{}, livePoint{}
		}
		return true, false
	}
	return false, newMid
}

// take records the key's value v read at at (the base or mid read when newBase or newMid), and
// returns its growth per second over the family's span since the base read. A key that joined
// since counts its growth since its own first live read (over a shorter span: the same rate
// while traffic is steady), and a key among the largest that joined since and has none yet,
// since the value its page offered; ok is false when the key has no earlier read.
func (k *liveKey) take(v int64, at time.Time, span float64, newBase, newMid bool) (float64, bool) {
	k.value = v
	p := livePoint{v: v, t: at, set: true}
	if newBase {
		k.base = p
	}
	if newMid {
		k.mid = p
	}
	first := k.first
	if !first.set {
		k.first = p
	}
	switch {
	case newBase:
		return 0, false
	case k.base.set && span > 0:
		return float64(v-k.base.v) / span, true
	case first.set && at.After(first.t):
		return float64(v-first.v) / at.Sub(first.t).Seconds(), true
	case k.idx < 0 && k.page.set && at.Sub(k.page.t) > time.Second:
		return float64(v-k.page.v) / at.Sub(k.page.t).Seconds(), true
	}
	return 0, false
}
