package tui

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestRateFromReads: a family whose every key the live reads read takes its rate from the slope
// of its reads over the last minute, and its detail says over how long; before the reads span
// enough it shows no figure for the rate and its detail says why, not a jumpy live one.
func TestRateFromReads(t *testing.T) {
	exact := func(st *snapshot.Status) {
		lf := &st.Families[0]
		lf.Sampled, lf.Keys = 343, 363
		lf.Total = &estimate.Figure{Estimate: 812, Low: 812, High: 812, Coverage: 1, Seen: 812}
		lf.RatePerSec = &estimate.Figure{Estimate: 60, Low: 60, High: 60, Coverage: 1, Seen: 60} // a burst just landed
	}
	st := testStatus(t)
	exact(&st)
	f := st.Snapshot.Family("flow")
	r := 12.5
	f.RatePerSec, f.RateFrom, f.RateSpanSec = &r, snapshot.RateFromReads, 45.2
	m := newTestModel(t, &fakeSource{status: st}, nil, 120, 40)
	poll(t, m)
	press(m, "2", "enter")
	if s := screen(m); !strings.Contains(s, "rate 13/s (last 45s of reads)") || strings.Contains(s, "rate 60") {
		t.Errorf("flow's detail does not give the reads' rate and span:\n%s", s)
	}

	st = testStatus(t)
	exact(&st)
	f = st.Snapshot.Family("flow")
	f.RatePerSec, f.HourAvgPerSec = nil, nil
	f.RateNote = "measuring: 8s of reads so far; a rate needs 20s"
	m = newTestModel(t, &fakeSource{status: st}, nil, 120, 40)
	poll(t, m)
	press(m, "2", "enter")
	if s := screen(m); !strings.Contains(s, "rate -   ") || !strings.Contains(s, "rate: measuring: 8s of reads") {
		t.Errorf("flow's detail, its reads spanning 8s, does not say why it has no rate yet:\n%s", s)
	}
}
