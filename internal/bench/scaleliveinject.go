package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// liveTick is how often the live rate's writer adds the events it owes and flushes them.
const liveTick = 20 * time.Millisecond

// liveWriter writes a steady rate of events with the store's batch writer, and keeps its own
// count of the events delivered, flush by flush: flush i began at start[i], returned at end[i],
// and brought the count to events[i]. Its events reached Redis somewhere in between.
type liveWriter struct {
	mu         sync.Mutex
	start, end []time.Time
	events     []int64
	err        error // the error that stopped it, other than its ctx's end
}

// run adds rate events a second, each to one of tuples drawn uniformly (from a fixed seed), and
// flushes them every liveTick, until ctx ends. A flush that falls behind is caught up by the next.
func (lw *liveWriter) run(ctx context.Context, st *store.Store, f *store.Family, tuples [][]string, rate float64) {
	w := st.NewWriter(store.WriterOptions{})
	rng := rand.New(rand.NewPCG(5, 7))
	tick := time.NewTicker(liveTick)
	defer tick.Stop()
	begun := time.Now()
	var drawn, delivered int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		flushAt := time.Now()
		owed := int64(rate*flushAt.Sub(begun).Seconds()) - drawn
		for range owed {
			if err := w.Add(f, tuples[rng.IntN(len(tuples))], 1, time.Time{}); err != nil {
				lw.err = err
				return
			}
		}
		drawn += owed
		fr, err := w.Flush(ctx)
		if err != nil {
			if ctx.Err() == nil {
				lw.err = err
			}
			return
		}
		delivered += fr.Events
		lw.mu.Lock()
		lw.start, lw.end, lw.events = append(lw.start, flushAt), append(lw.end, time.Now()), append(lw.events, delivered)
		lw.mu.Unlock()
	}
}

// by bounds the events delivered by t: at least those of the flushes that had returned, at most
// those of the flushes that had begun.
func (lw *liveWriter) by(t time.Time) (lo, hi float64) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for i := range lw.events {
		if !lw.end[i].After(t) {
			lo = float64(lw.events[i])
		}
		if lw.start[i].Before(t) {
			hi = float64(lw.events[i])
		}
	}
	return lo, hi
}

// between bounds the events delivered from t0 to t1.
func (lw *liveWriter) between(t0, t1 time.Time) (lo, hi float64) {
	lo0, hi0 := lw.by(t0)
	lo1, hi1 := lw.by(t1)
	return max(lo1-hi0, 0), hi1 - lo0
}

// sweptSoFar is how many keys the console's sweep had returned on each of addrs' masters: all of
// them when a sweep has completed (every key written before it began was seen).
func sweptSoFar(st snapshot.Status, addrs []string) []int64 {
	out := make([]int64, len(addrs))
	if st.Partial == nil {
		if st.Snapshot != nil {
			for i := range out {
				out[i] = math.MaxInt64
			}
		}
		return out
	}
	if len(addrs) == 1 {
		out[0] = st.Partial.Scan.KeysSeen
		return out
	}
	for _, m := range st.Partial.Scan.Masters {
		for i, a := range addrs {
			if a == m.Addr {
				out[i] = m.KeysSeen
			}
		}
	}
	return out
}

// seenTuples finds the dims tuples of f's keys in window w (named name) among the keys the
// console's sweep has seen: it replays the sweep's SCAN on each master from the start at the
// same COUNT, which walks the server's hash table bucket by bucket in the same order (no key is
// added meanwhile: the injection has not begun), and stops short of the keys the sweep had
// returned by a twentieth, at least two pages, so that every key it takes was seen.
func seenTuples(ctx context.Context, nodes []*redis.Client, upTo []int64, count int, f *store.Family, w store.Window,
	name string) ([][]string, error) {
	var out [][]string
	prefix, suffix := f.Name()+":", ":"+name
	for i, n := range nodes {
		limit := upTo[i]
		if limit < math.MaxInt64 {
			limit -= max(limit/20, 2*int64(count))
		}
		var seen int64
		var cursor uint64
		for seen < limit {
			keys, next, err := n.Scan(ctx, cursor, "", int64(count)).Result()
			if err != nil {
				return nil, err
			}
			seen += int64(len(keys))
			for _, k := range keys {
				if !strings.HasPrefix(k, prefix) || !strings.HasSuffix(k, suffix) {
					continue
				}
				dims := strings.Split(k[len(prefix):len(k)-len(suffix)], ":")
				if back, err := f.Key(w, dims); err == nil && back == k {
					out = append(out, dims)
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return out, nil
}
