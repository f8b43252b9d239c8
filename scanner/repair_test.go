package scanner

import (
	"sync"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestRepairLeavesStructureKeys repairs a sweep that also classifies structures: a counter key
// without a TTL gets its window's expiry, and a lock held forever (a SETNX whose PEXPIRE never
// ran), which has no window to expire by, is left as it is for its owner to decide.
func TestRepairLeavesStructureKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	flow := families(t)[0]
	now := time.Now()
	win := store.WindowAt(store.Hour, now, shanghai)
	counter, err := flow.Key(win, []string{"app", "dev", "ip"})
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, counter, 5, 0)
	rdb.Set(ctx, "lock:job:1", "pid-1", 0)
	lock, err := store.ParseKeyPattern("lock:job:<id>")
	if err != nil {
		t.Fatal(err)
	}
	sweep := Options{Location: shanghai, Structures: Structures{Locks: []LockSpec{{Name: "jobs", Pattern: lock}}}}
	var acted []string
	n, err := Repair(ctx, rdb, families(t), sweep, RepairOptions{}, func(a snapshot.RepairAction) { acted = append(acted, a.Key) })
	if err != nil {
		t.Fatal(err)
	}
	if n.NoTTL != 1 || len(acted) != 1 || acted[0] != counter {
		t.Fatalf("repair acted on %q (counts %+v), want the counter key alone", acted, n)
	}
	if got, want := rdb.ExpireTime(ctx, counter).Val(), time.Duration(flow.ExpireAt(win).Unix())*time.Second; got != want {
		t.Errorf("counter expires at %v, want %v", got, want)
	}
	if ttl := rdb.TTL(ctx, "lock:job:1").Val(); ttl != -1 {
		t.Errorf("the lock's TTL is %v after the repair, want none (left alone)", ttl)
	}
}

// counterKey is flow's hour key for dims in the window holding at.
func counterKey(t *testing.T, at time.Time, dims ...string) (string, store.Window) {
	t.Helper()
	win := store.WindowAt(store.Hour, at, shanghai)
	k, err := families(t)[0].Key(win, dims)
	if err != nil {
		t.Fatal(err)
	}
	return k, win
}

// TestRepairLeavesWhatNoCounterWrites: strings that fit a family's pattern but hold no 64-bit
// integer (text, a number past the int64 range, one with a leading zero) are not counters
// hourglass writes; repair leaves them with no TTL, counts them and reports each with its value,
// escaped, while the integer beside them gets its expiry. (Repair used to give them all one.)
func TestRepairLeavesWhatNoCounterWrites(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	counter, win := counterKey(t, now, "app", "dev", "10.0.0.1")
	rdb.Set(ctx, counter, 5, 0)
	values := map[string]string{"10.0.0.2": "session \x1b[31mred", "10.0.0.3": "9223372036854775808", "10.0.0.4": "007"}
	left := map[string]string{}
	for ip, v := range values {
		k, _ := counterKey(t, now, "app", "dev", ip)
		rdb.Set(ctx, k, v, 0)
		left[k] = v
	}
	for _, dryRun := range []bool{true, false} {
		var acted []string
		reported := map[string]string{}
		n, err := Repair(ctx, rdb, families(t), Options{Location: shanghai}, RepairOptions{DryRun: dryRun}, func(a snapshot.RepairAction) {
			if a.Kind == snapshot.RepairSkipNotInteger {
				reported[a.Key] = a.Value
			} else {
				acted = append(acted, a.Key)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if n.NoTTL != 4 || n.Expired != 1 || n.SkippedNotInteger != 3 || len(acted) != 1 || acted[0] != counter {
			t.Fatalf("dry run %v: counts %+v, acted on %q; want the counter alone, 3 left as not integers", dryRun, n, acted)
		}
		for k, v := range left {
			if reported[format.Escape(k)] != format.Escape(v) {
				t.Errorf("dry run %v: %s reported with %q, want %q", dryRun, k, reported[format.Escape(k)], format.Escape(v))
			}
		}
	}
	if got, want := rdb.ExpireTime(ctx, counter).Val(), time.Duration(families(t)[0].ExpireAt(win).Unix())*time.Second; got != want {
		t.Errorf("the counter expires at %v, want %v", got, want)
	}
	for k, v := range left {
		if ttl := rdb.TTL(ctx, k).Val(); ttl != -1 || rdb.Get(ctx, k).Val() != v {
			t.Errorf("%s: TTL %v, value %q after the repair; want it left as it was", k, ttl, rdb.Get(ctx, k).Val())
		}
	}
}

// TestRepairChecksAgainWhenItWrites changes keys after the sweep has read them and before the
// repair writes (from the repair's clock, which it reads between the two): one is rewritten with
// text, one given a TTL, one deleted. Each is left as it now is and counted, and the one key still
// as it was read is repaired. (Repair used to send EXPIREAT to all of them regardless.)
func TestRepairChecksAgainWhenItWrites(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	var keys []string
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
		k, _ := counterKey(t, now, "app", "dev", ip)
		rdb.Set(ctx, k, 3, 0)
		keys = append(keys, k)
	}
	rewritten, timed, deleted, kept := keys[0], keys[1], keys[2], keys[3]
	var once sync.Once
	clock := func() time.Time {
		once.Do(func() { // the page has been read: change three of its keys
			rdb.Set(ctx, rewritten, "not a count", 0)
			rdb.Expire(ctx, timed, time.Hour)
			rdb.Del(ctx, deleted)
		})
		return time.Now()
	}
	changed := map[string]store.RepairOutcome{}
	n, err := Repair(ctx, rdb, families(t), Options{Location: shanghai, Now: clock}, RepairOptions{}, func(a snapshot.RepairAction) {
		if a.Kind == snapshot.RepairSkipChanged {
			changed[a.Key] = a.Changed
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.NoTTL != 4 || n.Expired != 1 || n.SkippedChanged != 2 || n.Gone != 1 ||
		changed[rewritten] != store.RepairNotInteger || changed[timed] != store.RepairHasTTL {
		t.Fatalf("counts %+v, changed %v; want 1 expired, 2 changed (text, a TTL), 1 gone", n, changed)
	}
	if ttl := rdb.TTL(ctx, rewritten).Val(); ttl != -1 || rdb.Get(ctx, rewritten).Val() != "not a count" {
		t.Errorf("the rewritten key: TTL %v; want it left with none", ttl)
	}
	if ttl := rdb.TTL(ctx, timed).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("the key given a TTL of an hour has %v; want it kept", ttl)
	}
	if rdb.Exists(ctx, deleted).Val() != 0 || rdb.TTL(ctx, kept).Val() <= 0 {
		t.Error("the deleted key came back, or the unchanged key got no expiry")
	}
}
