package scanner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// truth is what a test wrote of one family: its keys and the current hour's total.
type truth struct {
	keys, hour int64
}

// fillEstimated writes n keys of family f in the current hour, with values drawn from a fixed
// seed, noTTL of them without an expiry, and other keys no family claims; it returns what it wrote.
func fillEstimated(t *testing.T, rdb redis.UniversalClient, f *store.Family, n, noTTL, other int, dims func(i int) []string) truth {
	t.Helper()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	now := time.Now().In(shanghai)
	var tr truth
	pipe := rdb.Pipeline()
	flush := func() {
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		v := 1 + rng.Int64N(100)
		ttl := time.Hour
		if i < noTTL {
			ttl = 0
		}
		pipe.Set(ctx, key(t, f, store.Hour, now, dims(i)...), v, ttl)
		tr.keys++
		tr.hour += v
		if pipe.Len() >= 5000 {
			flush()
		}
	}
	for i := range other {
		pipe.Set(ctx, fmt.Sprintf("other:%d", i), "x", time.Hour)
		if pipe.Len() >= 5000 {
			flush()
		}
	}
	flush()
	return tr
}

// sweepTo runs s in slices until it has seen share of the keys the servers hold, folding its
// pages into a, and returns a's Snapshot of the sweep under way.
func sweepTo(t *testing.T, s *Sweep, a *Aggregator, share float64) *snapshot.Snapshot {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := s.RunUntil(t.Context(), time.Now().Add(20*time.Millisecond), a.Add); err != nil {
			t.Fatal(err)
		}
		a.SetProgress(s.Progress())
		snap := a.Snapshot(false)
		if snap.Scan.Coverage >= share || s.Done() {
			if s.Done() {
				t.Fatalf("the sweep ended before it saw %.0f%% of the keys", 100*share)
			}
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("coverage %.3f after a minute, want %.2f", snap.Scan.Coverage, share)
		}
	}
}

// within fails unless the estimate's 95% interval, widened threefold about the estimate, holds
// want. A sound interval misses want one time in twenty; three times its width, about one in
// 30,000, so the test does not fail by chance, and it still fails when the estimate is not scaled
// (a tenth of the truth at 10% coverage) or the interval is far too narrow. The interval must
// also be useful: narrower than maxRel of the estimate on each side.
func within(t *testing.T, what string, e *snapshot.Estimate, want int64, maxRel float64) {
	t.Helper()
	if e == nil || e.SoFar || e.High == nil {
		t.Fatalf("%s: no estimate (%+v), want one near %d", what, e, want)
	}
	lo, hi := e.Estimate-3*(e.Estimate-e.Low), e.Estimate+3*(*e.High-e.Estimate)
	if float64(want) < lo || float64(want) > hi {
		t.Errorf("%s: %d lies outside three times the interval [%.0f, %.0f] of the estimate %.0f", what, want, e.Low, *e.High, e.Estimate)
	}
	if rel := (*e.High - e.Low) / 2 / e.Estimate; rel > maxRel || math.IsNaN(rel) {
		t.Errorf("%s: interval ±%.1f%%, want within ±%.0f%%", what, 100*rel, 100*maxRel)
	}
	t.Logf("%s: ≈%.0f [%.0f, %.0f], exact %d (%+.2f%%), coverage %.3f", what, e.Estimate, e.Low, *e.High, want,
		100*(e.Estimate-float64(want))/float64(want), e.Coverage)
}

// TestSweepUnderWayEstimatesTheKeyspace sweeps a tenth of a real server's keys and checks that
// what the Snapshot shows is scaled to the whole keyspace with intervals that hold the exact
// figures; a leak too rare to scale is shown as what was seen so far; and a complete sweep's
// figures are exact, with no estimate beside them.
func TestSweepUnderWayEstimatesTheKeyspace(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fams := families(t)[:1]
	f := fams[0]
	tr := fillEstimated(t, rdb, f, 60000, 3, 40000, func(i int) []string { return []string{"app", fmt.Sprint(i % 7), fmt.Sprint(i)} })

	opt := Options{Count: 100, KeysPerSecond: 50000, Location: shanghai}
	s, a := New(rdb, fams, opt), NewAggregator(fams, opt)
	snap := sweepTo(t, s, a, 0.10)
	if c := snap.Scan.Coverage; c < 0.10 || c > 0.5 {
		t.Fatalf("coverage %.3f, want from 0.10 to 0.5", c)
	}
	fs := snap.Family("flow")
	within(t, "keys", fs.KeysEstimate, tr.keys, 0.05)
	if fs.Keys != int64(math.Round(fs.KeysEstimate.Estimate)) {
		t.Errorf("keys %d beside the estimate %.1f, want it rounded", fs.Keys, fs.KeysEstimate.Estimate)
	}
	cur := fs.CurrentWindow("hour")
	within(t, "this hour", cur.TotalEstimate, tr.hour, 0.05)
	if !fs.Series.Estimated || fs.Series.Hours[len(fs.Series.Hours)-1] != cur.Total {
		t.Errorf("series %v estimated %v, want it to end at the estimated hour %d", fs.Series.Hours[len(fs.Series.Hours)-3:], fs.Series.Estimated, cur.Total)
	}
	// Three keys without a TTL in 60,000: too few pages hold one to scale them.
	if e := fs.TTLEstimate.NoTTL; !e.SoFar || e.High != nil || float64(fs.TTL.NoTTL) != e.Seen || e.Low != e.Seen {
		t.Errorf("no TTL: %d, %+v; want what was seen so far, with no upper end", fs.TTL.NoTTL, e)
	}
	if fs.Reconciliation != nil {
		t.Error("a sweep under way reconciles hours with days it has not all seen")
	}

	for !s.Done() {
		if err := s.RunUntil(t.Context(), time.Now().Add(time.Second), a.Add); err != nil {
			t.Fatal(err)
		}
	}
	a.SetProgress(s.Progress())
	full := a.Snapshot(true).Family("flow")
	if full.Keys != tr.keys || full.CurrentWindow("hour").Total != tr.hour || full.TTL.NoTTL != 3 {
		t.Errorf("complete sweep: %d keys, hour %d, %d without TTL; want %d, %d, 3", full.Keys, full.CurrentWindow("hour").Total, full.TTL.NoTTL, tr.keys, tr.hour)
	}
	if full.KeysEstimate != nil || full.TTLEstimate != nil || full.CurrentWindow("hour").TotalEstimate != nil {
		t.Error("a complete sweep's figures carry estimates")
	}
}

// TestClusterEstimatesPerMaster sweeps part of a real 3-master cluster, where a hash-tagged
// family's hour and day keys share a slot: each master is scaled by its own DBSIZE, its coverage
// is shown, and the estimates hold the exact figures.
func TestClusterEstimatesPerMaster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	fams := families(t)
	ad := fams[1]
	tr := fillEstimated(t, cc, ad, 45000, 0, 20000, func(i int) []string { return []string{fmt.Sprint(i % 50), fmt.Sprint(i)} })
	// The day keys of the same tags, in the same slots as their hours.
	pipe := cc.Pipeline()
	for i := range 45000 {
		pipe.Set(t.Context(), key(t, ad, store.Day, time.Now().In(shanghai), fmt.Sprint(i%50), fmt.Sprint(i)), 1, time.Hour)
		if pipe.Len() >= 5000 {
			if _, err := pipe.Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}

	opt := Options{Count: 100, KeysPerSecond: 60000, Location: shanghai}
	s, a := New(cc, fams, opt), NewAggregator(fams, opt)
	snap := sweepTo(t, s, a, 0.15)
	if len(snap.Scan.Masters) != 3 {
		t.Fatalf("masters %+v, want 3", snap.Scan.Masters)
	}
	for _, m := range snap.Scan.Masters {
		if m.DBSize < 30000 || m.Coverage <= 0 || m.Coverage > 1 || math.Abs(m.Coverage-float64(m.KeysSeen)/float64(m.DBSize)) > 1e-9 && !m.Done {
			t.Errorf("master %+v: want its DBSIZE and the share of it seen", m)
		}
	}
	fs := snap.Family("ad_revenue")
	within(t, "ad_revenue keys", fs.KeysEstimate, 2*tr.keys, 0.06)
	within(t, "ad_revenue this hour", fs.CurrentWindow("hour").TotalEstimate, tr.hour, 0.06)
	within(t, "ad_revenue today", fs.CurrentWindow("day").TotalEstimate, tr.keys, 0.06)
}

// TestPagesInOneSlotAreOneCluster: where a server walks its keys slot by slot, pages that run on
// in the slot the last one ended in belong together, so a slot full of one tag's keys counts once
// in the spread between clusters, not as many agreeing pages.
func TestPagesInOneSlotAreOneCluster(t *testing.T) {
	a := NewAggregator(nil, Options{})
	for _, p := range []Page{
		{Seen: 10, master: "m", firstSlot: 1, lastSlot: 5},
		{Seen: 10, master: "m", firstSlot: 5, lastSlot: 5},  // runs on in slot 5
		{Seen: 0, master: "m", firstSlot: -1, lastSlot: -1}, // an empty page changes nothing
		{Seen: 10, master: "m", firstSlot: 5, lastSlot: 9},
		{Seen: 10, master: "m", firstSlot: 10, lastSlot: 12}, // a new slot: a new cluster
		{Seen: 10, master: "n", firstSlot: 12, lastSlot: 14}, // another master: its own
		{Seen: 10, firstSlot: -1, lastSlot: -1},              // a standalone server's pages
		{Seen: 10, firstSlot: -1, lastSlot: -1},
	} {
		a.Add(p)
	}
	for addr, want := range map[string]struct {
		closed int
		open   float64
	}{"m": {1, 10}, "n": {0, 10}, "": {1, 10}} {
		st := a.est.strata[addr]
		if st.frame.Clusters != want.closed || st.open.keys != want.open {
			t.Errorf("master %q: %d clusters closed and %v keys open, want %d and %v", addr, st.frame.Clusters, st.open.keys, want.closed, want.open)
		}
	}
	if m := a.est.strata["m"].frame.Keys; m != 30 {
		t.Errorf("the run in slot 5 closed with %v keys, want 30", m)
	}
}

// TestAMasterNotYetSeenLeavesTheTotalUnknown: on a cluster, until every master has given pages,
// a total is only what was seen so far, and the share swept counts the keys of every master.
// Scaling the masters seen alone would leave out the keys of the others.
func TestAMasterNotYetSeenLeavesTheTotalUnknown(t *testing.T) {
	e := newEstAgg()
	e.prog = Progress{Masters: map[string]MasterProgress{"a": {DBSize: 10000}, "b": {DBSize: 10000}, "c": {DBSize: 10000}}}
	id := figID{fam: 0, what: figKeys}
	add := func(masters ...string) {
		for i := range 6 {
			for _, m := range masters {
				p := &Page{Seen: 100, master: m, firstSlot: -1, lastSlot: -1}
				e.begin(p)
				e.note(id, float64(40+i))
				e.end(p)
			}
		}
	}
	add("a", "b")
	if fig := e.figure(id); !fig.SoFar || fig.High != nil || fig.Estimate != 2*(40+41+42+43+44+45) {
		t.Errorf("with no page of master c, the figure is %+v, want what was seen so far", fig)
	}
	if c := e.coverage(); math.Abs(c-1200.0/30000) > 1e-12 {
		t.Errorf("coverage %v, want 1,200 keys of 30,000", c)
	}
	add("c")
	fig := e.figure(id)
	if want := 30000 * 255.0 / 600; fig.SoFar || fig.High == nil || math.Abs(fig.Estimate-want) > 1e-6 {
		t.Errorf("with pages of every master, the figure is %+v, want an estimate of %v", fig, want)
	}
}
