package scanner

import (
	"testing"
	"time"

	"hourglass/internal/redistest"
	"hourglass/store"
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
	n, err := Repair(ctx, rdb, families(t), sweep, RepairOptions{}, func(a RepairAction) { acted = append(acted, a.Key) })
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
