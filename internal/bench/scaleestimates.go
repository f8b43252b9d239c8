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

// scaleSweptTo is how far the coverages' sweep goes. Each coverage's trials are taken in as many
// disjoint stretches of it as fit: 60 at 1%, 12 at 5% and 3 at 20%, so 3,000, 600 and 150 trials
// of each figure. Fifty trials alone (one stretch) would miss a goal of 90% about once in 26
// times with intervals that hold the truth 95% of the time, and one of twelve cells often.
const scaleSweptTo = 0.6

// coverageRuns sweeps the keyspace with no budget at the shipped COUNT to scaleSweptTo of its
// keys. Each coverage has an Aggregator fed the pages since its last stretch ended, as a sweep
// begun there would read them (SCAN from a cursor reads the buckets after it; only the first
// page's COUNT differs). When a stretch has seen the coverage's share of the keys, its Snapshot is
// taken as a console's Status.Partial is made, and its estimates are set beside the exact
// figures. The first stretch of each coverage is the sweep from its start, whose main families'
// figures are reported.
func coverageRuns(ctx context.Context, opt ScaleOptions, rdb redis.UniversalClient, fams []*scaleFam, exacts []*exact,
	total int64) ([]CoverageRun, error) {
	families := make([]*store.Family, len(fams))
	for i, sf := range fams {
		families[i] = sf.fam
	}
	so := scanner.Options{Count: opt.Defaults.Scan.Count, Location: time.UTC}
	sw := scanner.New(rdb, families, so)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stretches := make([]*coverageStretches, len(scaleCoverages))
	for i, c := range scaleCoverages {
		stretches[i] = &coverageStretches{target: c, want: int(math.Round(scaleSweptTo / c)),
			newAgg: func() *scanner.Aggregator { return scanner.NewAggregator(families, so) }}
		stretches[i].agg = stretches[i].newAgg()
	}
	start := time.Now()
	err := sw.Run(ctx, func(p scanner.Page) {
		done := true
		for _, cs := range stretches {
			cs.add(p, sw, fams, exacts, total, start)
			done = done && cs.over()
		}
		if done {
			cancel()
		}
	})
	var runs []CoverageRun
	for _, cs := range stretches {
		if cs.over() && cs.run.Windows > 0 {
			runs = append(runs, cs.result())
		}
	}
	if err != nil && !(errors.Is(err, context.Canceled) && len(runs) == len(scaleCoverages)) {
		return nil, err
	}
	if len(runs) < len(scaleCoverages) {
		return nil, errors.New("the sweep ended before the last coverage")
	}
	return runs, nil
}

// coverageStretches are one coverage's stretches of the sweep: the one under way, and the
// trials of those done.
type coverageStretches struct {
	target float64
	want   int // stretches to take
	newAgg func() *scanner.Aggregator
	agg    *scanner.Aggregator
	seen   int64
	ended  bool // a master was swept to its end: a later stretch would lack its stratum
	run    CoverageRun
	// keys, totals, tagged and plain are the trials of every stretch done.
	keys, totals, tagged, plain []ScaleFigure
}

func (cs *coverageStretches) over() bool { return cs.ended || cs.run.Windows >= cs.want }

// add folds a page into the stretch under way, and ends it when it has seen its share.
func (cs *coverageStretches) add(p scanner.Page, sw *scanner.Sweep, fams []*scaleFam, exacts []*exact, total int64, start time.Time) {
	if cs.over() {
		return
	}
	cs.agg.Add(p)
	cs.seen += int64(p.Seen)
	if float64(cs.seen) < cs.target*float64(total) {
		return
	}
	prog := sw.Progress()
	anyDone := false
	if cs.run.Windows > 0 {
		// A later stretch's pages of a master swept to its end meanwhile are the tail of its
		// walk: a sample of it still, not the whole of it.
		for addr, mp := range prog.Masters {
			anyDone = anyDone || mp.Done
			mp.Done = false
			prog.Masters[addr] = mp
		}
	}
	cs.agg.SetProgress(prog)
	snap := cs.agg.Snapshot(false)
	if cs.run.Windows > 0 && len(prog.Masters) > 1 && len(snap.Scan.Masters) < len(prog.Masters) {
		// A master gave no page in this stretch: it is no trial. If a master was swept to its
		// end, no later stretch holds a sample of it.
		cs.ended = anyDone
		cs.agg, cs.seen = cs.newAgg(), 0
		return
	}
	main, trials := evaluate(snap, fams, exacts)
	if cs.run.Windows == 0 {
		cs.run = CoverageRun{Target: cs.target, Coverage: snap.Scan.Coverage, Seconds: since(start), Figures: main}
	}
	cs.run.Windows++
	cs.keys, cs.totals = append(cs.keys, trials.keys...), append(cs.totals, trials.totals...)
	cs.tagged, cs.plain = append(cs.tagged, trials.tagged...), append(cs.plain, trials.plain...)
	cs.agg, cs.seen = cs.newAgg(), 0
}

// result is the coverage's run, its trials over every stretch.
func (cs *coverageStretches) result() CoverageRun {
	run := cs.run
	run.Keys, run.Totals = trialStats(cs.keys), trialStats(cs.totals)
	run.Tagged, run.Plain = trialStats(cs.tagged), trialStats(cs.plain)
	return run
}

// stretchTrials are one stretch's trials: the trial families' keys and current hours' totals,
// and both split by whether the family's keys share hash tags.
type stretchTrials struct {
	keys, totals, tagged, plain []ScaleFigure
}

// evaluate sets the main families' figures and the trials' of snap against the exact values.
func evaluate(snap *snapshot.Snapshot, fams []*scaleFam, exacts []*exact) ([]ScaleFigure, stretchTrials) {
	var main []ScaleFigure
	var tr stretchTrials
	for i, sf := range fams {
		figs := familyFigures(snap, sf, exacts[i])
		if !sf.trial {
			main = append(main, figs...)
			continue
		}
		tr.keys, tr.totals = append(tr.keys, figs[0]), append(tr.totals, figs[1:]...)
		if sf.tagged {
			tr.tagged = append(tr.tagged, figs...)
		} else {
			tr.plain = append(tr.plain, figs...)
		}
	}
	return main, tr
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
		} else {
			st.Missed = append(st.Missed, f)
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
