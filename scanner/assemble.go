package scanner

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// Snapshot returns what the pages and the reads added so far hold; complete says whether the
// sweep ran to its end. It reads nothing: before the sweep's last step is added (AddReads) the
// queues, limiters' decisions, unions, job libraries and memory are left unread, and the
// Snapshot is taken at the server time now rather than at the reads'.
func (a *Aggregator) Snapshot(complete bool) *snapshot.Snapshot {
	now := a.opt.Now()
	if a.reads != nil {
		now = a.reads.At
	}
	snap := &snapshot.Snapshot{
		TakenAt: now, Target: a.opt.Target, Mode: a.opt.Mode, Scan: a.scan,
		Counters: make([]snapshot.FamilyStats, 0, len(a.order)),
	}
	snap.Scan.Complete = complete
	snap.Scan.Masters = []snapshot.MasterKeys{}
	for addr, n := range a.masters {
		snap.Scan.Masters = append(snap.Scan.Masters, snapshot.MasterKeys{Addr: addr, KeysSeen: n})
	}
	sort.Slice(snap.Scan.Masters, func(i, j int) bool { return snap.Scan.Masters[i].Addr < snap.Scan.Masters[j].Addr })
	if !a.start.IsZero() {
		snap.Scan.DurationMS = snapshot.MillisUp(time.Since(a.start))
	}
	sizes, types, note := map[string]int64{}, map[string]string{}, "not sampled"
	if a.reads != nil && a.opt.MemorySamples >= 0 {
		sizes, types, note = a.reads.sizes, a.reads.types, a.reads.memoryNote
	}
	for _, fa := range a.order {
		snap.Counters = append(snap.Counters, fa.stats(now, a.opt, sizes, types, note))
	}
	if !complete {
		a.fillEstimates(snap, now)
	}
	snap.TTLHealth.MemoryNote = note
	for i := range snap.Counters {
		total := snap.TTLHealth.Problems()
		for j, p := range snap.Counters[i].Health.Problems() {
			t := total[j].Problem
			t.Keys += p.Keys
			t.Bytes += p.Bytes
			t.Sampled += p.Sampled
			for _, ex := range p.Examples {
				if len(t.Examples) < a.opt.Examples {
					t.Examples = append(t.Examples, ex)
				}
			}
		}
	}
	if !complete {
		fillProblems(&snap.TTLHealth, a.est, -1)
	}
	a.scanProgress(&snap.Scan, now)
	a.structs.fill(snap, now, a.opt, a.reads)
	if complete {
		a.zoneChecks(snap, now)
	}
	snap.Unclaimed = discover.Result{Groups: []discover.Group{}}
	if a.reads != nil {
		snap.Unclaimed = a.reads.unclaimed
		snap.Scan.KeysMatched += a.reads.lateClaims
	}
	for _, p := range snap.TTLHealth.Problems() {
		if p.Examples == nil {
			p.Examples = []snapshot.Example{}
		}
	}
	return snap
}

// maxStartsOver is how many times Take starts its sweep again after a restart or a failover.
const maxStartsOver = 3

// Take runs one sweep to its end and returns its Snapshot: after a restart or a failover under
// it, the sweep starts over (up to maxStartsOver times), since its cursors no longer hold. When
// ctx ends first, it returns the Snapshot of what it saw (Complete false) with ctx's error. When
// opt.StopAt or opt.StopAfter ends it first, that Snapshot is a sample, returned with no error.
//
// With opt.Infer, the entries it adopts while the sweep is young start the sweep over with them;
// those adopted later, or at the end, are counted by one more sweep (see Inferrer).
func Take(ctx context.Context, rdb redis.UniversalClient, families []*store.Family, opt Options) (*snapshot.Snapshot, error) {
	sweepCtx, stop := context.WithCancel(ctx)
	defer stop()
	if opt.StopAfter > 0 {
		sweepCtx, stop = context.WithTimeout(sweepCtx, opt.StopAfter)
		defer stop()
	}
	var s *Sweep
	var a *Aggregator
	var err error
	in := NewInference(opt.Infer)
	for starts, reruns := 0, 0; starts < maxStartsOver; {
		s = New(rdb, families, opt)
		a = NewAggregator(families, opt)
		runCtx, stopRun := context.WithCancel(sweepCtx)
		var restart Adoption
		visit := sampling(s, a, opt.StopAt, stop)
		err = s.Run(runCtx, func(p Page) {
			visit(p)
			if restart = in.Turn(s, a.scan.KeysSeen, false); !restart.Empty() {
				stopRun() // the pages still coming are dropped with this sweep
			}
		})
		stopRun()
		if !restart.Empty() && sweepCtx.Err() != nil {
			in.postpone(restart) // adopted as the sample ended: not counted in it
		} else if !restart.Empty() {
			families, opt.Structures = slices.Concat(families, restart.Families), opt.Structures.With(restart.Structures)
			continue
		}
		if errors.Is(err, ErrRestarted) || errors.Is(err, ErrMastersChanged) {
			starts++
			continue
		}
		if err == nil && s.Done() && reruns == 0 && sweepCtx.Err() == nil {
			in.Turn(s, a.scan.KeysSeen, true)
			if later := in.TakePending(); !later.Empty() { // counted by one more sweep
				families, opt.Structures = slices.Concat(families, later.Families), opt.Structures.With(later.Structures)
				reruns++
				continue
			}
		}
		break
	}
	if err != nil && ctx.Err() == nil && sweepCtx.Err() != nil {
		err = nil // stopped on purpose: a sample
	}
	readCtx := ctx
	if err != nil {
		readCtx = context.WithoutCancel(ctx) // still read what the pages seen want, briefly
		var cancel context.CancelFunc
		readCtx, cancel = context.WithTimeout(readCtx, 2*time.Second)
		defer cancel()
	}
	a.AddReads(s.Finish(readCtx, a.Wants()))
	a.SetProgress(s.Progress())
	snap := a.Snapshot(err == nil && s.Done())
	snap.Inferred = in.State()
	return snap, err
}

// sampling is the visit of a Take: it adds each page to a, and calls stop once the sweep has
// seen share (when above 0 and below 1) of the keys the masters hold.
func sampling(s *Sweep, a *Aggregator, share float64, stop func()) func(Page) {
	if !(share > 0 && share < 1) {
		return a.Add
	}
	var seen int64
	return func(p Page) {
		a.Add(p)
		seen += int64(p.Seen)
		var pop int64
		for _, mp := range s.Progress().Masters {
			if mp.DBSize <= 0 && !mp.Done {
				return // the keys a master holds are unknown: no share can be told
			}
			pop += mp.DBSize
		}
		if pop > 0 && float64(seen) >= share*float64(pop) {
			stop()
		}
	}
}
