package bench

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// coverageRuns sweeps the keyspace with no budget at the shipped COUNT, folding each page into
// an Aggregator, and at each of scaleCoverages takes the Snapshot of the sweep under way (as a
// console's Status.Partial is made) and sets its estimates beside the exact figures. The sweep
// stops after the last coverage.
func coverageRuns(ctx context.Context, opt ScaleOptions, rdb redis.UniversalClient, fams []*scaleFam, exacts []*exact,
	total int64) ([]CoverageRun, error) {
	families := make([]*store.Family, len(fams))
	for i, sf := range fams {
		families[i] = sf.fam
	}
	so := scanner.Options{Count: opt.Defaults.Scan.Count, Location: time.UTC}
	sw := scanner.New(rdb, families, so)
	agg := scanner.NewAggregator(families, so)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var runs []CoverageRun
	var seen int64
	start := time.Now()
	err := sw.Run(ctx, func(p scanner.Page) {
		agg.Add(p)
		seen += int64(p.Seen)
		if len(runs) == len(scaleCoverages) || float64(seen) < scaleCoverages[len(runs)]*float64(total) {
			return
		}
		agg.SetProgress(sw.Progress())
		snap := agg.Snapshot(false)
		run := CoverageRun{Target: scaleCoverages[len(runs)], Coverage: snap.Scan.Coverage, Seconds: since(start)}
		run.evaluate(snap, fams, exacts)
		runs = append(runs, run)
		if len(runs) == len(scaleCoverages) {
			cancel()
		}
	})
	if err != nil && !(errors.Is(err, context.Canceled) && len(runs) == len(scaleCoverages)) {
		return nil, err
	}
	if len(runs) < len(scaleCoverages) {
		return nil, errors.New("the sweep ended before the last coverage")
	}
	return runs, nil
}

// evaluate sets the main families' figures and the trials' of snap against the exact values.
func (run *CoverageRun) evaluate(snap *snapshot.Snapshot, fams []*scaleFam, exacts []*exact) {
	var keys, totals, tagged, plain []ScaleFigure
	for i, sf := range fams {
		figs := familyFigures(snap, sf, exacts[i])
		if !sf.trial {
			run.Figures = append(run.Figures, figs...)
			continue
		}
		keys, totals = append(keys, figs[0]), append(totals, figs[1:]...)
		if sf.tagged {
			tagged = append(tagged, figs...)
		} else {
			plain = append(plain, figs...)
		}
	}
	run.Keys, run.Totals = trialStats(keys), trialStats(totals)
	run.Tagged, run.Plain = trialStats(tagged), trialStats(plain)
}

// familyFigures is a family's keys, then each of its current windows' total, as estimated in
// snap beside the exact values.
func familyFigures(snap *snapshot.Snapshot, sf *scaleFam, ex *exact) []ScaleFigure {
	name := sf.fam.Name()
	fs := snap.Family(name)
	out := []ScaleFigure{figureOf(name, "keys", ex.Keys, fs.Keys, fs.KeysEstimate)}
	for _, w := range sf.windows {
		if !w.current {
			continue
		}
		label := w.w.Granularity.String() + " " + w.name + " total"
		var got int64
		var est *snapshot.Estimate
		for _, ws := range fs.Windows {
			if ws.Window == w.name && ws.Granularity == w.w.Granularity.String() {
				got, est = ws.Total, ws.TotalEstimate
			}
		}
		out = append(out, figureOf(name, label, ex.Windows[w.name].Total, got, est))
	}
	return out
}

// figureOf sets an estimate beside the exact value; with no estimate (a window not seen), the
// figure is what was seen, with no interval.
func figureOf(family, figure string, exact, shown int64, est *snapshot.Estimate) ScaleFigure {
	f := ScaleFigure{Family: family, Figure: figure, Exact: exact, Estimate: float64(shown), Low: float64(shown)}
	if est != nil {
		f.Estimate, f.Low, f.High = est.Estimate, est.Low, est.High
	}
	if exact != 0 && f.High != nil {
		f.RelError = ptr((f.Estimate - float64(exact)) / float64(exact))
	}
	f.Inside = f.High != nil && f.Low <= float64(exact) && float64(exact) <= *f.High
	return f
}

// trialStats counts the trials whose interval holds the exact value, of those with one.
func trialStats(figs []ScaleFigure) TrialStats {
	st := TrialStats{Trials: len(figs)}
	var errs []float64
	for _, f := range figs {
		if f.High == nil {
			continue
		}
		if f.RelError != nil {
			errs = append(errs, math.Abs(*f.RelError))
		}
		st.WithInterval++
		if f.Inside {
			st.Inside++
		}
	}
	if st.WithInterval > 0 {
		st.HitRate = ptr(float64(st.Inside) / float64(st.WithInterval))
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		st.MedianAbsErr, st.MaxAbsErr = errs[len(errs)/2], errs[len(errs)-1]
	}
	return st
}

// settle computes the goals from the figures measured.
func (r *ScaleReport) settle() {
	g := &r.Goals
	var first, hits []*bool
	for _, sv := range r.Servers {
		first = append(first, atMost(sv.Console.FirstFigures, goalFirstFigures))
		for _, run := range sv.Coverage {
			for _, st := range []TrialStats{run.Keys, run.Totals} {
				var ok *bool
				if st.HitRate != nil {
					ok = ptr(*st.HitRate >= goalHitRate)
				}
				hits = append(hits, ok)
			}
		}
	}
	g.FirstFigures, g.HitRate, g.LiveHits = allOf(first), allOf(hits), liveHitGoal(r.Servers)
	if len(r.Servers) == 0 {
		return
	}
	one := r.Servers[0]
	g.ConsoleCPU = ptr(one.Console.CPUOverIdle < goalConsoleCPU)
	if lr := one.LiveRate; lr != nil && lr.RelError != nil {
		g.LiveRate = ptr(math.Abs(*lr.RelError) <= goalLiveRate)
	}
	for _, run := range one.Coverage {
		if run.Target != 0.05 {
			continue
		}
		ok := true
		for _, f := range run.Figures {
			ok = ok && f.RelError != nil && math.Abs(*f.RelError) <= goalTotalsAt5
		}
		g.TotalsAt5 = &ok
	}
}

// allOf is false when one is false, else nil when one is unknown (or there are none), else true.
func allOf(vs []*bool) *bool {
	known := len(vs) > 0
	for _, v := range vs {
		if v != nil && !*v {
			return ptr(false)
		}
		known = known && v != nil
	}
	if !known {
		return nil
	}
	return ptr(true)
}
