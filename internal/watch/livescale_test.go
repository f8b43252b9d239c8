package watch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// scaledWorld is a keyspace a first sweep is under way in: its keys in SCAN's order (a random
// order), the family's current-hour keys among them with their values, and the rate each is
// written at.
type scaledWorld struct {
	names []string // every key, in the order the sweep walks them; "" for a key of no family
	keys  []string // the family's keys, in that order
	value map[string]int64
	rate  map[string]float64
}

// newScaledWorld draws n keys, a share of them the family's keys of hour win, each with a value
// (1 + exponential, mean 8) and a rate: the same for every key (uniform writes), or in proportion
// to its value.
func newScaledWorld(rng *rand.Rand, flow *store.Family, win store.Window, trial, n int, share, total float64, byValue bool) scaledWorld {
	w := scaledWorld{names: make([]string, n), value: map[string]int64{}, rate: map[string]float64{}}
	var weight float64
	for i := range w.names {
		if rng.Float64() >= share {
			continue
		}
		k, err := flow.Key(win, []string{"app", "d" + strconv.Itoa(trial), strconv.Itoa(i)})
		if err != nil {
			panic(err)
		}
		w.names[i] = k
		w.keys = append(w.keys, k)
		w.value[k] = 1 + int64(rng.ExpFloat64()*8)
		w.rate[k] = 1
		if byValue {
			w.rate[k] = float64(w.value[k])
		}
		weight += w.rate[k]
	}
	for k := range w.rate {
		w.rate[k] *= total / weight
	}
	return w
}

// page is the sweep's page of keys [from, to).
func (w scaledWorld) page(flow *store.Family, win store.Window, from, to int) scanner.Page {
	p := scanner.Page{Seen: to - from}
	for _, name := range w.names[from:to] {
		if name != "" {
			p.Keys = append(p.Keys, scanner.Key{Name: name, Classified: store.Classified{Family: flow, Window: win},
				Value: strconv.FormatInt(w.value[name], 10)})
		}
	}
	return p
}

// TestLiveScaledFiguresCover draws many keyspaces a first sweep is under way in, written at a
// steady rate, and reads the family's live sample as the sweep goes on: its figures are scaled to
// the whole window from the pages swept so far. It counts how often the 95% intervals of the rate
// and of the window's total now (its values as the pages read them, and the growth since) hold
// the true figures: at least 90 times in 100, the sweep having seen 5% to 20% of the keys. With
// every sampled key read, nearly every trial has both figures; with a fifth of them read (a
// tighter budget), most trials' keys read saw too few writes for a rate, and say so.
func TestLiveScaledFiguresCover(t *testing.T) {
	for _, c := range []struct {
		name          string
		share         int
		withRate, min int
	}{{"every key read", 1 << 30, 180, 180}, {"a fifth read", 80, 40, 180}} {
		t.Run(c.name, func(t *testing.T) { checkScaledCover(t, c.share, c.withRate, c.min) })
	}
}

// checkScaledCover runs the trials reading share keys a read, and requires at least withRate
// trials with a rate and withTotal with a total, and 90% of each to hold the truth.
func checkScaledCover(t *testing.T, share, withRateMin, withTotalMin int) {
	const trials, n, pageKeys, size, reads = 200, 20_000, 100, 300, 10
	flow := families(t)[0]
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	win := store.WindowAt(store.Hour, now, shanghai)
	rng := rand.New(rand.NewPCG(21, 22))
	budget := liveBudget{dbsize: map[string]int64{"": n}}
	var rateIn, totalIn, withRate, withTotal int
	var rateWidth, totalWidth, swept, meanErr float64
	var below int
	for trial := range trials {
		world := newScaledWorld(rng, flow, win, trial, n, 0.6, 500, trial%2 == 1)
		s := newLiveSampler([]*store.Family{flow}, scanner.Options{Location: shanghai, Now: func() time.Time { return now },
			LiveSample: size})
		t0 := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
		clock := t0
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
		walk(n / 20) // 5% before the first read
		var lf snapshot.LiveFamily
		history := map[time.Time]map[string]int64{}
		for step := range reads + 1 {
			if step > 0 {
				clock = clock.Add(time.Second)
				for _, k := range world.keys {
					world.value[k] += int64(poisson(rng, world.rate[k]))
				}
				walk(n * 3 / 200) // 1.5% a second: 20% at the last read
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
		trueRate := grown / lf.ReadAt.Sub(lf.RateSince).Seconds()
		swept += lf.Swept / trials
		if r := lf.RatePerSec; r != nil {
			meanErr += r.Estimate/trueRate - 1
			if r.High < trueRate {
				below++
			}
			withRate++
			rateWidth += r.RelHalfWidth()
			if r.Low <= trueRate && trueRate <= r.High {
				rateIn++
			}
		}
		if tot := lf.Total; tot != nil {
			withTotal++
			totalWidth += tot.RelHalfWidth()
			if tot.Low <= total && total <= tot.High {
				totalIn++
			}
		}
		if lf.Partial || lf.Swept <= 0 || lf.Swept >= 1 || lf.RatePerSec == nil && !strings.Contains(lf.Note, "rate: ") {
			t.Fatalf("trial %d: not scaled: %+v", trial, lf)
		}
	}
	t.Logf("rate: mean error %+.1f%%, %d below", 100*meanErr/float64(max(withRate, 1)), below)
	t.Logf("%.1f%% swept: the rate in %d of %d trials with one (±%.1f%% mean), the total in %d of %d (±%.1f%%)",
		100*swept, rateIn, withRate, 100*rateWidth/math.Max(float64(withRate), 1), totalIn, withTotal, 100*totalWidth/math.Max(float64(withTotal), 1))
	if withRate < withRateMin || withTotal < withTotalMin {
		t.Errorf("a rate in %d and a total in %d of %d trials", withRate, withTotal, trials)
	}
	if rateIn < withRate*9/10 || totalIn < withTotal*9/10 {
		t.Errorf("95%% intervals held the rate %d times in %d and the total %d in %d", rateIn, withRate, totalIn, withTotal)
	}
}

// TestLiveScaledFiguresRefuseHeavyKeys: when the largest keys take most of the writes the pages
// seen saw, the figures are not scaled (no interval from the pages seen could say how far they
// are off), and the note says how much is swept and what budget would sweep the rest within a
// minute.
func TestLiveScaledFiguresRefuseHeavyKeys(t *testing.T) {
	flow := families(t)[0]
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, shanghai)
	fs := &famSample{f: flow, g: store.Hour, byName: map[string]*liveKey{}}
	fs.roll(now, shanghai)
	dbsize := map[string]int64{"": 100_000}
	at := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	values := map[string]int64{}
	for pg := range 40 {
		p := scanner.Page{Seen: 100}
		fs.frame.add(p, dbsize)
		cl := fs.frame.cluster(p)
		for i := range 30 {
			name := fmt.Sprintf("flow:count:app:%d:%d:x", pg, i)
			values[name] = 10
			if pg == 7 && i == 0 {
				values[name] = 50_000 // a heavy key
			}
			fs.frame.offered(cl, values[name])
			fs.offer(name, values[name], at, 500, liveExact, cl)
		}
	}
	b := liveBudget{dbsize: dbsize, swept: 1000, keyCost: 2.5e-6, maxShare: 0.008, ceiling: 20_000}
	keys, tau := fs.toRead(1 << 30)
	fs.figures(keys, liveValues(keys, values), tau, at, nil, b)
	for k := range values {
		values[k] += 2
	}
	values["flow:count:app:7:0:x"] += 5000
	keys, tau = fs.toRead(1 << 30)
	lf := fs.figures(keys, liveValues(keys, values), tau, at.Add(10*time.Second), nil, b)
	if lf.Total != nil || lf.RatePerSec != nil || lf.Partial {
		t.Fatalf("a page that holds most of the window gave figures: %+v", lf)
	}
	for _, want := range []string{"total now and rate: the largest keys hold 67% of the writes seen", "4% of the keys swept since the window began", "the rest in 1m36s at this budget",
		`within a minute at max_redis_time = "0.89%"`} {
		if !strings.Contains(lf.Note, want) {
			t.Errorf("note %q lacks %q", lf.Note, want)
		}
	}
}
