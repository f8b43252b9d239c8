package watch

import (
	"fmt"
	"slices"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// rateSpan is how far back a family's rate looks: the points of the last minute, so the rate
// rests on several of a writer's flushes (Sidekiq writes its day counters every 5 seconds) and
// follows a change of traffic within a minute.
const rateSpan = time.Minute

// maxRatePoints bounds the points a family keeps: a point within rateSpan/maxRatePoints of the
// one before the last replaces the last, so a minute of polls at MinRefresh (240) keeps every
// one, and faster reads (a caller polling in a loop) keep one in each slot of that length.
const maxRatePoints = 480

// maxSweepPointDur is the longest sweep whose total is taken as a point: its keys were read
// within this of the time the point is put at, little against scanner.MinRateSpan.
const maxSweepPointDur = time.Second

// ratePoint is one read of a family's current window: when (the local clock, monotonic) and
// its total.
type ratePoint struct {
	at    time.Time
	total float64
}

// rateSeries is one family's points in one window, oldest first. Only exact totals are points
// (a sweep's, or a live read's that read every key of the window): an estimate's draw changes
// from one read to the next, and its differences would be noise.
type rateSeries struct {
	win time.Time // the start of the window the points are of
	pts []ratePoint
	// why is why the points begin where they do: the first read, a new window, or a total that
	// fell (the counts restarted: keys deleted, a server restarted empty).
	why string
	// subject is what the notes call the total read: "" for a window's total.
	subject string
}

// what is what the notes call the total read.
func (s *rateSeries) what() string {
	if s.subject == "" {
		return "the window's total"
	}
	return s.subject
}

// add records a read at at of the window beginning at win, whose total was total. A read of an
// earlier window than the series' (a late figure) is ignored; a later window starts it over, as
// does a total that fell. Points older than rateSpan before at are dropped.
func (s *rateSeries) add(win, at time.Time, total float64) {
	switch {
	case win.Before(s.win):
		return
	case !win.Equal(s.win):
		why := "a new window"
		if s.win.IsZero() {
			why = "measuring"
		}
		s.win, s.pts, s.why = win, s.pts[:0], why
	}
	if n := len(s.pts); n > 0 {
		last := s.pts[n-1]
		if !at.After(last.at) {
			return
		}
		if total < last.total {
			s.pts, s.why = s.pts[:0], s.what()+" fell (the counts restarted)"
		}
	}
	if n := len(s.pts); n >= 2 && at.Sub(s.pts[n-2].at) < rateSpan/maxRatePoints {
		s.pts[n-1] = ratePoint{at: at, total: total}
	} else {
		s.pts = append(s.pts, ratePoint{at: at, total: total})
	}
	drop := 0
	for drop < len(s.pts)-1 && at.Sub(s.pts[drop].at) > rateSpan {
		drop++
	}
	s.pts = append(s.pts[:0], s.pts[drop:]...)
}

// rate is the least-squares slope of the points, in events a second, and the seconds they span;
// ok is false, with the reason, while they span less than scanner.MinRateSpan or the last is older than
// rateSpan before now.
func (s *rateSeries) rate(now time.Time) (rate, span float64, ok bool, note string) {
	n := len(s.pts)
	if n == 0 {
		return 0, 0, false, ""
	}
	if age := now.Sub(s.pts[n-1].at); age > rateSpan {
		return 0, 0, false, fmt.Sprintf("%s was last read %s ago", s.what(), format.Span(age.Seconds()))
	}
	span = s.pts[n-1].at.Sub(s.pts[0].at).Seconds()
	if span < scanner.MinRateSpan.Seconds() {
		return 0, span, false, fmt.Sprintf("%s: %s of reads so far; a rate needs %s", s.why, format.Span(span), format.Span(scanner.MinRateSpan.Seconds()))
	}
	// The slope of total against time, about the points' means (times from the first point).
	var mt, my float64
	for _, p := range s.pts {
		mt += p.at.Sub(s.pts[0].at).Seconds()
		my += p.total
	}
	mt, my = mt/float64(n), my/float64(n)
	var sxx, sxy float64
	for _, p := range s.pts {
		dt := p.at.Sub(s.pts[0].at).Seconds() - mt
		sxx += dt * dt
		sxy += dt * (p.total - my)
	}
	return sxy / sxx, span, true, ""
}

// measuring reports whether the series is being measured at now: read within rateSpan, but over
// less than scanner.MinRateSpan so far, the seconds its reads span.
func (s *rateSeries) measuring(now time.Time) (span float64, ok bool) {
	n := len(s.pts)
	if n == 0 || now.Sub(s.pts[n-1].at) > rateSpan {
		return 0, false
	}
	span = s.pts[n-1].at.Sub(s.pts[0].at).Seconds()
	return span, span < scanner.MinRateSpan.Seconds()
}

// rateTrack is a Watcher's points of each counter family's current window (the hour, or the day
// for a family without hours: the window its live reads read), by family name. It outlives
// sweeps, as the live sample does.
type rateTrack struct{ fams map[string]*rateSeries }

func (r *rateTrack) series(family string) *rateSeries {
	if r.fams == nil {
		r.fams = map[string]*rateSeries{}
	}
	s := r.fams[family]
	if s == nil {
		s = &rateSeries{}
		r.fams[family] = s
	}
	return s
}

// observe adds a Poll's points: each live read whose total is exact (every key of the window
// read), and, for a family with none this Poll, the total of a complete sweep the Poll ended at
// done, when it took at most maxSweepPointDur (its reads are then of one moment, put at its
// middle).
func (r *rateTrack) observe(live []snapshot.LiveFamily, snap *snapshot.Snapshot, done time.Time) {
	read := map[string]bool{}
	for _, lf := range live {
		if lf.Total == nil || !lf.Total.Exact() || lf.Partial {
			continue
		}
		r.series(lf.Family).add(lf.WindowStart, lf.ReadAt, lf.Total.Estimate)
		read[lf.Family] = true
	}
	if snap == nil || !snap.Scan.Complete {
		return
	}
	dur := time.Duration(snap.Scan.DurationMS) * time.Millisecond
	if dur > maxSweepPointDur {
		return
	}
	for _, f := range snap.Counters {
		if read[f.Family] || len(f.Granularities) == 0 {
			continue
		}
		if w := f.CurrentWindow(f.Granularities[0]); w != nil && !w.Saturated && w.TotalEstimate == nil {
			r.series(f.Family).add(w.Start, done.Add(-dur/2), float64(w.Total))
		}
	}
}

// fill returns a copy of snap whose counter families' rates are their points' slopes at now
// (RateFrom "reads"), where the points span enough; elsewhere the sweeps' rate stands, or the
// reason there is none. current gives a family's current window's start, so that the points of a
// window that has ended give no rate.
func (r *rateTrack) fill(snap *snapshot.Snapshot, now time.Time, current func(family string) (time.Time, bool)) *snapshot.Snapshot {
	if snap == nil || len(r.fams) == 0 {
		return snap
	}
	out := *snap
	out.Counters = slices.Clone(snap.Counters)
	for i := range out.Counters {
		f := &out.Counters[i]
		s := r.fams[f.Family]
		if s == nil {
			continue
		}
		rate, span, ok, note := s.rate(now)
		if cur, known := current(f.Family); known && !cur.Equal(s.win) {
			ok, note = false, "a new window: not read yet"
		}
		switch {
		case ok:
			f.RatePerSec, f.RateFrom, f.RateSpanSec, f.RateNote = &rate, snapshot.RateFromReads, span, ""
		case f.RatePerSec == nil && note != "":
			f.RateNote = note
		}
	}
	return &out
}
