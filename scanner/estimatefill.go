package scanner

import (
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// problemFig is the figure of each problem, in problem index order.
var problemFig = [numProblems]int{
	probNoTTL: figNoTTL, probOverRetention: figOverRetention, probExpired: figExpired,
	probWrongType: figWrongType, probNotInteger: figNotInteger,
}

// noteEst adds y to the family's figure what, and to all families' (fam -1), for the page
// being added.
func (fa *famAgg) noteEst(e *estAgg, what int, y float64) {
	e.note(figID{fam: fa.idx, what: what}, y)
	e.note(figID{fam: -1, what: what}, y)
}

// fillEstimates scales the families of a Snapshot of a sweep under way to the whole keyspace:
// every count and total becomes an estimate, with its Estimate
// beside it; what cannot be scaled (a top list, a maximum) stays what was seen so far, and the
// reconciliation, which needs every hour and day of a tuple, waits for a complete sweep.
func (a *Aggregator) fillEstimates(snap *snapshot.Snapshot, now time.Time) {
	e := a.est
	for _, fa := range a.order {
		fs := &snap.Counters[fa.idx]
		fs.Keys, fs.KeysEstimate = e.count(figID{fam: fa.idx, what: figKeys})
		var te snapshot.TTLEstimates
		for _, c := range []struct {
			what int
			n    *int64
			est  *snapshot.Estimate
		}{
			{figTTLOK, &fs.TTL.OK, &te.OK}, {figNoTTL, &fs.TTL.NoTTL, &te.NoTTL},
			{figOverRetention, &fs.TTL.OverRetention, &te.OverRetention},
			{figExpired, &fs.TTL.ExpiredButPresent, &te.ExpiredButPresent},
		} {
			var est *snapshot.Estimate
			*c.n, est = e.count(figID{fam: fa.idx, what: c.what})
			*c.est = *est
		}
		fs.TTLEstimate = &te
		fillProblems(&fs.Health, e, fa.idx)
		fs.WrongType, fs.NotInteger = fs.Health.WrongType.Keys, fs.Health.NotInteger.Keys
		totals := map[winKey]int64{}
		for i := range fs.Windows {
			ws := &fs.Windows[i]
			wk := winKey{granularityOf(ws.Granularity), ws.Start.Unix()}
			ws.Keys, ws.KeysEstimate = e.count(figID{fam: fa.idx, what: figWinKeys, win: wk})
			if !ws.Saturated {
				ws.Total, ws.TotalEstimate = e.total(figID{fam: fa.idx, what: figWinTotal, win: wk})
			}
			totals[wk] = ws.Total
		}
		loc := fa.f.Zone(a.opt.Location)
		fs.Series = fa.seriesOf(now, loc, func(wk winKey, w *winAgg) (int64, bool) {
			t, sat := w.total.Int64()
			if est, ok := totals[wk]; ok && !sat {
				t = est
			}
			return t, sat
		})
		fs.Series.Estimated = true
		if cur := fs.CurrentWindow("hour"); cur != nil {
			setHourAvg(fs, true, float64(cur.Total), now.Sub(cur.Start).Seconds())
		}
		fs.Reconciliation, fs.MismatchedDims = nil, 0
	}
}

// fillProblems scales the health's problem counts of family fam (-1: all), and the memory they
// hold with them.
func fillProblems(h *snapshot.Health, e *estAgg, fam int) {
	for i, p := range h.Problems()[:numProblems] {
		seen := p.Keys
		p.Keys, p.KeysEstimate = e.count(figID{fam: fam, what: problemFig[i]})
		if seen > 0 && p.Bytes > 0 {
			p.Bytes = int64(float64(p.Bytes) / float64(seen) * float64(p.Keys))
		}
	}
}

func granularityOf(name string) store.Granularity {
	if name == store.Day.String() {
		return store.Day
	}
	return store.Hour
}
