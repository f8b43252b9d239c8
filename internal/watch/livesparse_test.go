package watch

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestLiveScaledFiguresNeedKeysBeyondTheLargest draws keyspaces of two million keys in which a
// family's current hour holds about 1,800, one key or two a page, written at 100 events a second
// over every key alike, a first sweep 5% through them. A budget that reads only the family's 20
// largest keys gives no scaled figure (counted alone, as if no other key grew, they gave a rate a
// quarter of the truth) and says what budget would; one that reads 20 keys of its sample beside
// them gives a rate and a total now whose 95% intervals hold the truth at least 90 times in 100.
func TestLiveScaledFiguresNeedKeysBeyondTheLargest(t *testing.T) {
	const trials, n, pageKeys, sample = 100, 2_000_000, 1000, 2000
	flow := families(t)[0]
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	win := store.WindowAt(store.Hour, now, shanghai)
	budget := liveBudget{dbsize: map[string]int64{"": n}, maxShare: 0.008}
	for _, c := range []struct {
		name  string
		share int // keys a read of the family may take
	}{{"the largest keys alone", 17}, {"20 sampled keys beside them", 40}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, 32))
			var withRate, rateIn, withTotal, totalIn int
			for trial := range trials {
				world := newScaledWorld(rng, flow, win, trial, n, 0.0009, 100, false)
				lf, trueRate, total := sparseReads(rng, world, flow, win, c.share, sample, pageKeys, budget)
				if r := lf.RatePerSec; r != nil {
					withRate++
					if r.Low <= trueRate && trueRate <= r.High {
						rateIn++
					}
				}
				if tot := lf.Total; tot != nil {
					withTotal++
					if tot.Low <= total && total <= tot.High {
						totalIn++
					}
				}
				if c.share < 20 && (lf.Total != nil || lf.RatePerSec != nil || !strings.Contains(lf.Note, "beyond the 20 largest") ||
					!strings.Contains(lf.Note, `at max_redis_time = "`)) {
					t.Fatalf("trial %d: the largest keys alone gave figures, or no reason: %+v", trial, lf)
				}
			}
			t.Logf("the rate in %d of %d trials with one, the total now in %d of %d", rateIn, withRate, totalIn, withTotal)
			if c.share < 20 {
				return
			}
			if withRate < trials*7/10 || withTotal < trials*7/10 {
				t.Errorf("a rate in %d and a total now in %d of %d trials", withRate, withTotal, trials)
			}
			if rateIn < withRate*9/10 || totalIn < withTotal*9/10 {
				t.Errorf("95%% intervals held the rate %d times in %d and the total %d in %d", rateIn, withRate, totalIn, withTotal)
			}
		})
	}
}

// sparseReads walks 5% of world, then reads the family's live keys ten times 4 s apart (share
// keys a read) while the sweep walks on, and returns the last figures with the true rate over
// their span and the true total now.
func sparseReads(rng *rand.Rand, world scaledWorld, flow *store.Family, win store.Window, share, sample, pageKeys int,
	budget liveBudget) (snapshot.LiveFamily, float64, float64) {
	n := len(world.names)
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	s := newLiveSampler([]*store.Family{flow}, scanner.Options{Location: shanghai, Now: func() time.Time { return now }, LiveSample: sample})
	clock := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	s.clock = func() time.Time { return clock }
	s.dbsize = budget.dbsize
	fs := s.fams[flow]
	walked := 0
	walk := func(keys int) {
		for ; keys > 0 && walked < n; keys -= pageKeys {
			s.visit(world.page(flow, win, walked, min(walked+pageKeys, n)))
			walked += pageKeys
		}
	}
	walk(n / 20)
	var lf snapshot.LiveFamily
	history := map[time.Time]map[string]int64{}
	for step := range 11 {
		if step > 0 {
			clock = clock.Add(4 * time.Second)
			for _, k := range world.keys {
				world.value[k] += int64(poisson(rng, 4*world.rate[k]))
			}
			walk(n / 1000)
		}
		history[clock] = clone(world.value)
		keys, tau := fs.toRead(share)
		lf = fs.figures(keys, liveValues(keys, world.value), tau, clock, nil, budget)
	}
	var grown, total float64
	for k, v := range world.value {
		grown += float64(v - history[lf.RateSince][k])
		total += float64(v)
	}
	return lf, grown / lf.ReadAt.Sub(lf.RateSince).Seconds(), total
}
