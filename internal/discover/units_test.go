package discover_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// unitQueue writes a delay queue as another program would (plain ZADD, no in-flight set): one
// task overdue by a minute and two due within the hour, scored in unit.
func unitQueue(t *testing.T, rdb *redis.Client, key string, unit store.ScoreUnit, now time.Time) {
	t.Helper()
	score := func(d time.Duration) float64 {
		at := now.Add(d)
		if unit == store.Seconds {
			return float64(at.UnixMicro()) / 1e6 // as Python's time.time()
		}
		return float64(at.UnixMilli())
	}
	err := rdb.ZAdd(t.Context(), key, redis.Z{Score: score(-time.Minute), Member: "overdue"},
		redis.Z{Score: score(10 * time.Minute), Member: "soon"}, redis.Z{Score: score(50 * time.Minute), Member: "later"}).Err()
	if err != nil {
		t.Fatal(err)
	}
}

// proposeAndLoad sweeps with no config, then loads the proposed entries and sweeps again with
// them: every queue must then be read in its own unit, with no warning and nothing unclaimed.
func proposeAndLoad(t *testing.T, rdb *redis.Client, units map[string]store.ScoreUnit) discover.Result {
	t.Helper()
	snap, err := scanner.Take(t.Context(), rdb, nil, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := snap.Unclaimed
	var b strings.Builder
	for _, g := range res.Groups {
		t.Logf("group %q %s %s %q", g.Pattern, g.Kind, g.Confidence, g.Evidence)
		if g.Entry != nil {
			b.WriteString(g.Entry.TOML() + "\n")
		}
	}
	cfg, err := config.Parse("discover.toml", []byte(b.String()), nil)
	if err != nil {
		t.Fatalf("proposed entries do not load: %v\n%s", err, b.String())
	}
	snap, err = scanner.Take(t.Context(), rdb, cfg.Counters, cfg.SweepOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Warnings) > 0 || snap.Unclaimed.Keys != 0 {
		t.Errorf("with the proposed entries: warnings %q, %d keys unclaimed\n%s", snap.Warnings, snap.Unclaimed.Keys, b.String())
	}
	seen := map[string]bool{}
	for _, q := range snap.DelayQueues {
		seen[q.Key] = true
		want, ok := units[q.Key]
		if !ok || q.Unit != want.String() || q.Warning != "" || q.Due == nil || *q.Due != 1 || q.Depth != 3 {
			t.Errorf("queue %s read in %s (want %s): due %v, depth %d, warning %q", q.Key, q.Unit, want, q.Due, q.Depth, q.Warning)
		}
	}
	if len(seen) != len(units) {
		t.Errorf("the proposed entries read %d queues, want %d:\n%s", len(seen), len(units), b.String())
	}
	return res
}

// Queues named apart (delay:orders and delay:reports in seconds, delay:mail in milliseconds) are
// split by unit: the seconds keep the pattern, leaving delay:mail to an entry of its own.
func TestUnitsSplitWhereNamesAllow(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	now := store.New(rdb, store.Options{}).Now()
	units := map[string]store.ScoreUnit{"delay:orders": store.Seconds, "delay:reports": store.Seconds, "delay:mail": store.Milliseconds}
	for k, u := range units {
		unitQueue(t, rdb, k, u, now)
	}
	res := proposeAndLoad(t, rdb, units)
	var entries []string
	for _, g := range res.Groups {
		if en := g.Entry; en != nil {
			entries = append(entries, fmt.Sprintf("%s%s %s %q", en.Pattern, en.Key, en.ScoreUnit, en.Exclude))
		}
	}
	slices.Sort(entries)
	want := []string{`delay:<name> s ["delay:mail"]`, `delay:mail ms []`}
	if !slices.Equal(entries, want) {
		t.Errorf("entries %q, want %q", entries, want)
	}
}

// Queues whose names cannot tell the units apart (sched:<id>) get score_unit = "auto", and the
// evidence says how many samples were in each unit, naming some.
func TestUnitsAutoWhereNamesDoNot(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	now := store.New(rdb, store.Options{}).Now()
	units := map[string]store.ScoreUnit{}
	for i := 1; i <= 6; i++ {
		u := store.Seconds
		if i%2 == 0 {
			u = store.Milliseconds
		}
		k := fmt.Sprintf("sched:%d", i)
		units[k] = u
		unitQueue(t, rdb, k, u, now)
	}
	res := proposeAndLoad(t, rdb, units)
	if len(res.Groups) != 1 || res.Groups[0].Entry == nil || res.Groups[0].Entry.ScoreUnit != "auto" {
		t.Fatalf("groups %+v, want one delay queue with score_unit auto", res.Groups)
	}
	want := `scores: 3 of 6 sampled keys scored in Unix seconds (sched:1, sched:3, …), 3 in Unix milliseconds (sched:2, sched:4, …): score_unit = "auto" reads each key in its own unit;`
	if !slices.ContainsFunc(res.Groups[0].Evidence, func(l string) bool { return strings.HasPrefix(l, want) }) {
		t.Errorf("evidence %q, want a line starting %q", res.Groups[0].Evidence, want)
	}
}
