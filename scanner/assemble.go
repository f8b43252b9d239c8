package scanner

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// Snapshot returns what the pages added so far hold. It reads MEMORY USAGE (and TYPE, for keys
// of the wrong type) of the sampled problem keys in one pipeline on rdb; when the server refuses
// them the Snapshot says so in MemoryNote and carries no bytes. complete says whether the sweep
// ran to its end.
func (a *Aggregator) Snapshot(ctx context.Context, rdb redis.UniversalClient, complete bool) *Snapshot {
	now := a.opt.Now()
	snap := &Snapshot{
		TakenAt: now, Target: a.opt.Target, Mode: a.opt.Mode, Scan: a.scan,
		Counters: make([]FamilyStats, 0, len(a.order)),
	}
	snap.Scan.Complete = complete
	snap.Scan.Masters = []MasterKeys{}
	for addr, n := range a.masters {
		snap.Scan.Masters = append(snap.Scan.Masters, MasterKeys{Addr: addr, KeysSeen: n})
	}
	sort.Slice(snap.Scan.Masters, func(i, j int) bool { return snap.Scan.Masters[i].Addr < snap.Scan.Masters[j].Addr })
	if !a.start.IsZero() {
		snap.Scan.DurationMS = time.Since(a.start).Milliseconds()
	}
	sizes, types, note := a.readSamples(ctx, rdb)
	for _, fa := range a.order {
		snap.Counters = append(snap.Counters, fa.stats(now, a.opt, sizes, types, note))
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
	var pace *pacer // the unions count against the sweep's budget
	if a.sweep != nil {
		pace = a.sweep.pace
	}
	a.structs.fill(ctx, rdb, snap, now, a.opt, pace)
	snap.Unclaimed = a.sweep.unclaimedResult()
	for _, p := range snap.TTLHealth.Problems() {
		if p.Examples == nil {
			p.Examples = []Example{}
		}
	}
	return snap
}

// readSamples reads the memory each sampled key holds, and the type of the wrong-type ones.
func (a *Aggregator) readSamples(ctx context.Context, rdb redis.UniversalClient) (map[string]int64, map[string]string, string) {
	sizes, types := map[string]int64{}, map[string]string{}
	if rdb == nil || a.opt.MemorySamples < 0 {
		return sizes, types, "not sampled"
	}
	pipe := rdb.Pipeline()
	mem := map[string]*redis.IntCmd{}
	typ := map[string]*redis.StatusCmd{}
	for _, fa := range a.order {
		for p := range fa.problems {
			for _, name := range fa.problems[p].samples {
				if mem[name] == nil {
					mem[name] = pipe.MemoryUsage(ctx, name)
				}
				if p == probWrongType && typ[name] == nil {
					typ[name] = pipe.Type(ctx, name)
				}
			}
		}
	}
	if pipe.Len() == 0 {
		return sizes, types, ""
	}
	_, err := pipe.Exec(ctx)
	if err != nil && !keyLevel(err) {
		return sizes, types, "MEMORY USAGE failed: " + err.Error()
	}
	note := ""
	for name, c := range mem {
		n, err := c.Result()
		switch {
		case err == nil:
			sizes[name] = n
		case err == redis.Nil: // gone since the sweep read it
		default:
			var rerr redis.Error
			if errors.As(err, &rerr) && note == "" {
				note = "MEMORY USAGE refused: " + strings.TrimSpace(err.Error())
			}
		}
	}
	for name, c := range typ {
		if t, err := c.Result(); err == nil && t != "none" {
			types[name] = t
		}
	}
	if note != "" {
		return map[string]int64{}, types, note
	}
	return sizes, types, ""
}

// maxStartsOver is how many times Take starts its sweep again after a restart or a failover.
const maxStartsOver = 3

// Take runs one sweep to its end and returns its Snapshot: after a restart or a failover under
// it, the sweep starts over (up to maxStartsOver times), since its cursors no longer hold. When
// ctx ends first, it returns the Snapshot of what it saw (Complete false) with ctx's error.
func Take(ctx context.Context, rdb redis.UniversalClient, families []*store.Family, sweep Options, snap SnapshotOptions) (*Snapshot, error) {
	pairOptions(&sweep, &snap)
	var s *Sweep
	var a *Aggregator
	var err error
	for range maxStartsOver {
		s = New(rdb, families, sweep)
		a = NewAggregator(families, snap)
		a.sweep = s
		if err = s.Run(ctx, a.Add); !errors.Is(err, ErrRestarted) && !errors.Is(err, ErrMastersChanged) {
			break
		}
	}
	readCtx := ctx
	if err != nil {
		readCtx = context.WithoutCancel(ctx) // still read the samples of what was seen, briefly
		var cancel context.CancelFunc
		readCtx, cancel = context.WithTimeout(readCtx, 2*time.Second)
		defer cancel()
	}
	return a.Snapshot(readCtx, rdb, err == nil && s.Done()), err
}

// pairOptions fills what a sweep's and a snapshot's options share (the time zone, the
// structures) from whichever of the two gives it.
func pairOptions(sweep *Options, snap *SnapshotOptions) {
	if sweep.Location == nil {
		sweep.Location = snap.Location
	}
	if snap.Location == nil {
		snap.Location = sweep.Location
	}
	if snap.Structures.Empty() {
		snap.Structures = sweep.Structures
	}
	if sweep.Structures.Empty() {
		sweep.Structures = snap.Structures
	}
}
