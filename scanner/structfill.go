package scanner

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// fill writes the structure sections into snap, reading what a sweep does not: the queues by
// their keys, the limiters' hourly counters, the unions (charged to pace, the sweep's budget;
// nil for none).
func (a *structAgg) fill(ctx context.Context, rdb redis.UniversalClient, snap *Snapshot, now time.Time, opt SnapshotOptions, pace *pacer) {
	snap.DelayQueues = a.delayQueues(ctx, rdb, now)
	snap.ListQueues = a.listQueues(ctx, rdb)
	snap.JobQueues = a.jobQueues(ctx, rdb, now)
	snap.Warnings = a.claims.warnings()
	snap.Limiters = a.limiterStats(ctx, rdb, store.WindowAt(store.Hour, now, opt.Location))
	snap.Uniques = a.uniqueStats(ctx, rdb, now, opt.Location, pace)
	snap.Locks = a.lockStats()
	p := &snap.TTLHealth.LockNoTTL
	p.Keys = a.lockNoTTL.keys
	p.Examples = a.lockNoTTL.examples
}

// delayQueues reads each delay queue: a spec's one key, or the deepest queues its pattern found
// (a pattern that found none gives one row that says so).
func (a *structAgg) delayQueues(ctx context.Context, rdb redis.UniversalClient, now time.Time) []DelayQueue {
	out := []DelayQueue{}
	for i, q := range a.specs.DelayQueues {
		if q.Pattern == nil {
			out = append(out, delayQueueOf(ctx, rdb, q, q.Key, now))
			continue
		}
		if len(a.queues[i]) == 0 {
			out = append(out, DelayQueue{Name: q.Name, Pattern: Escape(q.Pattern.String()), Missing: true, Unit: q.Unit.String(),
				Schedule: map[string]int64{}, Warning: "no key matches the pattern"})
		}
		for _, kc := range a.queues[i] {
			dq := delayQueueOf(ctx, rdb, q, kc.Key, now)
			dq.Pattern = Escape(q.Pattern.String())
			out = append(out, dq)
		}
	}
	return out
}

// listQueues reads each list queue's length and the tasks it has in processing: a spec's one
// key, or the longest lists its pattern found.
func (a *structAgg) listQueues(ctx context.Context, rdb redis.UniversalClient) []ListQueue {
	out := []ListQueue{}
	for i, q := range a.specs.ListQueues {
		if q.Pattern == nil {
			out = append(out, listQueueOf(ctx, rdb, q, q.Key))
			continue
		}
		if len(a.lists[i]) == 0 {
			out = append(out, ListQueue{Name: q.Name, Pattern: Escape(q.Pattern.String()), Missing: true,
				Error: "no key matches the pattern"})
		}
		for _, kc := range a.lists[i] {
			lq := listQueueOf(ctx, rdb, q, kc.Key)
			lq.Pattern = Escape(q.Pattern.String())
			out = append(out, lq)
		}
	}
	return out
}

// listQueueOf reads one list queue.
func listQueueOf(ctx context.Context, rdb redis.UniversalClient, q ListQueueSpec, key string) ListQueue {
	processing := q.Processing.Of(key, store.ProcessingKey)
	lq := ListQueue{Name: q.Name, Key: Escape(key), RawKey: key, ProcessingKey: Escape(processing),
		Ref: QueueRef{Kind: QueueList, Name: q.Name, Key: key, queue: store.ListQueueOf(key, processing), where: key}}
	if rdb == nil {
		return lq
	}
	st, err := lq.Ref.queue.Stats(ctx, rdb, time.Time{})
	if err != nil {
		lq.Error = err.Error()
	}
	lq.Length, lq.Processing, lq.Missing = st.List.Length, st.List.Processing, st.List.Missing
	return lq
}

// limiterStats renders each limiter's aggregate with the decisions hourglass's limiter counted
// in hour.
func (a *structAgg) limiterStats(ctx context.Context, rdb redis.UniversalClient, hour store.Window) []Limiter {
	out := []Limiter{}
	for i, spec := range a.specs.Limiters {
		l := a.limiters[i]
		lim := Limiter{Name: spec.Name, Layout: spec.Layout.String(), Kind: spec.Kind.String(), WindowMS: spec.Window.Milliseconds(), Limit: spec.Limit,
			Keys: l.keys, AtLimit: l.atLimit, OverLimit: l.overLimit, WrongType: l.wrongType, Top: l.top,
			Unknown: l.unknown, UnknownNote: l.unknownWhy, hour: hour.Start.Unix()}
		lim.Hits, lim.HitsSaturated = l.hits.int64()
		lim.RefusedInWindow, lim.RefusedSaturated = l.refused.int64()
		if spec.Layout != store.Hourglass {
			lim.Kind = ""
			out = append(out, lim) // a library's decisions are not counted by hourglass
			continue
		}
		if lim.Top == nil {
			lim.Top = []KeyCount{}
		}
		if rdb != nil {
			stats := store.LimiterStats(spec.Name)
			ka, _ := stats.Key(hour, []string{spec.Name, "allowed"})
			kr, _ := stats.Key(hour, []string{spec.Name, "rejected"})
			if vals, err := rdb.MGet(ctx, ka, kr).Result(); err == nil && len(vals) == 2 {
				lim.Allowed, _ = strconv.ParseInt(str(vals[0]), 10, 64)
				lim.Rejected, _ = strconv.ParseInt(str(vals[1]), 10, 64)
			}
		}
		out = append(out, lim)
	}
	return out
}

// uniqueStats renders each unique family's windows and, for a family with days, the unions of
// its busiest dims today.
func (a *structAgg) uniqueStats(ctx context.Context, rdb redis.UniversalClient, now time.Time, loc *time.Location, pace *pacer) []Unique {
	out := []Unique{}
	for i, spec := range a.specs.Uniques {
		u := a.uniques[i]
		f := spec.Family
		uq := Unique{Name: f.Name(), Kind: spec.Kind.String(), Windows: []UniqueWindow{}, UnionDims: map[string]string{},
			WrongType: u.wrongType}
		for _, w := range sortedWindows(u.windows) {
			wf, _ := f.Format(w.w.Granularity)
			uw := UniqueWindow{Granularity: w.w.Granularity.String(), Window: wf.Format(w.w), Keys: w.keys, Current: w.w.Contains(now)}
			uw.Count, uw.Saturated = w.count.int64()
			uq.Windows = append(uq.Windows, uw)
		}
		if f.Has(store.Day) && rdb != nil {
			today := store.WindowAt(store.Day, now, f.Zone(loc))
			if w := u.windows[winKey{store.Day, today.Start.Unix()}]; w != nil {
				uq.UnionDims = dimsMap(f.Dims(), w.best)
				readUnions(ctx, rdb, spec, today, w.best, &uq, pace)
			}
		}
		out = append(out, uq)
	}
	return out
}

// lockStats renders each lock pattern's aggregate.
func (a *structAgg) lockStats() []Lock {
	out := []Lock{}
	for i, spec := range a.specs.Locks {
		l := a.locks[i]
		lk := Lock{Name: spec.Name, Held: l.held, NoTTL: l.noTTL, WrongType: l.wrongType, Examples: l.examples}
		if lk.Examples == nil {
			lk.Examples = []LockHolder{}
		}
		out = append(out, lk)
	}
	return out
}

// str is an MGET reply's string: "" for a key that is not there.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// delayQueueOf reads one delay queue.
func delayQueueOf(ctx context.Context, rdb redis.UniversalClient, q DelayQueueSpec, key string, now time.Time) DelayQueue {
	inflight := q.InFlight.Of(key, store.InFlightKey)
	dq := DelayQueue{Name: q.Name, Key: Escape(key), RawKey: key, Unit: q.Unit.String(), InFlightKey: Escape(inflight), Schedule: map[string]int64{},
		Ref: QueueRef{Kind: QueueDelay, Name: q.Name, Key: key, queue: store.DelayQueueOf(key, inflight, q.Unit), where: key}}
	if rdb == nil {
		return dq
	}
	stats, err := dq.Ref.queue.Stats(ctx, rdb, now)
	st := *stats.Delay
	if err != nil {
		dq.Error = err.Error()
		return dq
	}
	dq.Depth, dq.InFlight, dq.Missing, dq.Unit, dq.Warning = st.Depth, st.InFlight, st.Missing, st.Unit.String(), st.Warning
	if !st.Timed {
		return dq
	}
	due, lag, next := st.Due, st.Lag.Milliseconds(), int64(-1)
	if st.NextIn >= 0 {
		next = st.NextIn.Milliseconds()
	}
	dq.Due, dq.OldestDueAgeMS, dq.NextDueInMS = &due, &lag, &next
	for i, label := range store.ScheduleLabels {
		dq.Schedule[label] = st.Schedule[i]
	}
	return dq
}
