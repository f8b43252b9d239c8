package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// liveFamily is the scale family the live rate is measured on: pv, the largest, whose current
// window is the hour the console's THIS HOUR and RATE/S show.
const liveFamily = "pv"

// The live rate's measure by default: events a second injected, for how long after the warm-up
// (a quarter of it), and the most --scale takes.
const (
	defaultLiveRate = 5000.0
	defaultLiveFor  = 40 * time.Second
	maxLiveRate     = 1e6
)

// goalLiveRate is how near the live rate's median must come to the true rate.
const goalLiveRate = 0.05

// LiveRateCheck is a known rate of counter events injected into keys of a family's current
// window while the console polls at the defaults, beside the live rate the polls showed.
type LiveRateCheck struct {
	Family string `json:"family"`
	Window string `json:"window"`
	// WindowKeys is the window's keys, as written; Keys the ones written to: every key of the
	// window the console's sweep had seen when the injection began (no new dims tuples).
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
	// Polls is the console's polls read in the span; WithRate those that showed a rate (a poll
	// after the sample changed shows none: its rate is measured from there).
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
	// KeysRead is the median of the keys a poll read live (the exact and the sampled), and
	// SpanSeconds of the spans their rates were measured over.
	KeysRead    int     `json:"median_keys_read"`
	SpanSeconds float64 `json:"median_rate_span_seconds"`
}

// liveRateAtDefaults measures the console's live rate against a known one: it finds the keys of
// liveFamily's current hour that the console's sweep has seen, writes opt.LiveRate events a
// second into them with the store's batch writer while it polls the console on, and sets each
// poll's rate beside the writer's own count over that poll's span. It says why when it cannot
// measure (the hour the keys were written in has ended or ends within the measure, the sweep has
// seen none of them, the writer failed); err is for what ends the run.
func liveRateAtDefaults(ctx context.Context, opt ScaleOptions, cp *consolePoll, rdb redis.UniversalClient, nodes []*redis.Client,
	addrs []string, fams []*scaleFam, exacts []*exact) (*LiveRateCheck, string, error) {
	i := slices.IndexFunc(fams, func(sf *scaleFam) bool { return sf.fam.Name() == liveFamily })
	sf := fams[i]
	cur := sf.windows[0] // the current hour
	warmup := opt.LiveFor / 4
	switch left := time.Until(cur.w.End); {
	case left <= 0:
		return nil, "not measured: the hour the keys were written in (" + cur.name + ") has ended", nil
	case left < warmup+opt.LiveFor+10*time.Second:
		return nil, fmt.Sprintf("not measured: the hour the keys were written in (%s) ends within the measure, %v left", cur.name,
			left.Truncate(time.Second)), nil
	}
	st, err := cp.poll(ctx)
	if err != nil {
		return nil, "", err
	}
	upTo := sweptSoFar(st, addrs)
	tuples, err := seenTuples(ctx, nodes, upTo, opt.Defaults.Scan.Count, sf.fam, cur.w, cur.name)
	if err != nil {
		return nil, "", err
	}
	if len(tuples) == 0 {
		return nil, "not measured: the console's sweep had seen none of the " + liveFamily + " keys of hour " + cur.name, nil
	}
	check := &LiveRateCheck{Family: liveFamily, Window: cur.name, WindowKeys: exacts[i].Windows[cur.name].Keys, Keys: len(tuples),
		AskedPerSec: opt.LiveRate, WarmupSeconds: warmup.Seconds()}
	s := store.New(rdb, store.Options{Location: time.UTC})
	if err := s.Init(ctx); err != nil {
		return nil, "", err
	}
	lw := &liveWriter{}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { lw.run(wctx, s, sf.fam, tuples, opt.LiveRate) })
	began := time.Now()
	polls, err := pollLive(ctx, cp, began.Add(warmup), began.Add(warmup+opt.LiveFor), cur.w.Start)
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
	check.settle(lw, polls, began.Add(warmup), end)
	return check, "", nil
}

// pollLive polls the console as it polls (a poll sweeps for the refresh; the next begins when it
// is back, or when the refresh has passed if it ended early), until to,
// and returns liveFamily's live reads of the polls from from on; nil when the family's current
// window is no longer the one starting at window.
func pollLive(ctx context.Context, cp *consolePoll, from, to, window time.Time) ([]snapshot.LiveFamily, error) {
	polls := []snapshot.LiveFamily{}
	for time.Now().Before(to) {
		began := time.Now()
		st, err := cp.poll(ctx)
		if err != nil {
			return nil, err
		}
		if lf := st.LiveFamily(liveFamily); lf != nil && !lf.ReadAt.Before(from) && !lf.ReadAt.After(to) {
			if !lf.WindowStart.Equal(window) {
				return nil, nil
			}
			polls = append(polls, *lf)
		}
		if err := store.Sleep(ctx, min(cp.refresh-time.Since(began), time.Until(to))); err != nil {
			return nil, err
		}
	}
	return polls, nil
}

// settle sets the polls' rates beside the writer's count: over the span measured, from to end,
// and over each poll's own span.
func (c *LiveRateCheck) settle(lw *liveWriter, polls []snapshot.LiveFamily, from, end time.Time) {
	c.Seconds = end.Sub(from).Seconds()
	lo, hi := lw.between(from, end)
	c.Events = int64(math.Round((lo + hi) / 2))
	c.TruePerSec = (lo + hi) / 2 / c.Seconds
	c.Polls = len(polls)
	var rates, widths, spans []float64
	var read []int
	for _, lf := range polls {
		read = append(read, lf.Top+lf.Sampled)
		r := lf.RatePerSec
		if r == nil {
			continue
		}
		c.WithRate++
		span := lf.ReadAt.Sub(lf.RateSince).Seconds()
		lo, hi := lw.between(lf.RateSince, lf.ReadAt)
		if truth := (lo + hi) / 2 / span; r.Low <= truth && truth <= r.High {
			c.Inside++
		}
		rates, widths, spans = append(rates, r.Estimate), append(widths, r.RelHalfWidth()), append(spans, span)
	}
	if len(read) > 0 {
		slices.Sort(read)
		c.KeysRead = read[len(read)/2]
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
