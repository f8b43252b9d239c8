package scanner

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

func pattern(t *testing.T, text string) *store.Pattern {
	t.Helper()
	p, err := store.ParseKeyPattern(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func globs(t *testing.T, list ...string) store.Globs {
	t.Helper()
	g, err := store.ParseGlobs(list)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestQueuesAsConfigured covers what a queue entry can say about keys another program writes:
// a missing key, a pattern that matches nothing, list queues by pattern with their own
// processing keys, an in-flight template, exclude, and a key two entries both claim.
func TestQueuesAsConfigured(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	secs := func(d time.Duration) float64 { return float64(now.Add(d).UnixMicro()) / 1e6 }
	rdb.ZAdd(ctx, "celeryish:eta", redis.Z{Score: secs(-2 * time.Second), Member: "a"}, redis.Z{Score: secs(time.Minute), Member: "b"})
	rdb.HSet(ctx, "celeryish:eta:wip", "x", 1, "y", 2, "z", 3)
	rdb.RPush(ctx, "jobs:mail", "1", "2", "3")
	rdb.RPush(ctx, "jobs:sms", "1")
	rdb.RPush(ctx, "jobs:mail:busy", "9")
	rdb.RPush(ctx, "jobs:archive", "old")
	structs := Structures{
		DelayQueues: []DelayQueueSpec{
			{Name: "eta", Key: "celeryish:eta", Unit: store.AutoUnit, InFlight: store.ParseCompanion("<key>:wip")},
			{Name: "gone", Key: "not:here", Unit: store.AutoUnit},
			{Name: "topics", Pattern: pattern(t, "topic:<name>"), Unit: store.AutoUnit},
			{Name: "everything", Pattern: pattern(t, "celeryish:<name>"), Unit: store.AutoUnit, Exclude: globs(t, "*:wip")},
		},
		ListQueues: []ListQueueSpec{
			{Name: "jobs", Pattern: pattern(t, "jobs:<q>"), Processing: store.ParseCompanion("<key>:busy"), Exclude: globs(t, "*:busy", "jobs:archive")},
			{Name: "absent", Key: "list:absent", Processing: store.ParseCompanion("")},
		},
	}
	snap, err := Take(ctx, rdb, nil, Options{Structures: structs, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]snapshot.DelayQueue{}
	for _, q := range snap.DelayQueues {
		byName[q.Name] = append(byName[q.Name], q)
	}
	eta := byName["eta"][0]
	if eta.Unit != "s" || eta.Depth != 2 || eta.Due == nil || *eta.Due != 1 || eta.InFlight == nil || *eta.InFlight != 3 || eta.InFlightKey != "celeryish:eta:wip" || eta.Missing {
		t.Errorf("eta queue %+v: want seconds found by auto, 1 of 2 due, 3 in flight in its hash", eta)
	}
	if g := byName["gone"]; len(g) != 1 || !g[0].Missing || g[0].Depth != 0 {
		t.Errorf("a configured key that is not there: %+v, want missing", g)
	}
	if tp := byName["topics"]; len(tp) != 1 || !tp[0].Missing || tp[0].Pattern != "topic:<name>" || tp[0].Key != "" {
		t.Errorf("a pattern that matches nothing: %+v, want one missing row", tp)
	}
	if e := byName["everything"]; len(e) != 1 || !e[0].Missing {
		t.Errorf("the pattern's only queue is claimed by eta's key first and its wip hash is excluded: %+v, want one missing row", e)
	}
	if len(snap.Warnings) != 1 || !strings.Contains(snap.Warnings[0], "delay_queue eta and delay_queue everything") ||
		!strings.Contains(snap.Warnings[0], "celeryish:eta") {
		t.Errorf("warnings %q: want one about the key both eta and everything claim", snap.Warnings)
	}
	lists := map[string]snapshot.ListQueue{}
	for _, q := range snap.ListQueues {
		lists[q.Key] = q
	}
	if m := lists["jobs:mail"]; m.Length != 3 || m.Processing == nil || *m.Processing != 1 || m.ProcessingKey != "jobs:mail:busy" || m.Pattern != "jobs:<q>" {
		t.Errorf("jobs:mail %+v", m)
	}
	if s := lists["jobs:sms"]; s.Length != 1 || s.Processing == nil || *s.Processing != 0 {
		t.Errorf("jobs:sms %+v", s)
	}
	if _, ok := lists["jobs:archive"]; ok || len(lists) != 3 {
		t.Errorf("list queues %+v: want jobs:mail, jobs:sms and the absent one; archive and :busy excluded", lists)
	}
	if a := lists["list:absent"]; !a.Missing || a.ProcessingKey != "" || a.Processing != nil {
		t.Errorf("absent list %+v: want missing, and processing null: it keeps no processing list", a)
	}
	if snap.Scan.KeysMatched != 4 { // eta's key (once) and its wip hash, jobs:mail and jobs:sms; the rest is excluded
		t.Errorf("matched %d, want 4", snap.Scan.KeysMatched)
	}
}
