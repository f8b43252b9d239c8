package scanner

import (
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// fill writes the structure sections into snap, with what the sweep's last step read past the
// pages (reads; nil before it ran): the queues by their keys, the limiters' hourly counters, the
// unions and the job libraries.
func (a *structAgg) fill(snap *snapshot.Snapshot, now time.Time, opt Options, reads *Reads) {
	snap.DelayQueues = a.delayQueues(reads, snap.Scan.Complete)
	snap.ListQueues = a.listQueues(reads, snap.Scan.Complete)
	snap.JobQueues = a.jobQueues(reads)
	snap.Warnings = a.claims.warnings()
	snap.Limiters = a.limiterStats(reads, store.WindowAt(store.Hour, now, opt.Location))
	snap.Uniques = a.uniqueStats(reads, now, opt.Location)
	snap.Locks = a.lockStats()
	snap.Blooms = a.bloomStats(reads)
	p := &snap.TTLHealth.LockNoTTL
	p.Keys = a.lockNoTTL.keys
	p.Examples = a.lockNoTTL.examples
}

// delayQueues renders each delay queue: a spec's one key, or the deepest queues its pattern found
// (a pattern that found none gives one row that says so).
func (a *structAgg) delayQueues(reads *Reads, complete bool) []snapshot.DelayQueue {
	out := []snapshot.DelayQueue{}
	for i, q := range a.specs.DelayQueues {
		if q.Pattern == nil {
			out = append(out, delayQueueOf(reads, i, q, q.Key))
			continue
		}
		if len(a.queues[i]) == 0 {
			out = append(out, snapshot.DelayQueue{Name: q.Name, Pattern: format.Escape(q.Pattern.String()), Missing: true, Unit: q.Unit.String(),
				Schedule: map[string]int64{}, Warning: noPatternKey(complete)})
		}
		for _, kc := range a.queues[i] {
			dq := delayQueueOf(reads, i, q, kc.Key)
			dq.Pattern = format.Escape(q.Pattern.String())
			out = append(out, dq)
		}
	}
	return out
}

// noPatternKey says why a queue pattern has no row: no key matches it, or none was found yet.
func noPatternKey(complete bool) string {
	if complete {
		return "no key matches the pattern"
	}
	return "no key found yet: the sweep has not finished"
}

// listQueues renders each list queue's length and the tasks it has in processing: a spec's one
// key, or the longest lists its pattern found.
func (a *structAgg) listQueues(reads *Reads, complete bool) []snapshot.ListQueue {
	out := []snapshot.ListQueue{}
	for i, q := range a.specs.ListQueues {
		if q.Pattern == nil {
			out = append(out, listQueueOf(reads, i, q, q.Key))
			continue
		}
		if len(a.lists[i]) == 0 {
			out = append(out, snapshot.ListQueue{Name: q.Name, Pattern: format.Escape(q.Pattern.String()), Missing: true,
				Error: noPatternKey(complete)})
		}
		for _, kc := range a.lists[i] {
			lq := listQueueOf(reads, i, q, kc.Key)
			lq.Pattern = format.Escape(q.Pattern.String())
			out = append(out, lq)
		}
	}
	return out
}

// listQueueOf renders one list queue of spec i, as read.
func listQueueOf(reads *Reads, i int, q ListQueueSpec, key string) snapshot.ListQueue {
	processing := q.ProcessingOf(key)
	lq := snapshot.ListQueue{Name: q.Name, Key: format.Escape(key), RawKey: key, ProcessingKey: format.Escape(processing),
		Ref: snapshot.QueueRef{Kind: snapshot.QueueList, Name: q.Name, Key: key}}
	r, ok := reads.list(queueRef{i, key})
	if !ok {
		return lq
	}
	st, err := r.st, r.err
	if err != nil {
		lq.Error = err.Error()
	}
	lq.Length, lq.Missing = st.Length, st.Missing
	if !st.Missing { // a queue that is not there has no latency to know
		lq.LatencyMS, lq.LatencyNote = latencyMS(st.Latency, st.LatencyNote)
	}
	if processing != "" {
		n := st.Processing
		lq.Processing = &n
	}
	return lq
}

// limiterStats renders each limiter's aggregate with the decisions hourglass's limiter counted
// in hour, as read. A figure the limiter's keys do not keep stays null.
func (a *structAgg) limiterStats(reads *Reads, hour store.Window) []snapshot.Limiter {
	out := []snapshot.Limiter{}
	for i, spec := range a.specs.Limiters {
		l := a.limiters[i]
		lim := snapshot.Limiter{Name: spec.Name, Layout: spec.Layout.String(), Kind: spec.Kind.String(),
			WindowMS: configured(spec.Window.Milliseconds()), Limit: configured(spec.Limit), Keys: l.keys, AtLimit: l.atLimit, WrongType: l.wrongType, Top: l.top,
			Unknown: l.unknown, UnknownNote: l.unknownWhy, Hour: hour.Start.Unix()}
		lim.Hits, lim.HitsSaturated = l.hits.Int64()
		if lim.Top == nil {
			lim.Top = []snapshot.KeyCount{}
		}
		if spec.Layout != limits.Hourglass {
			// A library's decisions are not counted by hourglass, and its keys are never over.
			lim.Kind = libraryKind(spec.Layout, l.kinds)
			if l.refusedKeys > 0 || spec.Layout == limits.RateLimiterFlexible {
				n, saturated := l.refused.Int64()
				lim.RefusedInWindow, lim.RefusedSaturated, lim.RefusedKeys = &n, saturated, l.refusedKeys
			}
			out = append(out, lim)
			continue
		}
		over := l.overLimit
		lim.OverLimit = &over
		if r, ok := reads.limit(i); ok {
			allowed, rejected := r.allowed, r.rejected
			lim.Allowed, lim.Rejected = &allowed, &rejected
		}
		out = append(out, lim)
	}
	return out
}

// configured is a setting of the config, nil when it gives none (0).
func configured(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

// libraryKind names how a library limiter's keys count: the kinds of the keys read, or what the
// layout may hold when none was read.
func libraryKind(layout limits.Layout, seen []string) string {
	if len(seen) > 0 {
		return strings.Join(seen, "+")
	}
	return layout.Kinds()
}

// uniqueStats renders each unique family's windows and, for a family with days, the unions of
// its busiest dims today, as read.
func (a *structAgg) uniqueStats(reads *Reads, now time.Time, loc *time.Location) []snapshot.Unique {
	out := []snapshot.Unique{}
	for i, spec := range a.specs.Uniques {
		u := a.uniques[i]
		f := spec.Family
		uq := snapshot.Unique{Name: f.Name(), Kind: spec.Kind.String(), Windows: []snapshot.UniqueWindow{}, UnionDims: map[string]string{},
			WrongType: u.wrongType}
		for _, w := range sortedWindows(u.windows) {
			wf, _ := f.Format(w.w.Granularity)
			uw := snapshot.UniqueWindow{Granularity: w.w.Granularity.String(), Window: wf.Format(w.w), Keys: w.keys, Current: w.w.Contains(now)}
			uw.Count, uw.Saturated = w.count.Int64()
			uq.Windows = append(uq.Windows, uw)
		}
		if r, ok := reads.union(i); ok {
			if _, best, ok := a.unionDims(i, now, loc); ok {
				uq.UnionDims = dimsMap(f.Dims(), best)
				uq.Union7d, uq.Union7dSkipped, uq.Union30d, uq.Union30dSkipped = r.n7, r.skip7, r.n30, r.skip30
				uq.Error = r.err
			}
		}
		out = append(out, uq)
	}
	return out
}

// lockStats renders each lock pattern's aggregate.
func (a *structAgg) lockStats() []snapshot.Lock {
	out := []snapshot.Lock{}
	for i, spec := range a.specs.Locks {
		l := a.locks[i]
		lk := snapshot.Lock{Name: spec.Name, Held: l.held, NoTTL: l.noTTL, WrongType: l.wrongType, Examples: l.examples}
		if lk.Examples == nil {
			lk.Examples = []snapshot.LockHolder{}
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

// delayQueueOf renders one delay queue of spec i, as read.
func delayQueueOf(reads *Reads, i int, q DelayQueueSpec, key string) snapshot.DelayQueue {
	inflight := q.InFlightOf(key)
	dq := snapshot.DelayQueue{Name: q.Name, Key: format.Escape(key), RawKey: key, Unit: q.Unit.String(), InFlightKey: format.Escape(inflight), Schedule: map[string]int64{},
		Ref: snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: q.Name, Key: key}}
	r, ok := reads.delayQueue(queueRef{i, key})
	if !ok {
		return dq
	}
	st, err := r.st, r.err
	if err != nil {
		dq.Error = err.Error()
		return dq
	}
	dq.Depth, dq.Missing, dq.Unit, dq.Warning = st.Depth, st.Missing, st.Unit.String(), st.Warning
	if inflight != "" {
		n := st.InFlight
		dq.InFlight = &n
	}
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
