package scanner

import (
	"math"
	"time"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// What a sweep under way scales, per family (and per window): each is one figure of the
// sample, summed per cluster of keys.
const (
	figKeys = iota
	figTTLOK
	figNoTTL
	figOverRetention
	figExpired
	figWrongType
	figNotInteger
	figWinKeys  // a window's keys
	figWinTotal // a window's total
	figMatched  // the scan's family keys (fam is -1)
)

// figID names one figure: what, of which family (its index in the Aggregator's order) and, for
// the window figures, which window.
type figID struct {
	fam  int
	what int
	win  winKey
}

// estAgg keeps the sums the estimates of a sweep under way are made from: per master (a stratum,
// swept on its own), the clusters of keys seen and each figure's sums over them. A cluster is a
// page, or a run of pages in one hash slot. What it holds is bounded by the figures (the
// families and their windows) and the masters, never by the number of keys.
type estAgg struct {
	strata map[string]*stratum
	cur    *stratum
	page   map[figID]float64 // the page being added: each figure's sum over its keys
	prog   Progress
}

type stratum struct {
	frame estimate.Frame
	sums  map[figID]*estimate.Sum
	// open is the cluster still growing: the last page, or the run of pages in one hash slot
	// it ends; it is added to the sums when the next page begins elsewhere.
	open struct {
		keys float64
		y    map[figID]float64
		last int // the hash slot it ends in, -1 on a standalone server
	}
}

func newEstAgg() *estAgg {
	return &estAgg{strata: map[string]*stratum{}, page: map[figID]float64{}}
}

// begin starts a page of master; the figures noted until end are its keys'.
func (e *estAgg) begin(p *Page) {
	addr := p.master
	if addr == "" && len(p.SeenBy) == 1 {
		for a := range p.SeenBy {
			addr = a
		}
	}
	st := e.strata[addr]
	if st == nil {
		st = &stratum{sums: map[figID]*estimate.Sum{}}
		st.open.y = map[figID]float64{}
		st.open.last = -1
		e.strata[addr] = st
	}
	e.cur = st
	clear(e.page)
}

// note adds y to figure id for the page being added.
func (e *estAgg) note(id figID, y float64) { e.page[id] += y }

// end adds the page: to the open cluster when it continues that cluster's hash slot (or SCAN
// returned no key in it), else as a new cluster, closing the open one.
func (e *estAgg) end(p *Page) {
	st := e.cur
	continues := p.Seen == 0 || (p.firstSlot >= 0 && p.firstSlot == st.open.last)
	if !continues {
		st.close()
	}
	st.open.keys += float64(p.Seen)
	for id, y := range e.page {
		st.open.y[id] += y
	}
	if p.Seen > 0 {
		st.open.last = p.lastSlot
	}
}

// close adds the open cluster to the stratum's sums.
func (st *stratum) close() {
	if st.open.keys == 0 && len(st.open.y) == 0 {
		return
	}
	st.frame.Add(st.open.keys)
	for id, y := range st.open.y {
		s := st.sums[id]
		if s == nil {
			s = &estimate.Sum{}
			st.sums[id] = s
		}
		s.Add(st.open.keys, y)
	}
	st.open.keys = 0
	clear(st.open.y)
}

// figure estimates one figure over every master, with the open clusters counted as closed.
func (e *estAgg) figure(id figID) snapshot.Estimate {
	var strata []estimate.Stratum
	for addr, st := range e.strata {
		fr := st.frame
		var sum estimate.Sum
		if s := st.sums[id]; s != nil {
			sum = *s
		}
		if st.open.keys > 0 || st.open.y[id] != 0 {
			fr.Add(st.open.keys)
			sum.Add(st.open.keys, st.open.y[id])
		}
		mp := e.prog.Masters[addr]
		strata = append(strata, estimate.Stratum{Frame: fr, Sum: sum, Population: float64(mp.DBSize), Done: mp.Done})
	}
	for addr, mp := range e.prog.Masters {
		if e.strata[addr] == nil {
			// A master no page has come from yet: nothing of it is known, so neither is the total.
			strata = append(strata, estimate.Stratum{Population: float64(mp.DBSize), Done: mp.Done})
		}
	}
	return estimate.Show(e.coverage(), strata...)
}

// count is figure's estimate of a count of keys: never below what was seen, and the rounded
// figure to show beside it.
func (e *estAgg) count(id figID) (int64, *snapshot.Estimate) {
	est := e.figure(id).AtLeastSeen()
	return clampInt64(est.Estimate), &est
}

// total is figure's estimate of a sum of values, and the rounded figure to show beside it.
func (e *estAgg) total(id figID) (int64, *snapshot.Estimate) {
	est := e.figure(id)
	return clampInt64(est.Estimate), &est
}

// coverage is the share of the keys the masters hold that the sweep has seen, 0 when unknown.
func (e *estAgg) coverage() float64 {
	var keys, pop float64
	for addr, st := range e.strata {
		keys += st.frame.Keys + st.open.keys
		mp, ok := e.prog.Masters[addr]
		if !ok || mp.DBSize <= 0 {
			if !mp.Done {
				return 0
			}
		}
		pop += math.Max(float64(mp.DBSize), st.frame.Keys+st.open.keys)
	}
	for addr, mp := range e.prog.Masters {
		if e.strata[addr] != nil {
			continue
		}
		if mp.DBSize <= 0 && !mp.Done {
			return 0
		}
		pop += float64(mp.DBSize) // a master no page has come from yet
	}
	if pop <= 0 {
		return 0
	}
	return math.Min(keys/pop, 1)
}

func clampInt64(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(v))
}

// SetProgress tells the Aggregator how far its sweep has come on each master (Sweep.Progress):
// the Snapshot of a sweep under way scales what it saw by the keys the masters hold.
func (a *Aggregator) SetProgress(p Progress) { a.est.prog = p }

// scanProgress fills the scan's coverage, its masters' and its ETA for a sweep under way.
func (a *Aggregator) scanProgress(sc *snapshot.ScanStats, now time.Time) {
	sc.DBSizeNote = a.est.prog.Note
	var pop int64
	known := len(a.est.prog.Masters) > 0
	for i := range sc.Masters {
		m := &sc.Masters[i]
		mp := a.est.prog.Masters[m.Addr]
		m.DBSize, m.Done = mp.DBSize, mp.Done
		m.Coverage = coverageOf(m.KeysSeen, mp)
	}
	for _, mp := range a.est.prog.Masters {
		if mp.DBSize <= 0 && !mp.Done {
			known = false
		}
		pop += mp.DBSize
	}
	if sc.Complete {
		sc.Coverage = 1
		return
	}
	if !known || pop <= 0 {
		return
	}
	sc.Coverage = math.Min(float64(sc.KeysSeen)/float64(pop), 1)
	if elapsed := now.Sub(a.start).Seconds(); !a.start.IsZero() && elapsed >= 1 && sc.KeysSeen > 0 {
		left := math.Max(float64(pop-sc.KeysSeen), 0)
		eta := left / (float64(sc.KeysSeen) / elapsed)
		sc.ETASeconds = &eta
	}
}

func coverageOf(seen int64, mp MasterProgress) float64 {
	switch {
	case mp.Done:
		return 1
	case mp.DBSize <= 0:
		return 0
	}
	return math.Min(float64(seen)/float64(mp.DBSize), 1)
}
