package watch

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestLiveRateHoldsWhileSweepsOfferKeysAgain draws many worlds of counters written at a steady
// rate, with a sweep offering every key again, grown, between the live reads, as a console's
// sweeps do, and counts how often the rate's 95% interval holds the true rate over its span.
// A sampled key's weight is the one it was drawn with: were it raised when a sweep offers the key
// grown past a power of two, its growth would be divided by a chance it never had, and the keys
// that grew most would count for least (the rate read low, outside its interval).
func TestLiveRateHoldsWhileSweepsOfferKeysAgain(t *testing.T) {
	const trials, n, size, reads = 200, 5000, 400, 10
	flow := families(t)[0]
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	win := store.WindowAt(store.Hour, now, shanghai)
	last := &snapshot.Snapshot{TakenAt: now, Counters: []snapshot.FamilyStats{{Family: "flow",
		Windows: []snapshot.WindowStats{{Granularity: "hour", Start: win.Start, Keys: n}}}}}
	rng := rand.New(rand.NewPCG(11, 12))
	in, low := 0, 0
	var sumErr float64
	for trial := range trials {
		fs := &famSample{f: flow, g: store.Hour}
		fs.roll(now, shanghai)
		names := make([]string, n)
		v := map[string]int64{}
		for i := range names {
			names[i] = fmt.Sprintf("flow:count:app:%d:%d:x", trial, i)
			v[names[i]] = int64(1 + i%50)
			if i < 3 {
				v[names[i]] = 1_000_000
			}
			fs.offer(names[i], v[names[i]], now, size, liveExact, nil)
		}
		t0 := time.Now()
		var lf snapshot.LiveFamily
		history := map[time.Time]map[string]int64{}
		for step := range reads + 1 {
			at := t0.Add(time.Duration(step) * time.Second)
			if step > 0 {
				// A second of traffic: a third into the hottest key, the rest over every key.
				for range 2000 {
					k := names[0]
					if rng.IntN(3) != 0 {
						k = names[rng.IntN(n)]
					}
					v[k]++
				}
				for _, name := range names { // a sweep offers every key again
					fs.offer(name, v[name], at, size, liveExact, nil)
				}
			}
			history[at] = clone(v)
			keys, tau := fs.toRead(1 << 30)
			lf = fs.figures(keys, liveValues(keys, v), tau, at, last, liveBudget{})
		}
		r := lf.RatePerSec
		if r == nil {
			t.Fatalf("trial %d: no rate: %s", trial, lf.Note)
		}
		var grown float64
		for _, name := range names {
			grown += float64(v[name] - history[lf.RateSince][name])
		}
		truth := grown / lf.ReadAt.Sub(lf.RateSince).Seconds()
		sumErr += (r.Estimate/truth - 1) / trials
		switch {
		case r.Low <= truth && truth <= r.High:
			in++
		case r.High < truth:
			low++
		}
	}
	t.Logf("95%% intervals held the rate %d times in %d (%d below it); mean error %+.2f%%", in, trials, low, 100*sumErr)
	if in < trials*90/100 {
		t.Errorf("95%% intervals held the rate %d times in %d (%d below it); mean error %+.2f%%", in, trials, low, 100*sumErr)
	}
}

func clone(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
