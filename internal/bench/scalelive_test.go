package bench

import (
	"math"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestLiveRateSettle sets polls' rates beside a writer's count kept flush by flush: the true rate
// over the span from the count bracketed by the flushes' start and return, each poll's interval
// held to the truth over its own span, the median, extremes and error of the rates shown, and a
// poll with no rate counted but not rated.
func TestLiveRateSettle(t *testing.T) {
	t0 := time.Date(2026, 7, 1, 14, 10, 0, 0, time.UTC)
	lw := &liveWriter{}
	// 100 events a flush, a flush every 20 ms taking 5 ms: 5,000 events a second.
	for i := range 3000 {
		start := t0.Add(time.Duration(i) * liveTick)
		lw.start, lw.end, lw.events = append(lw.start, start), append(lw.end, start.Add(5*time.Millisecond)), append(lw.events, int64(100*(i+1)))
	}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s*1000) * time.Millisecond) }
	poll := func(since, read float64, est, half float64) snapshot.LiveFamily {
		lf := snapshot.LiveFamily{Family: liveFamily, RateSince: at(since), ReadAt: at(read), Top: 20, Sampled: 180}
		if est > 0 {
			lf.RatePerSec = &estimate.Figure{Estimate: est, Low: est - half, High: est + half}
		}
		return lf
	}
	polls := []snapshot.LiveFamily{
		poll(10.01, 20.01, 4900, 300), // holds 5,000
		poll(10.01, 21.51, 5600, 300), // misses it
		poll(21.51, 23.01, 0, 0),      // a new base: no rate
		poll(21.51, 24.51, 5100, 150), // holds it
	}
	c := &LiveRateCheck{}
	c.settle(lw, polls, at(15.01), at(45.01))
	if c.Seconds != 30 || c.Events != 150_000 || c.TruePerSec != 5000 {
		t.Errorf("true rate: %d events over %v s, %v/s; want 150,000 over 30 s, 5,000/s", c.Events, c.Seconds, c.TruePerSec)
	}
	if c.Polls != 4 || c.WithRate != 3 || c.Inside != 2 || c.HitRate == nil || *c.HitRate != 2.0/3 || c.KeysRead != 200 {
		t.Errorf("polls %d, with a rate %d, inside %d, hit rate %v, keys read %d", c.Polls, c.WithRate, c.Inside, c.HitRate, c.KeysRead)
	}
	if *c.MedianPerSec != 5100 || *c.MinPerSec != 4900 || *c.MaxPerSec != 5600 || math.Abs(*c.RelError-0.02) > 1e-12 || c.SpanSeconds != 10 {
		t.Errorf("rates: median %v, %v–%v, error %v, span %v", *c.MedianPerSec, *c.MinPerSec, *c.MaxPerSec, *c.RelError, c.SpanSeconds)
	}
}
