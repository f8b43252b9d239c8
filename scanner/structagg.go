package scanner

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// structAgg folds the structure keys of a sweep; like the counters' aggregate it holds what the
// structures number and a few top keys, not the keys.
type structAgg struct {
	specs     Structures
	limiters  []limAgg
	locks     []lockAgg
	uniques   []uniqAgg
	lockNoTTL probAgg
	queues    [][]KeyCount // per delay queue pattern: the deepest queues found, deepest first
	queuesN   []int64      // per pattern: how many queues were found
}

type limAgg struct {
	keys, hits, atLimit, overLimit, wrongType int64
	top                                       []KeyCount // largest first
}

type lockAgg struct {
	held, noTTL, wrongType int64
	examples               []LockHolder
}

type uniqAgg struct {
	windows   map[winKey]*uniqWin
	wrongType int64
}

type uniqWin struct {
	w           store.Window
	keys, count int64
	// best is the dims tuple with the largest count, for the unions.
	best      []string
	bestCount int64
}

// maxTopKeys is how many keys a limiter's top list keeps; maxLockExamples how many held locks a
// lock pattern shows; maxPatternQueues how many of a delay queue pattern's queues are reported.
const (
	maxTopKeys       = 10
	maxLockExamples  = 5
	maxPatternQueues = 20
)

func newStructAgg(s Structures) *structAgg {
	a := &structAgg{specs: s, limiters: make([]limAgg, len(s.Limiters)), locks: make([]lockAgg, len(s.Locks)),
		uniques: make([]uniqAgg, len(s.Uniques)), queues: make([][]KeyCount, len(s.DelayQueues)), queuesN: make([]int64, len(s.DelayQueues))}
	for i := range a.uniques {
		a.uniques[i].windows = map[winKey]*uniqWin{}
	}
	return a
}

func (a *structAgg) add(k *Key, now time.Time, opt SnapshotOptions) {
	switch k.kind {
	case kindLimiter:
		if k.spec >= len(a.limiters) {
			return
		}
		l, spec := &a.limiters[k.spec], a.specs.Limiters[k.spec]
		n, ok := ParseInteger(k.Value) // a fixed limiter's GET may hold anything
		if k.WrongType || !ok {
			l.wrongType++
			return
		}
		l.keys++
		l.hits = addSat(l.hits, n)
		switch {
		case n > spec.Limit:
			l.overLimit++
		case n == spec.Limit:
			l.atLimit++
		}
		var i int
		if l.top, i = topSlot(l.top, n, maxTopKeys, keyCount); i >= 0 {
			l.top[i] = KeyCount{Key: Escape(k.Name), Dims: dimsMap(spec.Pattern.Dims(), k.Dims), Count: n, TTLMS: ttlMS(k.TTL)}
		}
	case kindLock:
		if k.spec >= len(a.locks) {
			return
		}
		l := &a.locks[k.spec]
		if k.WrongType {
			l.wrongType++
			return
		}
		l.held++
		ex := LockHolder{Key: Escape(k.Name), Token: Escape(k.Value), TTLMS: ttlMS(k.TTL), AgeMS: -1}
		if ms, ok := tokenTime(k.Value); ok {
			ex.AgeMS = max(now.UnixMilli()-ms, 0)
		}
		if k.TTL == NoTTL {
			l.noTTL++
			a.lockNoTTL.keys++
			if len(a.lockNoTTL.examples) < opt.Examples {
				a.lockNoTTL.examples = append(a.lockNoTTL.examples, Example{Family: "lock:" + a.specs.Locks[k.spec].Name,
					Key: ex.Key, TTLMS: -1, Value: ex.Token})
			}
		}
		if len(l.examples) < maxLockExamples {
			l.examples = append(l.examples, ex)
		}
	case kindDelayQueue:
		if k.spec >= len(a.queues) || k.WrongType {
			return
		}
		a.queuesN[k.spec]++
		n, _ := strconv.ParseInt(k.Value, 10, 64)
		var i int
		if a.queues[k.spec], i = topSlot(a.queues[k.spec], n, maxPatternQueues, keyCount); i >= 0 {
			a.queues[k.spec][i] = KeyCount{Key: k.Name, Count: n} // the raw name: fill reads it, then escapes it
		}
	case kindUnique:
		if k.spec >= len(a.uniques) {
			return
		}
		u := &a.uniques[k.spec]
		if k.WrongType {
			u.wrongType++
			return
		}
		wk := winKey{k.window.Granularity, k.window.Start.Unix()}
		w := u.windows[wk]
		if w == nil {
			w = &uniqWin{w: k.window}
			u.windows[wk] = w
		}
		n, _ := strconv.ParseInt(k.Value, 10, 64)
		w.keys++
		w.count = addSat(w.count, n)
		if w.best == nil || n > w.bestCount {
			w.best, w.bestCount = k.Dims, n
		}
	}
}

func keyCount(kc KeyCount) int64 { return kc.Count }

// tokenTime reads the acquisition time hourglass's locks put in their tokens ("<unix ms>-<hex>").
func tokenTime(token string) (int64, bool) {
	ms, _, ok := strings.Cut(token, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, err == nil && n > 1e12
}

// fill writes the structure sections into snap, reading what a sweep does not: the queues by
// their keys, the limiters' hourly counters, the unions.
func (a *structAgg) fill(ctx context.Context, rdb redis.UniversalClient, snap *Snapshot, now time.Time, opt SnapshotOptions) {
	snap.DelayQueues, snap.ListQueues = []DelayQueue{}, []ListQueue{}
	snap.Limiters, snap.Uniques, snap.Locks = []Limiter{}, []Unique{}, []Lock{}
	for i, q := range a.specs.DelayQueues {
		keys := []string{q.Key}
		if q.Pattern != nil {
			keys = keys[:0]
			for _, kc := range a.queues[i] {
				keys = append(keys, kc.Key)
			}
		}
		for _, key := range keys {
			snap.DelayQueues = append(snap.DelayQueues, delayQueueOf(ctx, rdb, q, key, now))
		}
	}
	for _, q := range a.specs.ListQueues {
		lq := ListQueue{Name: q.Name, Key: Escape(q.Key)}
		if rdb != nil {
			st, err := store.ListQueueStatsOf(ctx, rdb, q.Key, store.ProcessingKey(q.Key))
			if err != nil {
				lq.Error = err.Error()
			} else {
				lq.Length, lq.Processing = st.Length, st.Processing
			}
		}
		snap.ListQueues = append(snap.ListQueues, lq)
	}
	hour := store.WindowAt(store.Hour, now, opt.Location)
	for i, spec := range a.specs.Limiters {
		l := a.limiters[i]
		out := Limiter{Name: spec.Name, Kind: spec.Kind.String(), WindowMS: spec.Window.Milliseconds(), Limit: spec.Limit,
			Keys: l.keys, Hits: l.hits, AtLimit: l.atLimit, OverLimit: l.overLimit, WrongType: l.wrongType, Top: l.top,
			hour: hour.Start.Unix()}
		if out.Top == nil {
			out.Top = []KeyCount{}
		}
		if rdb != nil {
			stats := store.LimiterStats(spec.Name)
			ka, _ := stats.Key(hour, []string{spec.Name, "allowed"})
			kr, _ := stats.Key(hour, []string{spec.Name, "rejected"})
			if vals, err := rdb.MGet(ctx, ka, kr).Result(); err == nil && len(vals) == 2 {
				out.Allowed, _ = strconv.ParseInt(str(vals[0]), 10, 64)
				out.Rejected, _ = strconv.ParseInt(str(vals[1]), 10, 64)
			}
		}
		snap.Limiters = append(snap.Limiters, out)
	}
	for i, spec := range a.specs.Uniques {
		u := a.uniques[i]
		f := spec.Family
		out := Unique{Name: f.Name(), Kind: spec.Kind.String(), Windows: []UniqueWindow{}, UnionDims: map[string]string{},
			WrongType: u.wrongType}
		wins := make([]*uniqWin, 0, len(u.windows))
		for _, w := range u.windows {
			wins = append(wins, w)
		}
		sort.Slice(wins, func(i, j int) bool {
			if wins[i].w.Granularity != wins[j].w.Granularity {
				return wins[i].w.Granularity < wins[j].w.Granularity
			}
			return wins[i].w.Start.Before(wins[j].w.Start)
		})
		for _, w := range wins {
			wf, _ := f.Format(w.w.Granularity)
			out.Windows = append(out.Windows, UniqueWindow{Granularity: w.w.Granularity.String(), Window: wf.Format(w.w),
				Keys: w.keys, Count: w.count, Current: w.w.Contains(now)})
		}
		if f.Has(store.Day) && rdb != nil {
			today := store.WindowAt(store.Day, now, opt.Location)
			if w := u.windows[winKey{store.Day, today.Start.Unix()}]; w != nil {
				out.UnionDims = dimsMap(f.Dims(), w.best)
				for _, days := range []int{7, 30} {
					var keys []string
					d := today
					for range days {
						if k, err := f.Key(d, w.best); err == nil {
							keys = append(keys, k)
						}
						d = d.Prev()
					}
					n, err := store.UnionOf(ctx, rdb, spec.Kind, keys)
					if err != nil {
						out.Error = err.Error()
					}
					if days == 7 {
						out.Union7d = n
					} else {
						out.Union30d = n
					}
				}
			}
		}
		snap.Uniques = append(snap.Uniques, out)
	}
	for i, spec := range a.specs.Locks {
		l := a.locks[i]
		out := Lock{Name: spec.Name, Held: l.held, NoTTL: l.noTTL, WrongType: l.wrongType, Examples: l.examples}
		if out.Examples == nil {
			out.Examples = []LockHolder{}
		}
		snap.Locks = append(snap.Locks, out)
	}
	p := &snap.TTLHealth.LockNoTTL
	p.Keys = a.lockNoTTL.keys
	p.Examples = a.lockNoTTL.examples
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// delayQueueOf reads one delay queue.
func delayQueueOf(ctx context.Context, rdb redis.UniversalClient, q DelayQueueSpec, key string, now time.Time) DelayQueue {
	dq := DelayQueue{Name: q.Name, Key: Escape(key), Schedule: map[string]int64{}, NextDueInMS: -1}
	if rdb == nil {
		return dq
	}
	st, err := store.DelayQueueStatsOf(ctx, rdb, key, store.InFlightKey(key), q.Unit, now)
	if err != nil {
		dq.Error = err.Error()
		return dq
	}
	dq.Depth, dq.Due, dq.InFlight = st.Depth, st.Due, st.InFlight
	dq.OldestDueAgeMS = st.Lag.Milliseconds()
	if st.NextIn >= 0 {
		dq.NextDueInMS = st.NextIn.Milliseconds()
	}
	for i, label := range store.ScheduleLabels {
		dq.Schedule[label] = st.Schedule[i]
	}
	return dq
}
