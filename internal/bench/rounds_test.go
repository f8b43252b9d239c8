package bench

import (
	"testing"
)

// TestRoundsLeast: a case run in rounds has its rates over all the rounds together, Redis' time
// of the round with the least time a pair and the longest call of any round, and files that as
// its server time; a round whose time is unknown does not count, and with none known the time
// is unknown.
func TestRoundsLeast(t *testing.T) {
	st := func(usPer, usec, longest float64) *ServerTime {
		return &ServerTime{UsPer: usPer, Usec: usec, Units: usec / usPer, LongestAtMost: &longest}
	}
	runs := []caseRun{
		{events: 300, pairs: 200, calls: 10, secs: 1, st: st(4, 800, 4096)},
		{events: 300, pairs: 200, calls: 8, secs: 0.5, st: st(3, 600, 512)},
		{events: 150, pairs: 100, calls: 6, secs: 0.5, st: nil},
		{events: 250, pairs: 100, calls: 6, secs: 1, st: st(3.5, 350, 1024)},
	}
	b := &bencher{server: map[string]*ServerTime{}}
	c := writerPlan[6]
	r := b.writerRate(c, runs)
	if !near(r.EventsPerSec, 1000/3.0) || !near(r.PairsPerSec, 600/3.0) || !near(r.ScriptsPerSec, 30/3.0) || r.Keys != "steady" || r.Case != c.name {
		t.Errorf("rates %+v; want 333.3 events, 200 pairs and 10 calls a second, steady", r)
	}
	if r.ServerUsPerPair == nil || *r.ServerUsPerPair != 3 || r.ServerUsPerCall == nil || !near(*r.ServerUsPerCall, 600/8.0) {
		t.Errorf("server µs a pair %v, a call %v; want the second round's 3 and 75", show(r.ServerUsPerPair), show(r.ServerUsPerCall))
	}
	if got := b.server[c.id]; got == nil || got.Usec != 600 || got.UsPer != 3 || got.LongestAtMost == nil || *got.LongestAtMost != 4096 ||
		r.LongestCallUs == nil || *r.LongestCallUs != 4096 {
		t.Errorf("filed server time %+v; want the second round's with the first round's longest call", got)
	}
	if *runs[1].st.LongestAtMost != 512 {
		t.Error("filing changed a round's own figures")
	}
	f := b.floorRate(floorPlan[1], runs)
	if got := b.server[floorPlan[1].id]; !near(f.PairsPerSec, 200) || f.ServerUsPair == nil || *f.ServerUsPair != 3 ||
		got == nil || got.UsPer != 3 || *f.LongestCallUs != 4096 {
		t.Errorf("floor %+v", f)
	}
	if r := b.writerRate(writerPlan[1], []caseRun{{events: 1, pairs: 1, calls: 1, secs: 1}}); r.ServerUsPerPair != nil || r.Keys != "fresh" {
		t.Errorf("no round's time known: %+v", r)
	}
}
