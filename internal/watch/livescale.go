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
// and their rates, each over the key's chance to be read.
type clusterSums struct {
	cl          *liveCluster
	grown, rate float64
}

// scaledFigures sets lf's total and rate scaled to the whole window from the frame, while no
// sweep has counted the window whole. Each cluster of the frame read its window's values
// exactly; the growth since, of the keys read live, over their chance to be read, estimates
// its growth (a Horvitz-Thompson sum per cluster); the ratio estimator scales the clusters'
// sums to the keys the masters hold, with the two phases' variances (estimate.TwoPhase). A
// figure that cannot be scaled soundly is left out, and the note says why and what budget
// would make it.
func (fs *famSample) scaledFigures(lf *snapshot.LiveFamily, rows []liveRow, b liveBudget) {
	sums, v2Total, v2Rate, since := fs.clusterSums(rows)
	if !since.IsZero() {
		lf.RateSince = since
	}
	addrs := fs.frameMasters(b.dbsize)
	totals := make([]estimate.Stratum, len(addrs))
	rates := make([]estimate.Stratum, len(addrs))
	var walked, held float64
	for i, addr := range addrs {
		fm := fs.frame.master(addr)
		fr, static := fm.closed()
		st := estimate.Stratum{Frame: fr, Population: float64(b.dbsize[addr]), Done: fm.full}
		totals[i], rates[i] = st, st
		totals[i].Sum, rates[i].Sum = grownSum(static, sums[addr]), rateSum(sums[addr])
		walked += math.Min(fr.Keys, st.Population)
		held += st.Population
	}
	lf.Swept, lf.Partial = math.Min(walked/math.Max(held, 1), 1), false
	var notes []string
	heavy := topShare(rows)
	total, whyTotal := scaledFigure(totals, v2Total(addrs), heavy)
	rate, whyRate := scaledFigure(rates, v2Rate(addrs), heavy)
	switch {
	case whyTotal != "" && whyTotal == whyRate:
		notes = append(notes, "total now and rate: "+whyTotal)
	case whyTotal != "":
		notes = append(notes, "total now: "+whyTotal)
	case whyRate != "":
		notes = append(notes, "rate: "+whyRate)
	}
	if whyTotal == "" {
		lf.Total = &total
	}
	if whyRate == "" {
		lf.RatePerSec = &rate
	}
	if len(notes) > 0 {
		notes = append(notes, b.sweepNeeded(held, held-walked))
	}
	lf.Note = strings.Join(notes, "; ")
}

// clusterSums groups the rows of keys in the frame by cluster, per master, and returns the
// second phase's variances of the growth and the rate per master (of the sampled keys: the top
// keys are read with certainty), and the earliest read a rate counts from. The sampled keys with
// no rate (found by a page under a second ago) count as the others: the rated ones' sums are
// scaled by the weight of all of them over theirs.
func (fs *famSample) clusterSums(rows []liveRow) (map[string][]clusterSums, func([]string) []float64, func([]string) []float64, time.Time) {
	var wAll, wRated float64
	for _, r := range rows {
		if !r.top && !r.held && r.k.cl != nil {
			wAll += 1 / r.p
			if r.rated {
				wRated += 1 / r.p
			}
		}
	}
	scale := 1.0
	if wRated > 0 {
		scale = wAll / wRated
	}
	byCl := map[*liveCluster]*clusterSums{}
	vTotal, vRate := map[string]float64{}, map[string]float64{}
	var since time.Time
	for _, r := range rows {
		cl := r.k.cl
		if cl == nil || r.held {
			continue // offered past a master walked whole (in no cluster of the frame), or not sampled now
		}
		cs := byCl[cl]
		if cs == nil {
			cs = &clusterSums{cl: cl}
			byCl[cl] = cs
		}
		cs.grown += r.grown / r.p
		vTotal[cl.master] += r.grown * r.grown * (1 - r.p) / (r.p * r.p)
		if r.rated {
			y := r.rate
			if !r.top {
				y *= scale
			}
			cs.rate += y / r.p
			vRate[cl.master] += y * y * (1 - r.p) / (r.p * r.p)
			if since.IsZero() || r.since.Before(since) {
				since = r.since
			}
		}
	}
	out := map[string][]clusterSums{}
	for _, cs := range byCl {
		out[cs.cl.master] = append(out[cs.cl.master], *cs)
	}
	per := func(v map[string]float64) func([]string) []float64 {
		return func(addrs []string) []float64 {
			o := make([]float64, len(addrs))
			for i, a := range addrs {
				o[i] = v[a]
			}
			return o
		}
	}
	return out, per(vTotal), per(vRate), since
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
		if c.grown == 0 {
			continue
		}
		if c.cl.static == 0 {
			s.Clusters++
		}
		s.Y += c.grown
		s.YSq += 2*c.cl.static*c.grown + c.grown*c.grown
		s.KeyY += c.cl.keys * c.grown
	}
	return s
}

// rateSum is a master's clusters' rates.
func rateSum(cls []clusterSums) estimate.Sum {
	var s estimate.Sum
	for _, c := range cls {
		s.Add(c.cl.keys, c.rate)
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

// topShare is the top keys' share of the growth of the keys read (the sampled ones over their
// chance to be read): how much of the writes seen the largest keys take.
func topShare(rows []liveRow) float64 {
	var top, all float64
	for _, r := range rows {
		if r.held || r.k.cl == nil || !r.rated || r.rate <= 0 {
			continue
		}
		all += r.rate / r.p
		if r.top {
			top += r.rate
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
		return s + ", and within a minute at no budget"
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
