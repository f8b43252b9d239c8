package watch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestLiveRateOfInjectedTraffic injects a steady rate of events with the store's batch writer
// into a family of 50,000 current-hour keys on a real server, and checks that the Watcher's live
// rate, read between sweeps from a sample of the keys, holds the true rate (counted by the writer
// itself over the same interval) and the live total the true total, and that the live reads were
// charged to the sweep's budget.
func TestLiveRateOfInjectedTraffic(t *testing.T) {
	srv := redistest.Start(t)
	checkLiveRate(t, srv.Client(t), 50_000)
}

// TestLiveRateOnACluster does the same on a three-master cluster, where the live MGETs go per
// hash slot to the master that holds it.
func TestLiveRateOnACluster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	checkLiveRate(t, c.Client(t), 20_000)
}

// liveTraffic is the writer's own count of the events it has written, flush by flush: flush i
// began at start[i], returned at end[i], and brought the count to events[i]. Its events reached
// Redis somewhere in between.
type liveTraffic struct {
	mu         sync.Mutex
	start, end []time.Time
	events     []int64
}

// eventsBy bounds the events written by t: at least those of the flushes that had returned, at
// most those of the flushes that had begun.
func (lt *liveTraffic) eventsBy(t time.Time) (lo, hi float64) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for i := range lt.events {
		if !lt.end[i].After(t) {
			lo = float64(lt.events[i])
		}
		if lt.start[i].Before(t) {
			hi = float64(lt.events[i])
		}
	}
	return lo, hi
}

func checkLiveRate(t *testing.T, rdb redis.UniversalClient, n int) {
	ctx := t.Context()
	redistest.ClearOfHourEnd(t, 2*time.Minute) // one hour window throughout
	st := store.New(rdb, store.Options{Location: shanghai})
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	flow := families(t)[0]
	dims := make([][]string, n)
	var prefilled int64
	win := store.WindowAt(store.Hour, st.Now(), shanghai)
	pipe := rdb.Pipeline()
	for i := range dims {
		dims[i] = []string{"app", fmt.Sprintf("d%d", i%97), fmt.Sprintf("10.0.%d.%d", i/250, i%250)}
		k, err := flow.Key(win, dims[i])
		if err != nil {
			t.Fatal(err)
		}
		v := int64(1 + i%50)
		if i < 3 {
			v = 1_000_000 // the hottest keys: read exactly
		}
		prefilled += v
		pipe.Set(ctx, k, v, 3*time.Hour)
		if pipe.Len() == 1000 || i == n-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	w := New(rdb, []*store.Family{flow}, scanner.Options{Location: shanghai, Now: st.Now, KeysPerSecond: 500_000, TopK: 5})
	redistest.Eventually(t, "a first sweep", 30*time.Second, func() bool {
		s, err := w.Poll(ctx, 200*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		return s.Sweep.Completed
	})

	traffic := &liveTraffic{}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		injectSteady(wctx, t, st, flow, dims, traffic)
	}()
	defer func() { stop(); wg.Wait() }()

	var got *snapshot.LiveFamily
	var reads, charged int64
	redistest.Eventually(t, "a live rate over 8s", 60*time.Second, func() bool {
		before := w.sweep.Pacer().Spent()
		s, err := w.Poll(ctx, 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		reads, charged = int64(s.LiveReads), w.sweep.Pacer().Spent()-before
		if len(s.Families) == 1 && s.Families[0].RatePerSec != nil && s.Families[0].ReadAt.Sub(s.Families[0].RateSince) >= 8*time.Second {
			got = &s.Families[0]
			return true
		}
		return false
	})
	// The writer's count brackets the events between the two reads: a flush under way at a read
	// may have reached Redis before it or after.
	span := got.ReadAt.Sub(got.RateSince).Seconds()
	lo0, hi0 := traffic.eventsBy(got.RateSince)
	lo1, hi1 := traffic.eventsBy(got.ReadAt)
	rateLo, rateHi := (lo1-hi0)/span, (hi1-lo0)/span
	trueRate := (rateLo + rateHi) / 2
	totalLo, totalHi := float64(prefilled)+lo1, float64(prefilled)+hi1
	r, tot := got.RatePerSec, got.Total
	t.Logf("%d keys (%s), %d top + %d sampled: rate ≈%.0f/s [%.0f, %.0f] (±%.1f%%), true %.0f–%.0f/s over %.1fs; total ≈%.0f [%.0f, %.0f], true %.0f–%.0f",
		got.Keys, got.KeysFrom, got.Top, got.Sampled, r.Estimate, r.Low, r.High, 100*r.RelHalfWidth(), rateLo, rateHi, span,
		tot.Estimate, tot.Low, tot.High, totalLo, totalHi)
	if got.Keys != int64(n) || got.KeysFrom != "snapshot" || got.Partial || got.Top != liveExact || got.Sampled > scanner.DefaultLiveSample || got.Sampled < scanner.DefaultLiveSample-liveExact {
		t.Errorf("live family %+v: want %d keys from the snapshot, %d top and %d sampled (less those of them among the top)", got, n, liveExact, scanner.DefaultLiveSample)
	}
	// The sample is one draw, fixed by the key names (which hold the hour, so each hour draws
	// another): the rate and the total are each held to their 99% interval, which a sound
	// estimate misses one draw in a hundred, and within 10%. A bound of 5% was tighter than the
	// interval itself (±5.2% at 95%): a draw 5.5% high held every run for a whole hour. The 95%
	// intervals' coverage over many draws is TestLiveFiguresCover's and
	// TestLiveRateHoldsWhileSweepsOfferKeysAgain's to count, and bench --scale measures it
	// against an injected rate.
	if !within99(r.Estimate, r.Low, r.High, rateLo, rateHi) || relErr(r.Estimate, trueRate) > 0.1 {
		t.Errorf("live rate ≈%.0f [%.0f, %.0f] misses the injected %.0f–%.0f/s", r.Estimate, r.Low, r.High, rateLo, rateHi)
	}
	if !within99(tot.Estimate, tot.Low, tot.High, totalLo, totalHi) || relErr(tot.Estimate, (totalLo+totalHi)/2) > 0.1 {
		t.Errorf("live total ≈%.0f [%.0f, %.0f] misses the true %.0f–%.0f", tot.Estimate, tot.Low, tot.High, totalLo, totalHi)
	}
	// Besides the top keys and the sample, a poll reads the base read's top keys that left the
	// top list since: the rate counts them as that read saw them.
	if reads < int64(got.Top+got.Sampled) || reads > int64(got.Top+got.Sampled+liveExact) || charged < reads {
		t.Errorf("the poll read %d keys live (want %d, and at most %d more) and charged the budget %d", reads, got.Top+got.Sampled, liveExact, charged)
	}
}

// within99 reports whether the truth, somewhere in [lo, hi], may lie inside the 99% interval of an
// estimate whose 95% interval is [low, high].
func within99(est, low, high, lo, hi float64) bool {
	wide := (high - low) / 2 * (2.576 / 1.96)
	return hi >= est-wide && lo <= est+wide
}

func relErr(est, truth float64) float64 {
	if truth == 0 {
		return est
	}
	d := est/truth - 1
	return max(d, -d)
}

// injectSteady writes about 10,000 events a second until ctx ends: a third into the hottest key,
// the rest spread evenly over every key, from a fixed seed, so the sample sees much the same
// traffic each run and the check is not a coin that lands outside a 95% interval one run in
// twenty (over seeds it does, as it should: TestLiveFiguresCover counts how often). Each flush's
// count is recorded with when it began and returned.
func injectSteady(ctx context.Context, t *testing.T, st *store.Store, f *store.Family, dims [][]string, lt *liveTraffic) {
	wr := st.NewWriter(store.WriterOptions{})
	rng := rand.New(rand.NewPCG(3, 2))
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var total int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		began := time.Now()
		for range 200 {
			d := dims[0]
			if rng.IntN(3) != 0 {
				d = dims[rng.IntN(len(dims))]
			}
			if err := wr.Add(f, d, 1, time.Time{}); err != nil {
				t.Error(err)
				return
			}
		}
		res, err := wr.Flush(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.Error(err)
			}
			return
		}
		total += res.Events
		lt.mu.Lock()
		lt.start, lt.end, lt.events = append(lt.start, began), append(lt.end, time.Now()), append(lt.events, total)
		lt.mu.Unlock()
	}
}
