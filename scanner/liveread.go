package scanner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/internal/estimate"
	"hourglass/store"
)

// read reads every family's live keys again (MGET, in chunks of at most valueChunk keys of one
// hash slot on a cluster), charges them to pace, and returns each family's figures. The keys
// read are held to liveShare of pace's budget since the last read: a family gets its top keys
// and the part of its sample of the highest priorities that fits, a priority sample too. last is
// the last complete Snapshot (nil before the first), whose window counts say how many keys the
// window holds.
func (s *liveSampler) read(ctx context.Context, rdb redis.UniversalClient, pace *pacer, last *Snapshot) ([]LiveFamily, int, error) {
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
	allow, exact := s.allowance(pace), 0
	for _, fs := range fams {
		exact += len(fs.top)
	}
	if exact > allow {
		// The budget since the last read does not cover even the largest keys: the last figures
		// stand (their ReadAt says when they were read) until it does.
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
	vals, err := mgetChunked(ctx, rdb, names)
	if err != nil {
		return nil, 0, err
	}
	at := time.Now()
	s.lastRead = at
	pace.spend(len(names))
	out := make([]LiveFamily, 0, len(fams))
	j := 0
	for i, fs := range fams {
		got := vals[j : j+len(keys[i])]
		j += len(keys[i])
		out = append(out, fs.figures(keys[i], got, taus[i], at, last))
	}
	s.lastFigures = out
	return out, len(names), nil
}

// allowance is how many keys this read may take: liveShare of the keys the budget allows since
// the last read (a second's worth for the first, at most two seconds' after a pause), or no
// limit without a budget.
func (s *liveSampler) allowance(pace *pacer) int {
	if pace == nil || pace.rate <= 0 {
		return 1 << 30
	}
	gap := time.Second
	if !s.lastRead.IsZero() {
		gap = min(time.Since(s.lastRead), 2*time.Second)
	}
	return int(pace.rate * gap.Seconds() * liveShare)
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

// liveValue is one key's live read: its value, or gone (no key, or no longer an integer).
type liveValue struct {
	v    int64
	gone bool
}

// mgetChunked reads names' values with MGET, at most valueChunk keys a command, of one hash slot
// on a cluster, in one pipeline.
func mgetChunked(ctx context.Context, rdb redis.UniversalClient, names []string) ([]liveValue, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var groups [][]int
	if _, cluster := rdb.(*redis.ClusterClient); cluster {
		bySlot := map[int]int{}
		for i, n := range names {
			sl := store.Slot(n)
			g, ok := bySlot[sl]
			if !ok {
				g = len(groups)
				bySlot[sl] = g
				groups = append(groups, nil)
			}
			groups[g] = append(groups[g], i)
		}
	} else {
		groups = [][]int{make([]int, len(names))}
		for i := range names {
			groups[0][i] = i
		}
	}
	pipe := rdb.Pipeline()
	type chunk struct {
		idx []int
		cmd *redis.SliceCmd
	}
	var chunks []chunk
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), valueChunk)
			args := make([]string, n)
			for j, i := range idx[:n] {
				args[j] = names[i]
			}
			chunks = append(chunks, chunk{idx[:n], pipe.MGet(ctx, args...)})
			idx = idx[n:]
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !keyLevel(err) {
		return nil, fmt.Errorf("scanner: live reads: %w", err)
	}
	out := make([]liveValue, len(names))
	for _, c := range chunks {
		vals, err := c.cmd.Result()
		if err != nil {
			return nil, fmt.Errorf("scanner: live reads: MGET: %w", err)
		}
		for j, i := range c.idx {
			out[i].gone = true
			if j < len(vals) {
				if s, ok := vals[j].(string); ok {
					out[i].v, out[i].gone = parseLive(s)
				}
			}
		}
	}
	return out, nil
}

func parseLive(s string) (int64, bool) {
	v, ok := ParseInteger(s)
	return v, !ok
}

// figures takes a family's live reads in (keys and their values, read at at; tau the threshold
// of the sample's keys read) and estimates its window's total and rate.
func (fs *famSample) figures(keys []*liveKey, vals []liveValue, tau float64, at time.Time, last *Snapshot) LiveFamily {
	lf := LiveFamily{Family: fs.f.Name(), Granularity: fs.g.String(), WindowStart: fs.win.Start, ReadAt: at}
	if wf, ok := fs.f.Format(fs.g); ok {
		lf.Window = wf.Format(fs.win)
	}
	var total, rate htSum
	var rated []ratedKey
	rateTau := tau // keys read a first time have no growth yet: the rate's sample is above them
	topRated := true
	for i, k := range keys {
		if vals[i].gone {
			fs.drop(k)
			continue
		}
		y, since, ok := k.update(vals[i].v, at)
		if k.idx < 0 {
			lf.Top++
			total.exact(float64(k.value))
			rate.exact(y)
			topRated = topRated && ok
		} else {
			lf.Sampled++
			total.add(float64(k.value), k.w, tau)
			if !ok {
				rateTau = max(rateTau, k.prio)
			}
		}
		if ok {
			rated = append(rated, ratedKey{k, y})
			if lf.RateSince.IsZero() || since.Before(lf.RateSince) {
				lf.RateSince = since
			}
		}
	}
	for _, r := range rated {
		if r.k.idx >= 0 && r.k.prio > rateTau {
			rate.add(r.y, r.k.w, rateTau)
		}
	}
	lf.Keys, lf.KeysFrom, lf.Partial = fs.population(last, int64(lf.Top+lf.Sampled))
	cover := float64(lf.Top+lf.Sampled) / math.Max(float64(lf.Keys), 1)
	var notes []string
	if fig, ok := total.figure(cover); ok {
		lf.Total = &fig
	} else {
		notes = append(notes, fmt.Sprintf("total: fewer than %d of the %d keys sampled hold a value", estimate.MinFound, lf.Sampled))
	}
	switch fig, ok := rate.figure(cover); {
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

type ratedKey struct {
	k *liveKey
	y float64
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

func (h *htSum) add(y, w, tau float64) {
	p := 1.0
	if tau > 0 {
		p = math.Min(1, w/tau)
	}
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

// figure is the estimate with its 95% interval; ok is false when fewer than estimate.MinFound
// keys drawn by chance hold the figure (then their spread says too little). cover is the share
// of the window's keys read.
func (h *htSum) figure(cover float64) (estimate.Figure, bool) {
	if h.uncertain > 0 && h.nonzero < estimate.MinFound {
		return estimate.Figure{}, false
	}
	est := h.exactSum + h.est
	half := estimate.TQuantile975(float64(max(h.uncertain-1, 1))) * math.Sqrt(h.variance)
	fig := estimate.Figure{Estimate: est, Low: est - half, High: est + half, Seen: h.seen, Coverage: math.Min(cover, 1)}
	if h.uncertain == 0 {
		fig.Coverage = 1 // every key offered was read
	}
	return fig, true
}

// population is the number of the window's keys (the figures do not scale by it: it says what
// share of the keys was read, and whether the sweeps have seen them all): the last complete sweep's count when it was
// taken in this window, or the sweep under way's when it has seen more; read is the keys read
// now, at least that many. partial is set unless the last complete sweep began in the window,
// when it saw every key the window had then.
func (fs *famSample) population(last *Snapshot, read int64) (n int64, from string, partial bool) {
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

// update takes in the key's value read at at, and returns its growth per second since its base
// and when that base was read; ok is false when it has no live read before this one.
func (k *liveKey) update(v int64, at time.Time) (float64, time.Time, bool) {
	k.value = v
	now := livePoint{v: v, t: at, live: true, set: true}
	if !k.base.live {
		k.base, k.mid = now, livePoint{}
		return 0, time.Time{}, false
	}
	since := k.base.t
	span := at.Sub(since)
	rate := 0.0
	if span > 0 {
		rate = float64(v-k.base.v) / span.Seconds()
	}
	switch {
	case k.mid.set && at.Sub(k.base.t) >= liveRateSpan:
		k.base, k.mid = k.mid, now
	case !k.mid.set && at.Sub(k.base.t) >= liveRateSpan/2:
		k.mid = now
	}
	return rate, since, span > 0
}
