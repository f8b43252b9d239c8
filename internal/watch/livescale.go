package watch

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// maxTopShare is the most of the growth the sweep's pages have seen that the largest keys may
// hold for figures to be scaled from them. Traffic that goes mostly to a few keys (they are the
// largest: a counter's value grows with its rate) is a sum of a few heavy keys, whose like the
// pages not yet swept may or may not hold; the spread of the pages seen cannot say how far an
// estimate scaled from them may be off, and its interval would hold the truth far less often than
// it says (docs/estimates.md, Live rates while a sweep is under way).
const maxTopShare = 0.25

// minScaledKeys is the fewest of the window's keys the frame's pages must have offered for the
// figures to be scaled from them. A few dozen keys of skewed values, each alone in its page,
// make a ratio estimate whose interval the spread of so few cannot make sound: on ten million
// keys, 22 keys seen of a family gave intervals of this hour that held the truth 86 times in 100.
const minScaledKeys = 50

// liveBudget is what a live read is told of the sweep: the keys each master holds (DBSIZE, nil
// when unknown), and what the budget affords, so that a figure the budget cannot make sound can
// say what budget would.
type liveBudget struct {
	dbsize map[string]int64
	// swept is the keys the sweep visits a second; keyCost the Redis time a key costs (seconds);
	// maxShare and ceiling are [scan] max_redis_time and keys_per_second.
	swept, keyCost float64
	maxShare       float64
	ceiling        int
}

// clusterSums are one cluster's live figures: the growth of its keys read since their pages,
// or their rates, each over the key's chance to be read.
type clusterSums struct {
	cl *liveCluster
	y  float64
}

// scaledFigures sets lf's total and rate scaled to the whole window from the frame, while no
// sweep has counted the window whole. Each cluster of the frame read its window's values
// exactly; the growth since, of the keys read live, over their chance to be read, estimates
// its growth (a Horvitz-Thompson sum per cluster); the ratio estimator scales the clusters'
// sums to the keys the masters hold, with the two phases' variances (estimate.TwoPhase). The
// rate counts the keys of the base read over the frame as that read saw it, so that every key
// it counts grew over the same span. A figure that cannot be scaled soundly is left out, and the
// note says why and what budget would make it.
func (fs *famSample) scaledFigures(lf *snapshot.LiveFamily, rows []liveRow, tau float64, newBase bool, b liveBudget) {
	addrs := fs.frameMasters(b.dbsize)
	now := fs.frame.mark()
	grown, v2Grown := fs.grownSums(rows)
	totals, walked, held := strata(addrs, now, b.dbsize, func(addr string, fr estimate.Frame) estimate.Sum {
		_, static := fs.frame.master(addr).closed()
		return grownSum(static, grown[addr])
	})
	lf.Swept, lf.Partial = math.Min(walked/math.Max(held, 1), 1), false
	var notes []string
	heavy := topShare(rows)
	total, whyTotal := scaledFigure(totals, per(v2Grown, addrs), heavy)
	switch sampled := fs.sampledRead(rows); {
	case fs.frame.seen < minScaledKeys:
		whyTotal = fmt.Sprintf("%d of the window's keys swept so far; scaled figures need %d", fs.frame.seen, minScaledKeys)
	case tau > 0 && sampled < estimate.MinFound: // before the largest keys' share, which it leaves unknown
		whyTotal = b.moreKeys(fmt.Sprintf("%d keys read beyond the %d largest, and %d must be to stand for the keys not read",
			sampled, len(fs.top), estimate.MinFound), fs.readShare(sampled))
	}
	if whyTotal == "" {
		lf.Total = &total
	}
	var whyRate string
	if newBase {
		notes = append(notes, "rate: measured from this read on")
	} else {
		hr, heldTau := fs.heldRows(rows)
		sums, v2Rate := heldSums(hr, heldTau, fs.base.frame)
		rates, _, _ := strata(addrs, fs.base.frame, b.dbsize, func(addr string, _ estimate.Frame) estimate.Sum { return rateSum(sums[addr]) })
		var rate estimate.Figure
		switch rate, whyRate = scaledFigure(rates, per(v2Rate, addrs), heavy); {
		case fs.frame.seen < minScaledKeys:
			whyRate = whyTotal
		case heldTau > 0 && grewByChance(hr) < estimate.MinFound:
			whyRate = b.moreKeys(fmt.Sprintf("%d keys read beyond the largest grew since the rate's base read, and %d must have to stand for the keys not read",
				grewByChance(hr), estimate.MinFound), fs.readShare(min(grewByChance(hr), fs.sampledRead(rows))))
		case whyRate == "":
			whyRate = fewWrites(hr, lf.ReadAt.Sub(fs.baseT), b)
		}
		if whyRate == "" {
			lf.RatePerSec = &rate
		}
	}
	switch {
	case whyTotal != "" && whyTotal == whyRate:
		notes = append(notes, "total now and rate: "+whyTotal)
	default:
		if whyTotal != "" {
			notes = append(notes, "total now: "+whyTotal)
		}
		if whyRate != "" {
			notes = append(notes, "rate: "+whyRate)
		}
	}
	if whyTotal != "" || whyRate != "" {
		notes = append(notes, b.sweepNeeded(held, held-walked))
	}
	lf.Note = strings.Join(notes, "; ")
}

// sampledRead is how many keys of the sample the rows read, beyond the top keys. Their values and
// growth, each over its chance, stand for every key of the window not read: with fewer than
// estimate.MinFound, a scaled figure would count the top keys alone, as if no other key grew (a
// budget that reads only the largest keys of each family gave rates a quarter of the truth).
func (fs *famSample) sampledRead(rows []liveRow) int {
	n := 0
	for _, r := range rows {
		if !r.top && !r.held && r.k.cl != nil {
			n++
		}
	}
	return n
}

// readShare is the keys a read of the family takes, with sampled keys of the sample beyond the top
// keys, over those it would take with estimate.MinFound of them: how far short of a scaled figure
// the budget falls.
func (fs *famSample) readShare(sampled int) float64 {
	return float64(len(fs.top)+sampled) / float64(len(fs.top)+estimate.MinFound)
}

// grewByChance is how many of the rate's keys read by chance (not its top keys) grew.
func grewByChance(hr []heldRow) int {
	n := 0
	for _, h := range hr {
		if !h.top && h.rate > 0 {
			n++
		}
	}
	return n
}

// strata is the figure's strata over the masters, each with the frame as mark saw it, the keys
// the master holds and the figure's sums (sum), and the keys walked and held in all.
func strata(addrs []string, mark map[string]frameMark, dbsize map[string]int64,
	sum func(addr string, fr estimate.Frame) estimate.Sum) (out []estimate.Stratum, walked, held float64) {
	for _, addr := range addrs {
		m := mark[addr]
		st := estimate.Stratum{Frame: m.frame, Population: float64(dbsize[addr]), Done: m.full}
		st.Sum = sum(addr, m.frame)
		out = append(out, st)
		walked += math.Min(m.frame.Keys, st.Population)
		held += st.Population
	}
	return out, walked, held
}

// per is a master's figure for each of addrs.
func per(v map[string]float64, addrs []string) []float64 {
	out := make([]float64, len(addrs))
	for i, a := range addrs {
		out[i] = v[a]
	}
	return out
}

// grownSums groups the keys read, in the frame, by cluster, per master: their growth since their
// pages over their chance to be read, and the second phase's variance of it per master (of the
// sampled keys: the top keys are read with certainty).
func (fs *famSample) grownSums(rows []liveRow) (map[string][]clusterSums, map[string]float64) {
	byCl := map[*liveCluster]float64{}
	v2 := map[string]float64{}
	for _, r := range rows {
		if cl := r.k.cl; cl != nil && !r.held {
			byCl[cl] += r.grown / r.p
			v2[cl.master] += r.grown * r.grown * (1 - r.p) / (r.p * r.p)
		}
	}
	return bySumMaster(byCl), v2
}

// heldSums groups the base read's keys counted (heldRows, at threshold tau) that the frame held
// at that read (mark) by cluster, per master: their rates over their chance, and the second
// phase's variance per master.
func heldSums(hr []heldRow, tau float64, mark map[string]frameMark) (map[string][]clusterSums, map[string]float64) {
	byCl := map[*liveCluster]float64{}
	v2 := map[string]float64{}
	for _, h := range hr {
		cl := h.k.cl
		if cl == nil || cl.seq > mark[cl.master].seq {
			continue // offered after the base read: not in the frame it counts over
		}
		byCl[cl] += h.rate / h.p
		v2[cl.master] += h.rate * h.rate * (1 - h.p) / (h.p * h.p)
	}
	return bySumMaster(byCl), v2
}

// bySumMaster is each cluster's sum, per master.
func bySumMaster(byCl map[*liveCluster]float64) map[string][]clusterSums {
	out := map[string][]clusterSums{}
	for cl, y := range byCl {
		out[cl.master] = append(out[cl.master], clusterSums{cl: cl, y: y})
	}
	return out
}

// frameMasters is every master the figures are scaled over, in a stable order: those the
// frame walked and those DBSIZE was read from.
func (fs *famSample) frameMasters(dbsize map[string]int64) []string {
	var addrs []string
	for a := range dbsize {
		addrs = append(addrs, a)
	}
	for a := range fs.frame.masters {
		if _, ok := dbsize[a]; !ok {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	return addrs
}

// grownSum is a master's clusters' window values now: as their pages read them, plus the growth
// since the live reads estimate, cluster by cluster.
func grownSum(static estimate.Sum, cls []clusterSums) estimate.Sum {
	s := static
	for _, c := range cls {
		if c.y == 0 {
			continue
		}
		if c.cl.static == 0 {
			s.Clusters++
		}
		s.Y += c.y
		s.YSq += 2*c.cl.static*c.y + c.y*c.y
		s.KeyY += c.cl.keys * c.y
	}
	return s
}

// rateSum is a master's clusters' rates.
func rateSum(cls []clusterSums) estimate.Sum {
	var s estimate.Sum
	for _, c := range cls {
		s.Add(c.cl.keys, c.y)
	}
	return s
}

// scaledFigure is the figure over strata, second their second phase's variances, and why it is
// not given ("" when it is): too few pages holding it, or the growth seen held mostly by the
// largest keys (heavy, their share of it).
func scaledFigure(strata []estimate.Stratum, second []float64, heavy float64) (estimate.Figure, string) {
	fig, ok := estimate.TwoPhase(second, strata...)
	switch {
	case !ok:
		return fig, fmt.Sprintf("found in fewer than %d pages of the window so far", estimate.MinFound)
	case heavy > maxTopShare:
		return fig, fmt.Sprintf("the largest keys hold %.0f%% of the writes seen, and the keys not swept yet may hold more like them", 100*heavy)
	}
	return fig, ""
}

// minWrites is the fewest writes the keys a rate counts must have seen since its base read.
// Over fewer, the estimate is a sum of a few events each weighed by the keys it stands for: it
// reads low more often than high, and its spread, taken from those few, is then narrow too, so
// that its interval misses the truth below far more often than it says. Thirty events keep a
// Poisson count's interval from the normal within a few percent of its coverage.
const minWrites = 30

// fewWrites says why the rows cannot make a rate ("" when they can): their keys saw fewer than
// minWrites writes over the span since the base read. It says what budget would read keys
// enough: the live reads are a share of it, so the keys read grow with it.
func fewWrites(hr []heldRow, span time.Duration, b liveBudget) string {
	var rate float64
	for _, h := range hr {
		rate += h.rate
	}
	n := math.Max(rate*span.Seconds(), 0)
	if n >= minWrites {
		return ""
	}
	return b.moreKeys(fmt.Sprintf("the keys read saw %.0f writes over %s; a rate needs %d", n, format.Span(span.Seconds()), minWrites), n/minWrites)
}

// moreKeys adds to s, which says the keys read gave frac of what a figure needs, what budget
// would read keys enough: the live reads are a share of it, so the keys read grow with it.
func (b liveBudget) moreKeys(s string, frac float64) string {
	switch f := math.Ceil(1 / frac); {
	case frac < 0.01:
		return s + ", from more keys read (a larger budget) or a longer span"
	case b.maxShare > 0:
		return s + fmt.Sprintf(`: about %.0f× the keys read, at max_redis_time = "%s"`, f, percent(math.Min(b.maxShare*f, 1)))
	case b.ceiling > 0:
		return s + fmt.Sprintf(": about %.0f× the keys read, at keys_per_second = %s", f, format.Commas(int64(float64(b.ceiling)*f)))
	}
	return s
}

// topShare is the top keys' share of the growth since their pages of the keys read (the sampled
// ones over their chance to be read): how much of the writes seen the largest keys take. Sampled
// keys that saw no write leave it at the top keys' whole: traffic that goes to the largest keys
// seen goes to keys like them the pages not swept yet may hold, or not.
func topShare(rows []liveRow) float64 {
	var top, all float64
	for _, r := range rows {
		if r.held || r.k.cl == nil || r.grown <= 0 {
			continue
		}
		all += r.grown / r.p
		if r.top {
			top += r.grown
		}
	}
	if all <= 0 {
		return 0
	}
	return top / all
}

// sweepNeeded says how much of the masters' keys the frame holds, how long the sweep needs at
// this budget to walk the left keys beyond it, and what budget would walk them within a minute.
func (b liveBudget) sweepNeeded(held, left float64) string {
	s := percent(1-left/math.Max(held, 1)) + " of the keys swept since the window began"
	if left <= 0 || !(b.swept > 0) {
		return s
	}
	s += "; the rest in " + format.Span(left/b.swept) + " at this budget"
	// The live reads take up to liveShare of the budget: the sweep has the rest.
	need := left / time.Minute.Seconds() / (1 - liveShare)
	share := need * b.keyCost / costAim
	switch {
	case b.maxShare > 0 && share > 1:
		return s + "; no budget sweeps it within a minute"
	case b.maxShare > 0 && (b.ceiling <= 0 || need <= float64(b.ceiling)):
		return s + fmt.Sprintf(`, within a minute at max_redis_time = "%s"`, percent(share))
	case b.maxShare > 0:
		return s + fmt.Sprintf(`, within a minute at max_redis_time = "%s" and keys_per_second = %s`, percent(share),
			format.Commas(int64(math.Ceil(need))))
	}
	return s + ", within a minute at keys_per_second = " + format.Commas(int64(math.Ceil(need)))
}

// percent renders a share as the config writes it: "0.8%", "12%".
func percent(v float64) string {
	if v >= 0.1 {
		return fmt.Sprintf("%.0f%%", 100*v)
	}
	return strconv.FormatFloat(100*v, 'g', 2, 64) + "%"
}

// liveBudget is what the live reads are told of the sweep at this Poll: each master's DBSIZE
// (none when it was refused), the keys the sweep visits a second and what a key costs.
func (w *Watcher) liveBudget() liveBudget {
	b := liveBudget{swept: w.cost.sweptRate(), keyCost: w.cost.keyCost(), maxShare: w.opt.MaxRedisTime, ceiling: w.opt.KeysPerSecond}
	prog := w.sweep.Progress()
	for addr, mp := range prog.Masters {
		if mp.DBSize > 0 {
			if b.dbsize == nil {
				b.dbsize = map[string]int64{}
			}
			b.dbsize[addr] = mp.DBSize
		}
	}
	return b
}
