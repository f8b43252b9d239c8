package metrics

import (
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestFamilyRateSeries: a family's rate series is its rate, measured again at each poll of the
// same sweep (a Watcher gives the sweep's Snapshot with its rates refreshed), else its hour's
// average; a day-only family with neither yet has no series, not a 0.
func TestFamilyRateSeries(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	avg := 2.0
	snap := &snapshot.Snapshot{TakenAt: t0, Counters: []snapshot.FamilyStats{
		{Family: "stat", Granularities: []string{"day"}, RateNote: "measuring: 8s of reads so far; a rate needs 20s"},
		{Family: "pv", Granularities: []string{"hour"}, HourAvgPerSec: &avg},
	}}
	col := newCollector(func() time.Time { return t0 })
	rateOf := func(family string) []sample {
		return find(parse(t, scrapeHandler(t, col)), "hourglass_family_rate_per_second", "family", family)
	}
	col.set(snapshot.Status{Snapshot: snap}, nil)
	if got := rateOf("stat"); len(got) != 0 {
		t.Errorf("a day-only family measuring its rate: %v, want no series", got)
	}
	if got := rateOf("pv"); len(got) != 1 || got[0].value != 2 {
		t.Errorf("an hour family without a rate: %v, want its hour's average 2", got)
	}
	again := *snap // the same sweep, its rates measured at a later poll
	again.Counters = append([]snapshot.FamilyStats(nil), snap.Counters...)
	r := 13.0
	again.Counters[0].RatePerSec, again.Counters[0].RateFrom, again.Counters[0].RateNote = &r, snapshot.RateFromReads, ""
	col.set(snapshot.Status{Snapshot: &again}, nil)
	if got := rateOf("stat"); len(got) != 1 || got[0].value != 13 {
		t.Errorf("the day-only family once its reads span enough: %v, want 13", got)
	}
}
