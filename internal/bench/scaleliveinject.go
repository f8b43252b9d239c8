package bench

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// liveTick is how often the live rate's writer adds the events it owes and flushes them.
const liveTick = 20 * time.Millisecond

// liveTarget is one family the live measure writes into: its current hour's tuples (every key of
// the hour the load wrote: keys that exist) and the events a second asked for.
type liveTarget struct {
	sf     *scaleFam
	tuples [][]string
	rate   float64
}

// liveWriter writes a steady rate of events into each target with the store's batch writer, and
// keeps its own count of the events delivered, flush by flush: flush i began at start[i],
// returned at end[i], and brought target j's count to events[i][j]. Its events reached Redis
// somewhere in between.
type liveWriter struct {
	mu         sync.Mutex
	start, end []time.Time
	events     [][]int64
	err        error // the error that stopped it, other than its ctx's end
}

// run adds each target's rate of events a second, each to one of its tuples drawn uniformly (from
// a fixed seed), and flushes them every liveTick, until ctx ends. A flush that falls behind is
// caught up by the next.
func (lw *liveWriter) run(ctx context.Context, st *store.Store, targets []liveTarget) {
	w := st.NewWriter(store.WriterOptions{})
	rng := rand.New(rand.NewPCG(5, 7))
	tick := time.NewTicker(liveTick)
	defer tick.Stop()
	begun := time.Now()
	drawn := make([]int64, len(targets))
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		flushAt := time.Now()
		for j, tg := range targets {
			owed := int64(tg.rate*flushAt.Sub(begun).Seconds()) - drawn[j]
			for range owed {
				if err := w.Add(tg.sf.fam, tg.tuples[rng.IntN(len(tg.tuples))], 1, time.Time{}); err != nil {
					lw.err = err
					return
				}
			}
			drawn[j] += owed
		}
		if _, err := w.Flush(ctx); err != nil {
			if ctx.Err() == nil {
				lw.err = err
			}
			return
		}
		lw.mu.Lock()
		lw.start, lw.end, lw.events = append(lw.start, flushAt), append(lw.end, time.Now()), append(lw.events, append([]int64(nil), drawn...))
		lw.mu.Unlock()
	}
}

// by bounds target j's events delivered by t: at least those of the flushes that had returned, at
// most those of the flushes that had begun.
func (lw *liveWriter) by(j int, t time.Time) (lo, hi float64) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for i := range lw.events {
		if !lw.end[i].After(t) {
			lo = float64(lw.events[i][j])
		}
		if lw.start[i].Before(t) {
			hi = float64(lw.events[i][j])
		}
	}
	return lo, hi
}

// between bounds target j's events delivered from t0 to t1.
func (lw *liveWriter) between(j int, t0, t1 time.Time) (lo, hi float64) {
	lo0, hi0 := lw.by(j, t0)
	lo1, hi1 := lw.by(j, t1)
	return max(lo1-hi0, 0), hi1 - lo0
}

// loadWorkers is how many workers write the scale keyspace: one a core, at least two.
func loadWorkers() int { return max(runtime.NumCPU(), 2) }

// currentTuples is the dims tuples of every key the load wrote in family sf's current hour (sf
// the i-th family of total keys): the load's draws replayed, worker by worker, with nothing sent.
func currentTuples(sf *scaleFam, i int, total int64) ([][]string, error) {
	cur := sf.windows[0]
	var out [][]string
	workers := loadWorkers()
	quota, seed := sf.plan(i, total, workers)
	for worker := range workers {
		_, err := sf.generate(worker, workers, quota, seed, func(key string, _, expireAt int64) error {
			if expireAt != cur.expireAt {
				return nil
			}
			if _, dims, ok := sf.fam.Match(store.Hour, key, time.UTC); ok {
				out = append(out, dims)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
