package watch

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
)

// TestRateSeriesOfBursts: a window written in bursts of 60 every 5 s (12 a second), read every
// second, gives no rate under scanner.MinRateSpan, then the slope of its staircase: within 13% of 12/s
// from 20 s of reads on, within 3% once the reads span the whole minute, whatever the phase of
// the bursts against the reads.
func TestRateSeriesOfBursts(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	win := t0.Truncate(24 * time.Hour)
	for phase := 0; phase < 5000; phase += 250 { // ms of the first burst after the first read
		var s rateSeries
		for i := 0; i <= 90; i++ {
			at := t0.Add(time.Duration(i) * time.Second)
			bursts := math.Floor((float64(i)*1000-float64(phase))/5000) + 1
			s.add(win, at, 1000+60*max(bursts, 0))
			r, span, ok, note := s.rate(at)
			switch {
			case span < scanner.MinRateSpan.Seconds():
				if ok || !strings.HasPrefix(note, "measuring: ") {
					t.Fatalf("phase %dms, %ds: rate %v over %.0fs (note %q), want none under %v", phase, i, r, span, note, scanner.MinRateSpan)
				}
			case !ok:
				t.Fatalf("phase %dms, %ds: no rate over %.0fs: %s", phase, i, span, note)
			case span >= rateSpan.Seconds() && math.Abs(r/12-1) > 0.03, math.Abs(r/12-1) > 0.13:
				t.Fatalf("phase %dms, %ds: rate %.2f over %.0fs, want 12 ± %s", phase, i, r, span, map[bool]string{true: "3%", false: "13%"}[span >= 60])
			}
			if span > rateSpan.Seconds() {
				t.Fatalf("points span %.0fs, past %v", span, rateSpan)
			}
		}
	}
}

// TestRateSeriesStartsOver: a new window, or a total that falls (the counts restarted), drops
// the points before it, and the note says so; a read of an earlier window is ignored; points
// older than a minute before now give no rate.
func TestRateSeriesStartsOver(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 23, 59, 0, 0, time.UTC)
	day, next := t0.Truncate(24*time.Hour), t0.Truncate(24*time.Hour).Add(24*time.Hour)
	var s rateSeries
	for i := range 30 {
		s.add(day, t0.Add(time.Duration(i)*time.Second), float64(500+10*i))
	}
	if r, _, ok, _ := s.rate(t0.Add(29 * time.Second)); !ok || math.Abs(r-10) > 1e-9 {
		t.Fatalf("rate %v (%v), want 10", r, ok)
	}
	s.add(day.Add(-24*time.Hour), t0.Add(30*time.Second), 99999) // a late read of yesterday
	s.add(next, t0.Add(61*time.Second), 3)                       // the new day, restarting at 0
	if _, _, ok, note := s.rate(t0.Add(61 * time.Second)); ok || !strings.HasPrefix(note, "a new window: ") {
		t.Errorf("rate across the day boundary: ok %v, note %q", ok, note)
	}
	for i := 62; i <= 90; i++ {
		s.add(next, t0.Add(time.Duration(i)*time.Second), float64(3+4*(i-61)))
	}
	if r, span, ok, _ := s.rate(t0.Add(90 * time.Second)); !ok || math.Abs(r-4) > 1e-9 || span != 29 {
		t.Errorf("rate in the new day %v over %vs (%v), want 4 over 29s", r, span, ok)
	}
	s.add(next, t0.Add(91*time.Second), 5) // the key deleted and written again
	if _, _, ok, note := s.rate(t0.Add(91 * time.Second)); ok || !strings.Contains(note, "counts restarted") {
		t.Errorf("rate across a restart: ok %v, note %q", ok, note)
	}
	if _, _, ok, note := s.rate(t0.Add(200 * time.Second)); ok || !strings.Contains(note, "last read") {
		t.Errorf("rate of stale points: ok %v, note %q", ok, note)
	}
}
