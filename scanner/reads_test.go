package scanner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// writeReadStructures writes, beside the legacy world's counters, one structure of each kind the
// sweep's last step reads past the pages: delay queues a pattern finds, a list queue by its key,
// hourglass's limiter with its decision counters, and a unique family with today's window.
func writeReadStructures(t *testing.T, rdb *redis.Client, st *store.Store) Structures {
	t.Helper()
	ctx := t.Context()
	now := st.Now()
	uvFam, err := store.NewFamily(store.FamilySpec{Name: "uv", Pattern: "uv:{<page>}:<window>", DayFormat: "yyyyMMdd", DayRetention: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	api := store.LimiterSpec{Name: "api", Pattern: "rl:api:<user>", Kind: store.Sliding, Window: time.Minute, Limit: 2}
	structs := Structures{
		DelayQueues: []DelayQueueSpec{{Name: "topics", Pattern: pattern(t, "topic:<name>"), Unit: store.Seconds}},
		ListQueues:  []ListQueueSpec{{Name: "jobs", Key: "queue:jobs"}},
		Limiters:    []LimiterSpec{{LimiterSpec: api, Pattern: pattern(t, api.Pattern)}},
		Uniques:     []UniqueSpec{{Kind: store.HyperLogLog, Family: uvFam}},
	}
	for i, topic := range []string{"topic:a", "topic:b"} {
		for j := range i + 1 {
			rdb.ZAdd(ctx, topic, redis.Z{Score: float64(now.Add(-time.Minute).Unix()), Member: fmt.Sprint(j)})
		}
	}
	st.ListQueue("queue:jobs").Push(ctx, "1", "2", "3")
	l, err := st.NewLimiter(api)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.Allow(ctx, "u1")
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	uv := st.NewUniques(store.HyperLogLog, uvFam)
	for i := range 20 {
		uv.Add(ctx, store.Day, []string{"home"}, now, fmt.Sprint("u", i))
		uv.Add(ctx, store.Day, []string{"home"}, now.AddDate(0, 0, -1), fmt.Sprint("u", i+10))
	}
	return structs
}

// TestSnapshotIsAPureFunctionOfTheSweep records one sweep's pages and its last step's reads, stops
// the server, and aggregates the recording twice: both Snapshots are the one made while the
// server ran, to the key, so making a Snapshot read nothing. What the reads brought (memory,
// queue stats, limiter decisions, unions, unclaimed groups) is there, so they were folded in,
// not skipped.
func TestSnapshotIsAPureFunctionOfTheSweep(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	st := store.New(rdb, store.Options{Location: shanghai})
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	now := st.Now()
	w := writeLegacyWorld(t, ctx, rdb, now, nil)
	opt := Options{Count: 7, Location: shanghai, Now: func() time.Time { return now }, Examples: 25,
		Structures: writeReadStructures(t, rdb, st)}

	s := New(rdb, w.fams, opt)
	var pages []Page
	if err := s.Run(ctx, func(p Page) { pages = append(pages, p) }); err != nil {
		t.Fatal(err)
	}
	live := NewAggregator(w.fams, opt)
	for _, p := range pages {
		live.Add(p)
	}
	want := live.Wants()
	reads := s.Finish(ctx, want)
	live.AddReads(reads)
	first := live.Snapshot(true)
	srv.Stop() // from here on, a read would fail

	for round := range 2 {
		a := NewAggregator(w.fams, opt)
		for _, p := range pages {
			a.Add(p)
		}
		if got := a.Wants(); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the same pages want other reads:\n%+v\nwant %+v", round, got, want)
		}
		a.AddReads(reads)
		again := a.Snapshot(true)
		again.Scan.DurationMS = first.Scan.DurationMS // the wall clock's, between the first page and now
		if !reflect.DeepEqual(again, first) {
			g, _ := json.Marshal(again)
			f, _ := json.Marshal(first)
			t.Fatalf("round %d: the same pages and reads gave another Snapshot:\n%s\nwant\n%s", round, g, f)
		}
	}

	if f := first.Family("flow"); f == nil || f.Keys != w.flowKeys || !first.Scan.Complete {
		t.Errorf("flow: %+v, want %d keys of a complete sweep", f, w.flowKeys)
	}
	if first.TTLHealth.NoTTL.Bytes <= 0 || first.TTLHealth.MemoryNote != "" {
		t.Errorf("no memory read for the keys without TTL: %+v", first.TTLHealth.NoTTL)
	}
	if dq := first.DelayQueues; len(dq) != 2 || dq[0].Key != "topic:b" || dq[0].Depth != 2 || dq[0].Due == nil || *dq[0].Due != 2 {
		t.Errorf("delay queues by pattern: %+v", dq)
	}
	if lq := first.ListQueues; len(lq) != 1 || lq[0].Length != 3 || lq[0].Missing {
		t.Errorf("list queue: %+v", lq)
	}
	if l := first.Limiters[0]; l.Allowed == nil || *l.Allowed != 2 || l.Rejected == nil || *l.Rejected != 1 {
		t.Errorf("limiter decisions: allowed %v, rejected %v, want 2 and 1", l.Allowed, l.Rejected)
	}
	if u := first.Uniques[0]; u.Union7d == nil || *u.Union7d < 28 || *u.Union7d > 32 || u.UnionDims["page"] != "home" {
		t.Errorf("unique unions: %+v", u)
	}
	if first.Unclaimed.Keys < w.unmatched || len(first.Unclaimed.Groups) == 0 {
		t.Errorf("unclaimed: %d keys in %d groups, want %d keys at least", first.Unclaimed.Keys, len(first.Unclaimed.Groups), w.unmatched)
	}
}

// TestSnapshotOfAPrefixReadsNothing aggregates the first pages of a sweep, with no last step and
// no server at all: the Snapshot holds what those pages counted and says the rest was not read.
func TestSnapshotOfAPrefixReadsNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	w := writeLegacyWorld(t, ctx, rdb, now, nil)
	opt := Options{Count: 7, Location: shanghai, Now: func() time.Time { return now }}
	s := New(rdb, w.fams, opt)
	var pages []Page
	if err := s.Run(ctx, func(p Page) { pages = append(pages, p) }); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if len(pages) < 2 {
		t.Fatalf("%d pages; the test wants a prefix shorter than the sweep", len(pages))
	}
	a := NewAggregator(w.fams, opt)
	var seen int64
	for _, p := range pages[:len(pages)/2] {
		a.Add(p)
		seen += int64(p.Seen)
	}
	snap := a.Snapshot(false)
	if snap.Scan.KeysSeen != seen || snap.Scan.Complete || !snap.TakenAt.Equal(now) {
		t.Errorf("scan %+v at %v, want %d keys seen, incomplete, at %v", snap.Scan, snap.TakenAt, seen, now)
	}
	if snap.TTLHealth.MemoryNote != "not sampled" || snap.TTLHealth.NoTTL.Bytes != 0 || len(snap.Unclaimed.Groups) != 0 {
		t.Errorf("a prefix without reads: memory note %q, %d bytes, %d unclaimed groups",
			snap.TTLHealth.MemoryNote, snap.TTLHealth.NoTTL.Bytes, len(snap.Unclaimed.Groups))
	}
}

// TestPatternQueueDepthIsReadOnce sweeps delay queues and lists that patterns find: their depths
// are read once, by the sweep's page (one ZCARD, one LLEN each), and the Snapshot's figures are
// still those of the queues.
func TestPatternQueueDepthIsReadOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	for i, topic := range []string{"topic:a", "topic:b"} {
		for j := range i + 1 {
			rdb.ZAdd(ctx, topic, redis.Z{Score: float64(now.Add(-time.Minute).Unix()), Member: fmt.Sprint(j)})
		}
	}
	rdb.RPush(ctx, "jobs:mail", "1", "2", "3")
	rdb.RPush(ctx, "jobs:sms", "1")
	structs := Structures{
		DelayQueues: []DelayQueueSpec{{Name: "topics", Pattern: pattern(t, "topic:<name>"), Unit: store.Seconds}},
		ListQueues:  []ListQueueSpec{{Name: "jobs", Pattern: pattern(t, "jobs:<q>")}},
	}
	rdb.ConfigResetStat(ctx)
	snap, err := Take(ctx, rdb, nil, Options{Structures: structs, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if zc, ll := commandCalls(t, rdb, "zcard"), commandCalls(t, rdb, "llen"); zc != 2 || ll != 2 {
		t.Errorf("%d ZCARDs and %d LLENs, want one for each of 2 queues and 2 lists", zc, ll)
	}
	if dq := snap.DelayQueues; len(dq) != 2 || dq[0].Key != "topic:b" || dq[0].Depth != 2 || *dq[0].Due != 2 || dq[1].Depth != 1 {
		t.Errorf("delay queues %+v", dq)
	}
	if lq := snap.ListQueues; len(lq) != 2 || lq[0].Key != "jobs:mail" || lq[0].Length != 3 || lq[1].Length != 1 || lq[0].Missing {
		t.Errorf("list queues %+v", lq)
	}
}
