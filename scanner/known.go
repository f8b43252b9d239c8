package scanner

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// Known is what an aggregate knows of the structures' keys, to read again between sweeps:
// each queue (a spec's own key, those its pattern found so far), each job library's registries
// and the queues found, the busiest keys of each limiter and the locks shown. It is a copy, so the
// aggregate goes on without changing it. Making it reads nothing.
type Known struct {
	agg   *structAgg // the patterns' queues, in the aggregate's order, for the sections' rows
	wants Wants      // the queues, decisions and job libraries to read
	keys  []string   // the limiters' busiest keys and the locks shown
	// limiters says, by limiter spec, whether any of its keys is among them: its busiest keys
	// are then those read again, none when all have gone.
	limiters []bool
	opt      Options
}

// Known returns what the aggregate knows of the structures' keys so far.
func (a *Aggregator) Known() Known {
	w := a.Wants()
	w.memory, w.types, w.unions, w.blooms = nil, nil, nil, nil
	k := Known{agg: newStructAgg(a.structs.specs, a.opt.Location), wants: w, opt: a.opt}
	for i := range a.structs.queues {
		k.agg.queues[i] = slices.Clone(a.structs.queues[i])
	}
	for i := range a.structs.lists {
		k.agg.lists[i] = slices.Clone(a.structs.lists[i])
	}
	for i := range k.wants.jobs {
		k.wants.jobs[i].found = withNamed(k.wants.jobs[i])
	}
	for i := range k.wants.delay {
		k.wants.delay[i].depth = -1 // read again, not the depth the page read
	}
	for i := range k.wants.lists {
		k.wants.lists[i].depth = -1
	}
	k.limiters = make([]bool, len(a.structs.limiters))
	for i, l := range a.structs.limiters {
		for _, kc := range l.top {
			k.keys = append(k.keys, kc.Raw)
			k.limiters[i] = true
		}
	}
	for _, l := range a.structs.locks {
		for _, ex := range l.examples {
			k.keys = append(k.keys, ex.Raw)
		}
	}
	return k
}

// withNamed is the queues j found, with those its entry names outright (a queues glob with no
// wildcard): a library that registers no queue (BullMQ) is read from the first Poll on all the
// same.
func withNamed(j jobWant) []string {
	found := slices.Clone(j.found)
	for _, q := range j.src.Queues.Strings() {
		if !strings.ContainsAny(q, `*?[\`) && !slices.Contains(found, q) && j.src.Covers(q) && len(found) < maxJobQueues {
			found = append(found, q)
		}
	}
	slices.Sort(found)
	return found
}

// Empty reports whether there is nothing known to read.
func (k Known) Empty() bool {
	w := k.wants
	return len(w.delay)+len(w.lists)+len(w.limits)+len(w.jobs)+len(k.keys) == 0
}

// LiveStructures is what is known of the structures, read again at one moment.
type LiveStructures struct {
	known Known
	reads Reads
	keys  *structAgg // the limiters' busiest keys and the locks, as read again
	// At is when they were read (the server's time, as the sweep's reads are stamped).
	At time.Time
	// Charged is what the reads were charged to the budget, in keys.
	Charged int
}

// ReadKnown reads the structures k knows again: each queue's counts, the job libraries' queues
// (their registries read again, and each queue's counts; not their throughput or workers), the
// decisions hourglass's limiters counted this hour, the limiters' busiest keys and the locks
// shown. It is charged to the sweep's budget as the pages are. A queue's failure is kept beside
// it, as the sweep's last step keeps it; a connection's failure is the error.
func (s *Sweep) ReadKnown(ctx context.Context, k Known) (LiveStructures, error) {
	w := k.wants
	w.at = k.opt.Now()
	w.hour = store.WindowAt(store.Hour, w.at, k.opt.Location)
	live := LiveStructures{known: k, At: w.at, keys: newStructAgg(k.agg.specs, k.opt.Location)}
	r := Reads{At: w.at, delay: map[queueRef]delayRead{}, lists: map[queueRef]listRead{}, jobs: map[int]jobRead{}}
	cost := 0
	for _, q := range w.delay {
		r.delay[q.queueRef] = s.readDelayQueue(ctx, q, w)
		cost += queueReadCost
	}
	for _, q := range w.lists {
		r.lists[q.queueRef] = s.readListQueue(ctx, q, w)
		cost += queueReadCost
	}
	r.limits = s.readDecisions(ctx, w)
	for _, j := range w.jobs {
		jr := s.readJobQueues(ctx, j, w)
		r.jobs[j.spec] = jr
		cost += queueReadCost * (len(jr.names) + 1)
	}
	live.reads = r
	if err := s.readKnownKeys(ctx, k, live.keys); err != nil {
		return live, err
	}
	live.Charged = cost + len(k.keys)
	s.pace.Spend(live.Charged)
	return live, ctx.Err()
}

// queueReadCost is what one queue's counts are charged to the budget: the few commands that read
// them, weighed as that many keys.
const queueReadCost = 4

// readKnownKeys reads the limiters' and locks' keys named again, as a page reads them, and folds
// them into agg.
func (s *Sweep) readKnownKeys(ctx context.Context, k Known, agg *structAgg) error {
	if len(k.keys) == 0 {
		return nil
	}
	keys := make([]Key, 0, len(k.keys))
	for _, name := range k.keys {
		if key, ok := s.classifyStructure(name); ok && (key.kind == kindLimiter || key.kind == kindLock) {
			keys = append(keys, key)
		}
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	if err := s.readStructures(ctx, s.rdb, keys, idx); err != nil {
		return err
	}
	now := k.opt.Now()
	for i := range keys {
		if !keys[i].Gone {
			agg.add(&keys[i], now, k.opt)
		}
	}
	return nil
}

// Apply returns a copy of snap whose queues, job libraries' queues, limiters' decisions and
// busiest keys and locks shown are as read now; the rest (the keys the sweep counted, the
// libraries' throughput and workers) stays as snap has it. A section snap does not hold, or
// holds for other entries (added since), is left as it is.
func (l LiveStructures) Apply(snap *snapshot.Snapshot) *snapshot.Snapshot {
	if snap == nil {
		return nil
	}
	out := *snap
	a, r := l.known.agg, &l.reads
	if dq := a.delayQueues(r, snap.Scan.Complete); len(dq) > 0 && len(a.specs.DelayQueues) == len(specNames(snap.DelayQueues, delayName)) {
		out.DelayQueues = dq
	}
	if lq := a.listQueues(r, snap.Scan.Complete); len(lq) > 0 && len(a.specs.ListQueues) == len(specNames(snap.ListQueues, listName)) {
		out.ListQueues = lq
	}
	if len(a.specs.JobQueues) == len(snap.JobQueues) {
		out.JobQueues = a.jobQueues(r)
		for i := range out.JobQueues {
			keepJobTotals(&out.JobQueues[i], &snap.JobQueues[i])
		}
	}
	if len(a.specs.Limiters) == len(snap.Limiters) {
		out.Limiters = slices.Clone(snap.Limiters)
		for i := range out.Limiters {
			l.applyLimiter(&out.Limiters[i], i)
		}
	}
	if len(a.specs.Locks) == len(snap.Locks) {
		out.Locks = slices.Clone(snap.Locks)
		shown := l.keys.lockStats()
		for i := range out.Locks {
			out.Locks[i].Examples = shown[i].Examples
		}
	}
	out.StructuresAt = l.At
	return &out
}

// applyLimiter puts limiter i's busiest keys as read now, and hourglass's decisions this hour,
// into lim.
func (l LiveStructures) applyLimiter(lim *snapshot.Limiter, i int) {
	if i < len(l.known.limiters) && l.known.limiters[i] {
		lim.Top = l.keys.limiters[i].top
		if lim.Top == nil {
			lim.Top = []snapshot.KeyCount{}
		}
	}
	if d, ok := l.reads.limit(i); ok {
		allowed, rejected := d.allowed, d.rejected
		lim.Allowed, lim.Rejected = &allowed, &rejected
	}
}

// keepJobTotals keeps what the live read does not read again of a job library: its throughput
// and workers, as the sweep read them.
func keepJobTotals(now, swept *snapshot.JobQueues) {
	if now.Name != swept.Name {
		return
	}
	now.Throughput, now.ThroughputNote, now.Workers = swept.Throughput, swept.ThroughputNote, swept.Workers
}

// specNames lists the entries' names, once each, in order.
func specNames[T any](rows []T, name func(T) string) []string {
	var out []string
	for _, r := range rows {
		if n := name(r); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func delayName(q snapshot.DelayQueue) string { return q.Name }
func listName(q snapshot.ListQueue) string   { return q.Name }
