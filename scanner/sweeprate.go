package scanner

import (
	"fmt"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// MinRateSpan is the shortest span a rate is given over, from two sweeps here or from a
// Watcher's reads. A window written in bursts grows by steps: a line fitted to a staircase of
// bursts every 5 seconds, read every second, is off by at most 12% of the rate over 20 seconds,
// 2.5% over 60 (docs/estimates.md, "Rates"); over a few seconds it is off by the whole of a burst.
const MinRateSpan = 20 * time.Second

// SetRate fills each family of s's RatePerSec from prev, an earlier snapshot of the same target: the
// growth of the hour windows (day windows for a family without hours) from prev's current window
// on, over the time between the two, when that is at least MinRateSpan (RateFrom "sweeps").
// Sweeps closer together leave the rate nil with a note: a window written in bursts grows by a
// burst or by nothing between two quick sweeps, and the rate would jump from one to the other.
func SetRate(s, prev *snapshot.Snapshot) {
	if prev == nil {
		return
	}
	dt := s.TakenAt.Sub(prev.TakenAt).Seconds()
	if dt <= 0 {
		return
	}
	for i := range s.Limiters {
		l := &s.Limiters[i]
		for _, pl := range prev.Limiters {
			if pl.Name == l.Name && pl.Hour == l.Hour && l.Allowed != nil && pl.Allowed != nil && l.Rejected != nil && pl.Rejected != nil {
				a, r := float64(*l.Allowed-*pl.Allowed)/dt, float64(*l.Rejected-*pl.Rejected)/dt
				l.AllowedPerSec, l.RejectedPerSec = &a, &r
			}
		}
	}
	for i := range s.Counters {
		f := &s.Counters[i]
		if pf := prev.Family(f.Family); pf != nil && len(f.Granularities) > 0 {
			setSweepRate(f, pf, dt)
		}
	}
}

// setSweepRate sets the family's rate from its growth since pf, the same family dt seconds
// before.
func setSweepRate(f, pf *snapshot.FamilyStats, dt float64) {
	g := f.Granularities[0] // hour when the family has hours
	var from time.Time
	if pcur := pf.CurrentWindow(g); pcur != nil {
		from = pcur.Start
	} else if cur := f.CurrentWindow(g); cur != nil {
		from = cur.Start
	} else {
		f.RateNote = "no key in the current window at either of the last two sweeps"
		return
	}
	if dt < MinRateSpan.Seconds() {
		f.RateNote = fmt.Sprintf("the last two sweeps are %s apart; a rate needs %s", format.Span(dt), format.Span(MinRateSpan.Seconds()))
		return
	}
	var delta snapshot.Int128
	known := true // a saturated total's growth is unknown: the rate stays nil
	for _, w := range f.Windows {
		if w.Granularity != g || w.Start.Before(from) {
			continue
		}
		delta.AddInt(w.Total)
		known = known && !w.Saturated
		if pw := pf.Window(g, w.Start); pw != nil {
			delta = delta.Sub(snapshot.Int128Of(pw.Total))
			known = known && !pw.Saturated
		}
	}
	if !known {
		f.RateNote = "a total past the int64 range: its growth is unknown"
		return
	}
	rate := delta.Float() / dt
	f.RatePerSec, f.RateFrom, f.RateSpanSec, f.RateNote = &rate, snapshot.RateFromSweeps, dt, ""
}
