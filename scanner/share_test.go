package scanner

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestEachMasterHasItsShare: a cluster's masters share the budget out, each its part of it while
// the others are under way, and a master swept to its end leaves its part to the rest.
func TestEachMasterHasItsShare(t *testing.T) {
	s := New(nil, nil, Options{KeysPerSecond: 3000})
	s.masters = 3
	if r := s.shareOf("a").Rate(); math.Abs(r-1000) > 1e-9 {
		t.Fatalf("three masters under way: a share of %v keys/s, want 1,000", r)
	}
	s.done = map[string]bool{"a": false, "b": true, "c": false}
	if r := s.shareOf("a").Rate(); math.Abs(r-1500) > 1e-9 {
		t.Fatalf("one of three swept: a share of %v keys/s, want 1,500", r)
	}
	s.pace.SetRate(0)
	if r := s.shareOf("a").Rate(); r != 0 {
		t.Fatalf("no budget: a share of %v keys/s, want none (0)", r)
	}
}

// TestClusterMastersKeepTheirShares sweeps a real 3-master cluster for a while at a budget: no
// master visits more than its third of it, and together they spend it.
func TestClusterMastersKeepTheirShares(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	fams := families(t)
	fillEstimated(t, cc, fams[0], 30000, 0, 30000, func(i int) []string { return []string{"app", "d", fmt.Sprint(i)} })
	const budget = 3000
	s, a := New(cc, fams, Options{Count: 50, KeysPerSecond: budget, Location: shanghai}), NewAggregator(fams, Options{Location: shanghai})
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		if err := s.RunUntil(t.Context(), time.Now().Add(250*time.Millisecond), a.Add); err != nil {
			t.Fatal(err)
		}
	}
	secs := time.Since(start).Seconds()
	var total float64
	for addr, n := range a.masters {
		rate := float64(n) / secs
		total += rate
		t.Logf("%s: %.0f keys/s", addr, rate)
		// A page may run one page (50 keys) and the quarter second the pacer saves up ahead.
		if lim := budget/3.0*1.25 + (50+0.25*budget/3)/secs; rate > lim {
			t.Errorf("master %s swept %.0f keys/s, over its share of %d/3", addr, rate, budget)
		}
	}
	if total < 0.6*budget {
		t.Errorf("the masters swept %.0f keys/s together, well under the budget of %d", total, budget)
	}
}
