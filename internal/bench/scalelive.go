package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// liveFamily is the scale family the live rate is measured on: pv, the largest, whose current
// window is the hour the console's THIS HOUR and RATE/S show.
const liveFamily = "pv"

// The live rate's measure by default: events a second injected into pv and into each trial
// family, for how long after the warm-up (a quarter of it), and the most --scale takes.
const (
	defaultLiveRate = 5000.0
	liveTrialRate   = 100.0
	defaultLiveFor  = 40 * time.Second
	maxLiveRate     = 1e6
)

// goalLiveRate is how near the live rate's median must come to the true rate.
const goalLiveRate = 0.05

// LiveRateCheck is a known rate of counter events injected into the keys of a family's current
// window while the console polls at the defaults, beside the live rate and this hour's total the
// polls showed; and the same of every family written into, as trials.
type LiveRateCheck struct {
	Family string `json:"family"`
	Window string `json:"window"`
	// WindowKeys is the window's keys, as written; Keys the ones written to: every one of them.
	WindowKeys int64 `json:"window_keys"`
	Keys       int   `json:"keys_written"`
	// AskedPerSec is the rate the writer was asked for; TruePerSec the events it delivered
	// (its own count, bracketed by its flushes' start and return) over the span measured, a
	// second and a warm-up after it began, over that span.
	AskedPerSec   float64 `json:"asked_per_sec"`
	WarmupSeconds float64 `json:"warmup_seconds"`
	Seconds       float64 `json:"seconds"`
	Events        int64   `json:"events"`
	TruePerSec    float64 `json:"true_per_sec"`
	// Polls is the console's polls read in the span; WithRate those that showed a rate.
	Polls    int `json:"polls"`
	WithRate int `json:"polls_with_rate"`
	// MedianPerSec, MinPerSec and MaxPerSec are of the rates the polls showed; RelError is
	// (median − true) ÷ true. Nil when no poll showed a rate.
	MedianPerSec *float64 `json:"median_per_sec"`
	MinPerSec    *float64 `json:"min_per_sec"`
	MaxPerSec    *float64 `json:"max_per_sec"`
	RelError     *float64 `json:"rel_error"`
	// HalfWidth is the median of the polls' 95% intervals' half widths, relative to their rate.
	HalfWidth *float64 `json:"median_rel_half_width"`
	// Inside is the polls whose 95% interval held the true rate over their own span (from
	// LiveFamily.RateSince to ReadAt, by the writer's count), and HitRate that over WithRate.
	Inside  int      `json:"inside"`
	HitRate *float64 `json:"hit_rate"`
	// WithTotal is the polls that showed this hour's total now, TotalInside those whose 95%
	// interval held the true total at their read (the hour's total as loaded, and the writer's
	// events since), TotalHitRate that over WithTotal, and TotalHalfWidth the median half width.
	WithTotal      int      `json:"polls_with_total"`
	TotalInside    int      `json:"total_inside"`
	TotalHitRate   *float64 `json:"total_hit_rate"`
	TotalHalfWidth *float64 `json:"median_total_rel_half_width"`
	// KeysRead is the median of the keys a poll read live (the exact and the sampled), and
	// SpanSeconds of the spans their rates were measured over. Swept is the share of the keys
	// the sweeps had walked since the hour began at the last poll, and Note its note.
	KeysRead    int     `json:"median_keys_read"`
	SpanSeconds float64 `json:"median_rate_span_seconds"`
	Swept       float64 `json:"swept"`
	Note        string  `json:"note,omitempty"`
	// Trials is every family written into (pv and the trial families), each once, at the last
	// poll: the rates and this hour's totals whose intervals held the truth.
	Trials LiveTrials `json:"trials"`
}

// LiveTrials is the live figures of the families written into at the measure's last poll, beside
// the truth: each family's rate over its own span, and its current hour's total at its read.
type LiveTrials struct {
	Families    int        `json:"families"`
	TrialPerSec float64    `json:"trial_asked_per_sec"`
	Rates       TrialStats `json:"rates"`
	Totals      TrialStats `json:"totals"`
}

// liveRateAtDefaults measures the console's live figures against known ones: it writes
// opt.LiveRate events a second into every key of liveFamily's current hour, and liveTrialRate
// into each trial family's, with the store's batch writer on a client of its own (addrs), while
// it polls the console on, and sets each poll's figures beside the writer's own count. It says
// why when it cannot measure (the hour the keys were written in has ended or ends within the
// measure, the writer failed); err is for what ends the run.
func liveRateAtDefaults(ctx context.Context, opt ScaleOptions, cp *consolePoll, addrs []string,
	fams []*scaleFam, exacts []*exact, total int64) (*LiveRateCheck, string, error) {
	cur := fams[0].windows[0] // every family's current hour is the same
	warmup := opt.LiveFor / 4
	switch left := time.Until(cur.w.End); {
	case left <= 0:
		return nil, "not measured: the hour the keys were written in (" + cur.name + ") has ended", nil
	case left < warmup+opt.LiveFor+10*time.Second:
		return nil, fmt.Sprintf("not measured: the hour the keys were written in (%s) ends within the measure, %v left", cur.name,
			left.Truncate(time.Second)), nil
	}
	targets, err := liveTargets(fams, total, opt.LiveRate)
	if err != nil {
		return nil, "", err
	}
	i := slices.IndexFunc(fams, func(sf *scaleFam) bool { return sf.fam.Name() == liveFamily })
	check := &LiveRateCheck{Family: liveFamily, Window: cur.name, WindowKeys: exacts[i].Windows[cur.name].Keys, Keys: len(targets[0].tuples),
		AskedPerSec: opt.LiveRate, WarmupSeconds: warmup.Seconds()}
	wdb := scaleClient(addrs)
	defer wdb.Close()
	s := store.New(wdb, store.Options{Location: time.UTC})
	if err := s.Init(ctx); err != nil {
		return nil, "", err
	}
	lw := &liveWriter{}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { lw.run(wctx, s, targets) })
	began := time.Now()
	polls, last, err := pollLive(ctx, cp, began.Add(warmup), began.Add(warmup+opt.LiveFor), cur.w.Start)
	end := time.Now()
	stop()
	wg.Wait()
	switch {
	case err != nil:
		return nil, "", err
	case lw.err != nil:
		return nil, "not measured: the writer failed: " + lw.err.Error(), nil
	case polls == nil:
		return nil, "not measured: the hour " + cur.name + " ended during the measure", nil
	}
	truth := liveTruth{lw: lw, targets: targets, loaded: func(j int) float64 {
		return float64(exacts[slices.Index(fams, targets[j].sf)].Windows[cur.name].Total)
	}}
	check.settle(truth, polls, began.Add(warmup), end)
	check.Trials = truth.trials(last)
	return check, "", nil
}

// liveTargets is pv, then each trial family, with its current hour's tuples and rate.
func liveTargets(fams []*scaleFam, total int64, rate float64) ([]liveTarget, error) {
	var out []liveTarget
	for i, sf := range fams {
		r := liveTrialRate
		switch {
		case sf.fam.Name() == liveFamily:
			r = rate
		case !sf.trial:
			continue
		}
		tuples, err := currentTuples(sf, i, total)
		if err != nil {
			return nil, err
		}
		if len(tuples) > 0 {
			out = append(out, liveTarget{sf: sf, tuples: tuples, rate: r})
		}
	}
	if len(out) == 0 || out[0].sf.fam.Name() != liveFamily {
		return nil, fmt.Errorf("bench: no %s key was written in the current hour", liveFamily)
	}
	return out, nil
}

// pollLive polls the console as it polls (a poll sweeps for the refresh; the next begins when it
// is back, or when the refresh has passed if it ended early), until to, and returns liveFamily's
// live reads of the polls from from on, and the last poll's reads of every family; nil when the
// family's current window is no longer the one starting at window.
func pollLive(ctx context.Context, cp *consolePoll, from, to, window time.Time) ([]snapshot.LiveFamily, []snapshot.LiveFamily, error) {
	polls := []snapshot.LiveFamily{}
	var last []snapshot.LiveFamily
	for time.Now().Before(to) {
		began := time.Now()
		st, err := cp.poll(ctx)
		if err != nil {
			return nil, nil, err
		}
		if lf := st.LiveFamily(liveFamily); lf != nil && !lf.ReadAt.Before(from) && !lf.ReadAt.After(to) {
			if !lf.WindowStart.Equal(window) {
				return nil, nil, nil
			}
			polls = append(polls, *lf)
			last = st.Families
		}
		if err := store.Sleep(ctx, min(cp.refresh-time.Since(began), time.Until(to))); err != nil {
			return nil, nil, err
		}
	}
	return polls, last, nil
}

// liveTruth is what the writer delivered into each target, beside the hour's total as loaded.
type liveTruth struct {
	lw      *liveWriter
	targets []liveTarget
	loaded  func(j int) float64
}

// rate is target j's true rate from t0 to t1, by the writer's count (the middle of its bracket).
func (lt liveTruth) rate(j int, t0, t1 time.Time) float64 {
	lo, hi := lt.lw.between(j, t0, t1)
	return (lo + hi) / 2 / t1.Sub(t0).Seconds()
}

// total is target j's current hour's true total at t.
func (lt liveTruth) total(j int, t time.Time) float64 {
	lo, hi := lt.lw.by(j, t)
	return lt.loaded(j) + (lo+hi)/2
}

// settle sets liveFamily's polls beside the writer's count: over the span measured, from to end,
// and each poll's figures at its own read.
func (c *LiveRateCheck) settle(lt liveTruth, polls []snapshot.LiveFamily, from, end time.Time) {
	c.Seconds = end.Sub(from).Seconds()
	lo, hi := lt.lw.between(0, from, end)
	c.Events = int64(math.Round((lo + hi) / 2))
	c.TruePerSec = (lo + hi) / 2 / c.Seconds
	c.Polls = len(polls)
	var rates, widths, spans, totalWidths []float64
	var read []int
	for _, lf := range polls {
		read = append(read, lf.Top+lf.Sampled)
		c.Swept, c.Note = lf.Swept, lf.Note
		if t := lf.Total; t != nil {
			c.WithTotal++
			totalWidths = append(totalWidths, t.RelHalfWidth())
			if truth := lt.total(0, lf.ReadAt); t.Low <= truth && truth <= t.High {
				c.TotalInside++
			}
		}
		r := lf.RatePerSec
		if r == nil {
			continue
		}
		c.WithRate++
		if truth := lt.rate(0, lf.RateSince, lf.ReadAt); r.Low <= truth && truth <= r.High {
			c.Inside++
		}
		rates, widths, spans = append(rates, r.Estimate), append(widths, r.RelHalfWidth()), append(spans, lf.ReadAt.Sub(lf.RateSince).Seconds())
	}
	if len(read) > 0 {
		slices.Sort(read)
		c.KeysRead = read[len(read)/2]
	}
	if c.WithTotal > 0 {
		_, w, _ := spread(totalWidths)
		c.TotalHalfWidth, c.TotalHitRate = &w, ptr(float64(c.TotalInside)/float64(c.WithTotal))
	}
	if len(rates) == 0 {
		return
	}
	c.MinPerSec, c.MedianPerSec, c.MaxPerSec = spreadOf(rates)
	_, width, _ := spread(widths)
	_, c.SpanSeconds, _ = spread(spans)
	c.HalfWidth = &width
	c.HitRate = ptr(float64(c.Inside) / float64(c.WithRate))
	if c.TruePerSec > 0 {
		c.RelError = ptr(*c.MedianPerSec/c.TruePerSec - 1)
	}
}

// trials sets each target's live figures of the last poll beside its truth.
func (lt liveTruth) trials(last []snapshot.LiveFamily) LiveTrials {
	out := LiveTrials{Families: len(lt.targets), TrialPerSec: liveTrialRate}
	var rates, totals []ScaleFigure
	for j, tg := range lt.targets {
		name := tg.sf.fam.Name()
		rate, total := ScaleFigure{Family: name, Figure: "rate"}, ScaleFigure{Family: name, Figure: "hour total now"}
		for i := range last {
			if lf := &last[i]; lf.Family == name {
				if r := lf.RatePerSec; r != nil {
					rate = liveFigure(rate, r.Estimate, r.Low, r.High, lt.rate(j, lf.RateSince, lf.ReadAt))
				}
				if t := lf.Total; t != nil {
					total = liveFigure(total, t.Estimate, t.Low, t.High, lt.total(j, lf.ReadAt))
				}
			}
		}
		rates, totals = append(rates, rate), append(totals, total)
	}
	out.Rates, out.Totals = trialStats(rates), trialStats(totals)
	return out
}

// liveFigure sets a live figure (an estimate and its 95% interval) beside its truth.
func liveFigure(f ScaleFigure, est, low, high, truth float64) ScaleFigure {
	f.Exact, f.Estimate, f.Low, f.High = int64(math.Round(truth)), est, low, &high
	if truth != 0 {
		f.RelError = ptr((est - truth) / truth)
	}
	f.Inside = low <= truth && truth <= high
	return f
}

// liveHitGoal says whether, on every keyspace measured, the live trials' rates and this hour's
// totals held the truth in at least goalHitRate of those with an interval; nil when a keyspace's
// were not measured, or none had an interval.
func liveHitGoal(servers []ScaleServer) *bool {
	var oks []*bool
	for _, sv := range servers {
		if sv.LiveRate == nil {
			oks = append(oks, nil)
			continue
		}
		for _, st := range []TrialStats{sv.LiveRate.Trials.Rates, sv.LiveRate.Trials.Totals} {
			var ok *bool
			if st.HitRate != nil {
				ok = ptr(*st.HitRate >= goalHitRate)
			}
			oks = append(oks, ok)
		}
	}
	return allOf(oks)
}
