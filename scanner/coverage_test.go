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

// The keyspace the intervals' trials are drawn from: trial families of skewed values, half of
// them behind hash tags (16 items a tag, all in one slot and on one master), and keys no family
// claims.
const (
	trialFamilies = 20
	trialKeys     = 3000 // each family's keys, all in the current hour
	trialFiller   = 40000
	trialShare    = 0.05 // each stretch's share of the keyspace
)

// trialWorld is what was written: the families, each one's keys and total, and their hour.
type trialWorld struct {
	fams         []*store.Family
	keys, totals []float64
	hour         time.Time
}

// writeTrialWorld writes the trial keyspace with values drawn from fixed seeds: 1 + an
// exponential or 1 + a log-normal of shape 1.2 (alternating in pairs), of a mean or median from 2
// to 200, as bench --scale's trial families are.
func writeTrialWorld(t *testing.T, rdb redis.UniversalClient) trialWorld {
	t.Helper()
	now := time.Now().In(shanghai)
	w := trialWorld{hour: store.WindowAt(store.Hour, now, shanghai).Start}
	pipe := rdb.Pipeline()
	flush := func(at int) {
		if pipe.Len() < at {
			return
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range trialFamilies {
		rng := rand.New(rand.NewPCG(uint64(i), 41))
		name := fmt.Sprintf("c%02d", i)
		pattern := name + ":<a>:<b>:<window>"
		if i%2 == 1 {
			pattern = name + ":{<grp>}:<item>:<window>"
		}
		f, err := store.NewFamily(store.FamilySpec{Name: name, Pattern: pattern, HourFormat: "yyyyMMddHH", HourRetention: 2 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		mean := math.Exp(math.Log(2) + rng.Float64()*math.Log(100))
		var keys, total float64
		for k := range trialKeys {
			v := 1 + int64(rng.ExpFloat64()*mean)
			if (i/2)%2 == 1 {
				v = 1 + int64(mean*math.Exp(1.2*rng.NormFloat64()))
			}
			pipe.Set(t.Context(), key(t, f, store.Hour, now, fmt.Sprint("g", k/16), fmt.Sprint(k)), v, 2*time.Hour)
			keys, total = keys+1, total+float64(v)
			flush(5000)
		}
		w.fams, w.keys, w.totals = append(w.fams, f), append(w.keys, keys), append(w.totals, total)
	}
	for i := range trialFiller {
		pipe.Set(t.Context(), fmt.Sprint("other:", i), "x", 2*time.Hour)
		flush(5000)
	}
	flush(1)
	return w
}

// sweepStretches sweeps the whole keyspace once and sets apart each stretch of share of its keys:
// an Aggregator fed that stretch's pages alone, as a sweep begun there would read them (SCAN
// from a cursor walks the buckets after it). It returns each stretch's Snapshot of a sweep under
// way. A stretch in which a master gave no page is no trial, and is left out.
func sweepStretches(t *testing.T, rdb redis.UniversalClient, fams []*store.Family, share float64, total int) []*snapshot.Snapshot {
	t.Helper()
	// A budget keeps a cluster's masters in step, each at its share.
	opt := Options{Count: 100, KeysPerSecond: 100_000, Location: shanghai}
	s := New(rdb, fams, opt)
	agg, seen := NewAggregator(fams, opt), 0
	var snaps []*snapshot.Snapshot
	err := s.Run(t.Context(), func(p Page) {
		agg.Add(p)
		if seen += p.Seen; float64(seen) < share*float64(total) {
			return
		}
		prog := s.Progress()
		for addr, mp := range prog.Masters {
			mp.Done = false // a stretch's pages of a master that ended in it are a sample of it
			prog.Masters[addr] = mp
		}
		agg.SetProgress(prog)
		if snap := agg.Snapshot(false); len(prog.Masters) == 1 || len(snap.Scan.Masters) == len(prog.Masters) {
			snaps = append(snaps, snap)
		}
		agg, seen = NewAggregator(fams, opt), 0
	})
	if err != nil {
		t.Fatal(err)
	}
	return snaps
}

// trialTally counts the trials of one figure: those with an interval, those whose interval held
// the truth, and the misses on each side.
type trialTally struct {
	trials, withInterval, inside, below, above int
}

func (tt *trialTally) add(e *snapshot.Estimate, truth float64) {
	tt.trials++
	if e == nil || e.SoFar || e.High == nil {
		return
	}
	tt.withInterval++
	switch {
	case truth < e.Low:
		tt.below++
	case truth > *e.High:
		tt.above++
	default:
		tt.inside++
	}
}

func (tt trialTally) String() string {
	return fmt.Sprintf("%d of %d with an interval held the truth (%.1f%%); %d trials; truth below %d, above %d",
		tt.inside, tt.withInterval, 100*float64(tt.inside)/float64(max(tt.withInterval, 1)), tt.trials, tt.below, tt.above)
}

// TestIntervalsHoldTheTruthOverTrials is a benchmark of the estimates' intervals as a test, on a
// real server and a real 3-master cluster: a fixed number of trials, with deterministic values,
// and no clock in what it asserts. The keyspace is swept once in 20 stretches of 5% of its keys;
// each stretch's estimates of each trial family's keys and hour total are one trial each, 400 a
// figure. The 95% intervals must hold the truth in at least 90% of the trials that have one:
// with intervals that hold it 95% of the time, fewer than 90% of 400 is over four standard
// deviations away. Before the intervals were corrected for skewness, they held the server's hour
// totals in 92.9% and 93.9% of two runs, the truth above them 23 and 21 times and below 4 and 2;
// with it, 95.8% (10 above, 6 below). The correction itself is held to its balance by
// internal/estimate's TestSkewedFigureMissesOnBothSides.
func TestIntervalsHoldTheTruthOverTrials(t *testing.T) {
	for _, tc := range []struct {
		name string
		rdb  func(t *testing.T) redis.UniversalClient
	}{
		{"server", func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3).Client(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := tc.rdb(t)
			w := writeTrialWorld(t, rdb)
			snaps := sweepStretches(t, rdb, w.fams, trialShare, trialFamilies*trialKeys+trialFiller)
			// 20 stretches of 5% on a server; on a cluster a master's last page may carry a stretch
			// past its end, and a few fewer fit.
			if len(snaps) < 15 {
				t.Fatalf("%d stretches of 5%%, want at least 15 of the 20", len(snaps))
			}
			var keys, totals trialTally
			for _, snap := range snaps {
				for i, f := range w.fams {
					fs := snap.Family(f.Name())
					if fs == nil {
						t.Fatalf("no family %s in a stretch's snapshot", f.Name())
					}
					keys.add(fs.KeysEstimate, w.keys[i])
					var hour *snapshot.Estimate
					for _, ws := range fs.Windows {
						if ws.Granularity == store.Hour.String() && ws.Start.Equal(w.hour) {
							hour = ws.TotalEstimate
						}
					}
					totals.add(hour, w.totals[i])
				}
			}
			t.Logf("%d stretches; keys: %v", len(snaps), keys)
			t.Logf("hour totals: %v", totals)
			for what, tt := range map[string]trialTally{"keys": keys, "hour totals": totals} {
				if tt.withInterval < tt.trials*9/10 || tt.inside*10 < tt.withInterval*9 {
					t.Errorf("%s: %v; want an interval in nine trials of ten, holding the truth in 90%% or more", what, tt)
				}
			}
		})
	}
}
