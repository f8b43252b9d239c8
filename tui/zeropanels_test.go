package tui

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// checkPanels finds the Overview's panel rows ("label  value", or "a / b  x / y") and fails on
// a 0 that the Snapshot does not make 0: one no structure keeps, or one whose structures' sum is
// not 0.
func checkPanels(t *testing.T, where, screen string, s *snapshot.Snapshot) {
	t.Helper()
	for _, line := range strings.Split(screen, "\n") {
		if !strings.Contains(line, "│") {
			continue
		}
		for _, seg := range strings.Split(line, "│") {
			cells := screenCells(seg)
			if len(cells) != 2 {
				continue
			}
			labels, values := strings.Split(cells[0].text, " / "), strings.Split(cells[1].text, " / ")
			if len(labels) != len(values) {
				labels, values = []string{cells[0].text}, []string{cells[1].text}
			}
			for i, v := range values {
				if zeroCell.MatchString(v) && !overviewZero(labels[i], s) {
					t.Errorf("%s: the Overview's %q shows %q, which the Snapshot does not make 0", where, labels[i], v)
				}
			}
		}
	}
}

// overviewZero reports whether the Snapshot makes an Overview figure 0: some structure keeps it
// and the figures kept add up to 0.
func overviewZero(label string, s *snapshot.Snapshot) bool {
	var kept []*int64
	for i := range s.Limiters {
		l := &s.Limiters[i]
		switch label {
		case "keys":
			kept = append(kept, &l.Keys)
		case "at their limit":
			kept = append(kept, &l.AtLimit)
		case "over (racy writer)":
			kept = append(kept, l.OverLimit)
		case "refused in windows":
			kept = append(kept, l.RefusedInWindow)
		case "rejected/s":
			kept = append(kept, rejectedKept(l))
		}
	}
	for i := range s.DelayQueues {
		q := &s.DelayQueues[i]
		kept = append(kept, map[string]*int64{"depth": &q.Depth, "due now": q.Due, "in flight": q.InFlight, "longest wait": q.OldestDueAgeMS}[label])
	}
	for i := range s.ListQueues {
		q := &s.ListQueues[i]
		kept = append(kept, map[string]*int64{"waiting": &q.Length, "active": q.Processing, "longest wait": q.LatencyMS}[label])
	}
	for i := range s.JobQueues {
		q := s.JobQueues[i].Totals()
		kept = append(kept, map[string]*int64{"depth": q.Scheduled, "due now": q.Due, "longest wait": q.OldestDueAgeMS,
			"waiting": q.Waiting, "active": q.Active}[label])
		if label == "longest wait" {
			kept = append(kept, q.LatencyMS)
		}
	}
	if len(s.Counters)+len(s.Locks) > 0 { // the TTL health panel counts their keys
		h := &s.TTLHealth
		kept = append(kept, map[string]*int64{"leaking (no TTL)": &h.NoTTL.Keys, "over retention": &h.OverRetention.Keys,
			"expired, present": &h.ExpiredButPresent.Keys, "wrong type": &h.WrongType.Keys, "not int": &h.NotInteger.Keys}[label])
	}
	known := false
	for _, p := range kept {
		if p != nil {
			if *p != 0 {
				return false
			}
			known = true
		}
	}
	return known
}

// rejectedKept is a limiter's rejections as a 0 or not: nil when it keeps none.
func rejectedKept(l *snapshot.Limiter) *int64 {
	var n int64
	switch {
	case l.RejectedPerSec != nil:
		if *l.RejectedPerSec != 0 {
			n = 1
		}
	case l.Rejected != nil:
		n = *l.Rejected
	default:
		return nil
	}
	return &n
}

// TestOverviewTodayOfHourOnlyFamilies: families written in hour windows alone keep no day's
// total, so the Overview's "today" is "—", not 0, with the sweep complete and while a first
// sweep's estimates stand in.
func TestOverviewTodayOfHourOnlyFamilies(t *testing.T) {
	fam := snapshot.FamilyStats{Family: "ctr", Granularities: []string{"hour"}, Keys: 10,
		Windows: []snapshot.WindowStats{{Granularity: "hour", Window: "2026112209", Total: 42, Keys: 10, Current: true}}}
	for _, complete := range []bool{true, false} {
		snap := testSnapshot(t)
		snap.Counters, snap.Scan.Complete = []snapshot.FamilyStats{fam}, complete
		m := newTestModel(t, &fakeSource{status: snapshot.Status{Snapshot: snap}}, nil, 120, 36)
		poll(t, m)
		var hour, today string
		for _, line := range strings.Split(screen(m), "\n") {
			for _, seg := range strings.Split(line, "│") {
				if cells := screenCells(seg); len(cells) == 2 {
					switch cells[0].text {
					case "this hour":
						hour = cells[1].text
					case "today":
						today = cells[1].text
					}
				}
			}
		}
		if today != "—" || !strings.Contains(hour, "42") {
			t.Errorf("complete %v: this hour %q, today %q; want 42 and —", complete, hour, today)
		}
	}
}
