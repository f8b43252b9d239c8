package watch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestLiveFiguresCover draws many worlds of skewed counters, reads each one's live sample twice,
// and counts how often the 95% intervals of the rate and the total hold the true figures: about
// 95 times in 100 for a sound method, and never far below.
func TestLiveFiguresCover(t *testing.T) {
	const trials, n, size = 200, 5000, 400
	flow := families(t)[0]
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	win := store.WindowAt(store.Hour, now, shanghai)
	last := &snapshot.Snapshot{TakenAt: now, Counters: []snapshot.FamilyStats{{Family: "flow",
		Windows: []snapshot.WindowStats{{Granularity: "hour", Start: win.Start, Keys: n}}}}}
	rng := rand.New(rand.NewPCG(7, 8))
	var rateIn, totalIn int
	var rateWidth, totalWidth float64
	for trial := range trials {
		fs := &famSample{f: flow, g: store.Hour}
		fs.roll(now, shanghai)
		names := make([]string, n)
		v0 := map[string]int64{}
		rates := map[string]float64{}
		for i := range names {
			names[i] = fmt.Sprintf("flow:count:app:%d:%d:x", trial, i)
			// Zipf-like: a few keys hold much of the traffic, and have since the hour began
			// (half an hour ago), so they hold the largest values.
			rates[names[i]] = 50 / math.Pow(float64(i+1), 0.8) * rng.Float64()
			v0[names[i]] = int64(poisson(rng, rates[names[i]]*1800))
			fs.offer(names[i], v0[names[i]], now, size, liveExact, nil)
		}
		t0 := time.Now()
		keys, tau := fs.toRead(1 << 30)
		fs.figures(keys, liveValues(keys, v0), tau, t0, last, liveBudget{})
		v1, trueGrowth, trueTotal := map[string]int64{}, 0.0, 0.0
		for _, name := range names {
			g := int64(poisson(rng, rates[name]*10))
			v1[name] = v0[name] + g
			trueGrowth += float64(g)
			trueTotal += float64(v1[name])
		}
		keys, tau = fs.toRead(1 << 30)
		lf := fs.figures(keys, liveValues(keys, v1), tau, t0.Add(10*time.Second), last, liveBudget{})
		if lf.RatePerSec == nil || lf.Total == nil || lf.Sampled != size || lf.Top != liveExact {
			t.Fatalf("trial %d: %+v", trial, lf)
		}
		rateWidth += lf.RatePerSec.RelHalfWidth() / trials
		totalWidth += lf.Total.RelHalfWidth() / trials
		if r := lf.RatePerSec; r.Low <= trueGrowth/10 && trueGrowth/10 <= r.High {
			rateIn++
		}
		if tot := lf.Total; tot.Low <= trueTotal && trueTotal <= tot.High {
			totalIn++
		}
	}
	t.Logf("95%% intervals held the rate %d and the total %d times in %d; mean half widths ±%.1f%% and ±%.1f%%",
		rateIn, totalIn, trials, 100*rateWidth, 100*totalWidth)
	if rateIn < trials*90/100 || totalIn < trials*90/100 {
		t.Errorf("95%% intervals held the rate %d and the total %d times in %d", rateIn, totalIn, trials)
	}
}

func liveValues(keys []*liveKey, v map[string]int64) []scanner.LiveValue {
	out := make([]scanner.LiveValue, len(keys))
	for i, k := range keys {
		out[i].Value = v[k.name]
	}
	return out
}

// poisson draws a Poisson count of mean m (normal beyond 50).
func poisson(rng *rand.Rand, m float64) float64 {
	if m > 50 {
		return math.Max(0, math.Round(m+math.Sqrt(m)*rng.NormFloat64()))
	}
	l, k, p := math.Exp(-m), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// TestLiveSampleKeepsItsKeys checks the sample's bookkeeping: a key seen again by a later sweep is
// not sampled twice, the largest values are kept apart and exactly, a key gone leaves, and a new
// window starts the sample over.
func TestLiveSampleKeepsItsKeys(t *testing.T) {
	flow := families(t)[0]
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	fs := &famSample{f: flow, g: store.Hour}
	fs.roll(now, shanghai)
	offerAll := func() {
		for i := range 1000 {
			fs.offer(fmt.Sprintf("k%d", i), int64(i), now, 100, 3, nil)
		}
	}
	offerAll()
	first := map[string]bool{}
	for _, k := range fs.sample {
		first[k.name] = true
	}
	offerAll() // a second sweep
	if len(fs.sample) != 100 || len(fs.top) != 3 || fs.top[0].name != "k999" || fs.top[2].name != "k997" {
		t.Fatalf("sample %d keys, top %v", len(fs.sample), fs.top)
	}
	lowest := math.Inf(1)
	for _, k := range fs.sample {
		if !first[k.name] {
			t.Errorf("%s joined the sample on the second sweep", k.name)
		}
		lowest = min(lowest, k.prio)
	}
	above := 0 // the sample is exactly the non-top keys of the highest priorities
	for i := range 997 {
		k := &liveKey{hash: keyHash(fmt.Sprintf("k%d", i))}
		k.setWeight(int64(i))
		if k.prio >= lowest {
			above++
		}
	}
	if above != 100 || !(fs.tau < lowest) {
		t.Errorf("%d non-top keys have a priority at or above the sample's lowest, want 100; tau %g, lowest %g", above, fs.tau, lowest)
	}
	gone := fs.sample[0]
	fs.drop(gone)
	fs.offer(gone.name, gone.value, now, 100, 3, nil) // seen again, it comes back: its priority is over tau
	if _, ok := fs.byName[gone.name]; !ok || len(fs.sample) != 100 {
		t.Errorf("a dropped key seen again did not come back")
	}
	fs.roll(now.Add(time.Hour), shanghai)
	if len(fs.sample) != 0 || len(fs.top) != 0 || !fs.win.Start.Equal(store.WindowAt(store.Hour, now.Add(time.Hour), shanghai).Start) {
		t.Errorf("the next hour kept %d sampled and %d top keys", len(fs.sample), len(fs.top))
	}
}

// TestLiveFamiliesTakeTurns: when the budget does not cover every family's largest keys, a read
// covers the families it can, in turn, so each is read every few Polls rather than none ever.
func TestLiveFamiliesTakeTurns(t *testing.T) {
	fams := make([]*famSample, 3)
	for i := range fams {
		fams[i] = &famSample{top: make([]*liveKey, 20)}
	}
	s := &liveSampler{}
	if got := s.inTurn(fams, 100); len(got) != 3 {
		t.Fatalf("a budget of 100 keys read %d of 3 families of 20 largest keys", len(got))
	}
	var order []int
	for range 3 {
		for _, fs := range s.inTurn(fams, 45) {
			order = append(order, slices.Index(fams, fs))
		}
	}
	if want := []int{0, 1, 2, 0, 1, 2}; !slices.Equal(order, want) {
		t.Fatalf("on 45 keys a read, families read in the order %v, want %v", order, want)
	}
	if got := s.inTurn(fams, 10); len(got) != 0 {
		t.Fatalf("a budget under one family's largest keys read %d families", len(got))
	}
}

// TestLiveTopKeysAloneAreNotTheWindow: a read that could afford only a family's largest keys,
// while the window holds others left out, says nothing of the window's total or rate (their sum
// would pass for all of it, exactly); when every key offered was read, their sum is exact.
func TestLiveTopKeysAloneAreNotTheWindow(t *testing.T) {
	var h htSum
	for _, v := range []float64{120, 80, 50} {
		h.exact(v)
	}
	if fig, ok := h.figure(0.01, true); ok {
		t.Fatalf("the largest keys alone, others left out, estimate the window as %+v", fig)
	}
	fig, ok := h.figure(1, false)
	if !ok || fig.Estimate != 250 || fig.Low != 250 || fig.High != 250 || fig.Coverage != 1 {
		t.Fatalf("every key offered read: %+v %v, want exactly 250", fig, ok)
	}
}
