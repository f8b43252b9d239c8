package bench

import (
	"math"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestLiveRateSettle sets polls' figures beside a writer's count kept flush by flush: the true rate
// over the span from the count bracketed by the flushes' start and return, each poll's interval
// held to the truth over its own span, the median, extremes and error of the rates shown, a poll
// with no rate counted but not rated, each poll's total now held to the hour's loaded total and
// the events since, and the last poll's figures of each family written into as trials.
func TestLiveRateSettle(t *testing.T) {
	t0 := time.Date(2026, 7, 1, 14, 10, 0, 0, time.UTC)
	lw := &liveWriter{}
	// 100 events a flush, a flush every 20 ms taking 5 ms: 5,000 events a second.
	for i := range 3000 {
		start := t0.Add(time.Duration(i) * liveTick)
		lw.start, lw.end = append(lw.start, start), append(lw.end, start.Add(5*time.Millisecond))
		lw.events = append(lw.events, []int64{int64(100 * (i + 1)), int64(2 * (i + 1))})
	}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s*1000) * time.Millisecond) }
	poll := func(since, read float64, est, half float64) snapshot.LiveFamily {
		lf := snapshot.LiveFamily{Family: liveFamily, RateSince: at(since), ReadAt: at(read), Top: 20, Sampled: 180}
		if est > 0 {
			lf.RatePerSec = &estimate.Figure{Estimate: est, Low: est - half, High: est + half}
		}
		// The hour held 1,000,000 as loaded; the writer's count at the read is 5,000 a second.
		total := 1e6 + 5000*(read-0.0025)
		lf.Total = &estimate.Figure{Estimate: total, Low: total - 1000, High: total + 1000}
		return lf
	}
	polls := []snapshot.LiveFamily{
		poll(10.01, 20.01, 4900, 300), // holds 5,000
		poll(10.01, 21.51, 5600, 300), // misses it
		poll(21.51, 23.01, 0, 0),      // a new base: no rate
		poll(21.51, 24.51, 5100, 150), // holds it
	}
	polls[1].Total.High = polls[1].Total.Estimate - 2000 // misses the total
	c := &LiveRateCheck{}
	lt := liveTruth{lw: lw, targets: []liveTarget{{rate: 5000}, {rate: 100}}, loaded: func(j int) float64 { return 1e6 / float64(1+99*j) }}
	c.settle(lt, polls, at(15.01), at(45.01))
	if c.Seconds != 30 || c.Events != 150_000 || c.TruePerSec != 5000 {
		t.Errorf("true rate: %d events over %v s, %v/s; want 150,000 over 30 s, 5,000/s", c.Events, c.Seconds, c.TruePerSec)
	}
	if c.Polls != 4 || c.WithRate != 3 || c.Inside != 2 || c.HitRate == nil || *c.HitRate != 2.0/3 || c.KeysRead != 200 {
		t.Errorf("polls %d, with a rate %d, inside %d, hit rate %v, keys read %d", c.Polls, c.WithRate, c.Inside, c.HitRate, c.KeysRead)
	}
	if *c.MedianPerSec != 5100 || *c.MinPerSec != 4900 || *c.MaxPerSec != 5600 || math.Abs(*c.RelError-0.02) > 1e-12 || c.SpanSeconds != 10 {
		t.Errorf("rates: median %v, %v–%v, error %v, span %v", *c.MedianPerSec, *c.MinPerSec, *c.MaxPerSec, *c.RelError, c.SpanSeconds)
	}
	if c.WithTotal != 4 || c.TotalInside != 3 || c.TotalHitRate == nil || *c.TotalHitRate != 0.75 {
		t.Errorf("totals: %d polls with one, %d inside, hit rate %v", c.WithTotal, c.TotalInside, c.TotalHitRate)
	}
	// The trials: pv's last poll, and a trial family's (100 a second into 10,000 as loaded) whose
	// rate holds and whose total misses.
	fams := scaleFamilies(t0)
	lt.targets[0].sf, lt.targets[1].sf = fams[0], fams[3]
	trial := snapshot.LiveFamily{Family: fams[3].fam.Name(), RateSince: at(20), ReadAt: at(30),
		RatePerSec: &estimate.Figure{Estimate: 90, Low: 60, High: 120}, Total: &estimate.Figure{Estimate: 9000, Low: 8000, High: 10000}}
	tr := lt.trials([]snapshot.LiveFamily{polls[3], trial})
	if tr.Families != 2 || tr.Rates.WithInterval != 2 || tr.Rates.Inside != 2 || tr.Totals.WithInterval != 2 || tr.Totals.Inside != 1 {
		t.Errorf("trials %+v", tr)
	}
}
