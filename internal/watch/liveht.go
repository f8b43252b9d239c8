package watch

import (
	"fmt"
	"math"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// sampleFigures sets lf's total and rate from the sample alone, for a window a sweep has counted
// whole: the top keys' sum and the sampled keys' Horvitz-Thompson estimate. newBase says this
// read is the rate's base (no rate yet).
func (fs *famSample) sampleFigures(lf *snapshot.LiveFamily, rows []liveRow, tau float64, newBase bool, b liveBudget) {
	var total htSum
	for _, r := range rows {
		switch {
		case r.held:
		case r.top:
			total.exact(r.v)
		default:
			total.add(r.v, r.k.w, tau)
		}
	}
	var rate htSum
	var few string
	if !newBase {
		hr, tau := fs.heldRows(rows)
		rate, few = heldRate(hr, tau), fewWrites(hr, lf.ReadAt.Sub(fs.baseT), b)
	}
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
	switch fig, ok := rate.figure(cover, leftOut || fs.base.tau > 0); {
	case newBase:
		notes = append(notes, "rate: measured from this read on")
	case !ok:
		notes = append(notes, fmt.Sprintf("rate: fewer than %d of the %d keys sampled at its base read grew", estimate.MinFound, rate.n))
	case few != "":
		notes = append(notes, "rate: "+few)
	default:
		lf.RatePerSec = &fig
	}
	lf.Note = strings.Join(notes, "; ")
}

// heldRow is a key's growth a second since the base read, and its chance to be read as that read
// drew it (1 for its top keys).
type heldRow struct {
	k       *liveKey
	rate, p float64
	top     bool
}

// heldRows are the rows the rate counts over the span since the base read: the keys that read
// saw, each as it saw them: its top keys exactly, its sampled keys each over the chance its weight
// had at that read. A key that joined the sample since, or whose weight a sweep raised since,
// counts as it was then: a chance taken from a weight its growth raised would count the keys that
// grew most for least. The keys of the base read not read now (a tighter budget, or pushed out of
// the sample since) raise the threshold the others are counted at, so that the keys counted are
// still a priority sample of those the base read was drawn from. It returns that threshold.
func (fs *famSample) heldRows(rows []liveRow) ([]heldRow, float64) {
	read := make(map[*liveKey]bool, len(rows))
	for _, r := range rows {
		read[r.k] = true
	}
	tau := fs.base.tau
	for _, k := range fs.base.keys {
		if !k.held.top && !read[k] {
			tau = max(tau, k.held.prio)
		}
	}
	var out []heldRow
	for _, r := range rows {
		h := r.k.held
		switch {
		case !r.k.base.set || !r.rated:
		case h.top:
			out = append(out, heldRow{k: r.k, rate: r.rate, p: 1, top: true})
		case h.prio > tau:
			out = append(out, heldRow{k: r.k, rate: r.rate, p: chance(h.w, tau)})
		}
	}
	return out, tau
}

// heldRate is the rate's estimate over the span since the base read from the rows heldRows
// counts (at threshold tau), for a window a sweep has counted whole.
func heldRate(held []heldRow, tau float64) htSum {
	var rate htSum
	for _, h := range held {
		if h.top {
			rate.exact(h.rate)
		} else {
			rate.add(h.rate, h.k.held.w, tau)
		}
	}
	return rate
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
