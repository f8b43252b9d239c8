package watch

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestWatcherClaimCountsUnclaimedKeysFromTheNextSweep: keys no entry claims are listed as a group;
// once a family and a lock for them are claimed, the next sweep counts them under those entries
// and lists them no longer. A Claim while a Poll runs waits for it (run with -race).
func TestWatcherClaimCountsUnclaimedKeysFromTheNextSweep(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	hits, err := store.NewFamily(store.FamilySpec{Name: "hits", Pattern: "hits:<page>:<window>", HourFormat: "yyyyMMddHH",
		HourRetention: 48 * time.Hour, Location: shanghai})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		rdb.Set(ctx, key(t, hits, store.Hour, now, fmt.Sprint("page", i)), i+1, 2*time.Hour)
	}
	for i := range 4 {
		rdb.Set(ctx, fmt.Sprintf("mutex:job%d", i), "6f1c2a9e-0d7b-4c55-9a1e-2b3c4d5e6f70", time.Minute)
	}
	// 24 keys at 60 a second: a sweep spans several Polls, so the one under way at the claim is
	// dropped, not finished without the new entries.
	w := New(rdb, families(t), scanner.Options{Count: 5, KeysPerSecond: 60, Location: shanghai})
	pollUntilSweep := func() snapshot.Status {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := w.Poll(ctx, 20*time.Millisecond, "")
			if err != nil {
				t.Fatal(err)
			}
			if st.Sweep.Completed {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatal("no sweep completed")
			}
		}
	}
	st := pollUntilSweep()
	if u := st.Snapshot.Unclaimed; u.Keys != 24 || !hasGroup(u.Groups, "hits:") {
		t.Fatalf("before the claim: %d unclaimed keys, groups %+v", u.Keys, u.Groups)
	}

	lockPattern, err := store.ParseKeyPattern("mutex:<job>")
	if err != nil {
		t.Fatal(err)
	}
	// Claim while a Poll is under way: it waits for it; the sweep that Poll runs is dropped.
	if _, err := w.Poll(ctx, 0, ""); err != nil { // a sweep is now under way
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := w.Poll(ctx, 30*time.Millisecond, ""); err != nil {
			t.Error(err)
		}
	}()
	if err := w.Claim([]*store.Family{hits}, scanner.Structures{Locks: []scanner.LockSpec{{Name: "mutex", Pattern: lockPattern}}}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	st = pollUntilSweep()
	f := st.Snapshot.Family("hits")
	if f == nil || f.Keys != 20 || f.CurrentWindow("hour") == nil || f.CurrentWindow("hour").Total != 210 {
		t.Fatalf("after the claim the family hits is %+v", f)
	}
	if len(st.Snapshot.Locks) != 1 || st.Snapshot.Locks[0].Held != 4 {
		t.Fatalf("after the claim the locks are %+v", st.Snapshot.Locks)
	}
	if u := st.Snapshot.Unclaimed; u.Keys != 0 || len(u.Groups) != 0 {
		t.Fatalf("after the claim %d keys are still unclaimed: %+v", u.Keys, u.Groups)
	}

	// A name already watched is refused, and nothing is added.
	again, _ := store.NewFamily(store.FamilySpec{Name: "flow", Pattern: "other:<x>:<window>", HourFormat: "yyyyMMddHH", HourRetention: time.Hour})
	err = w.Claim([]*store.Family{again}, scanner.Structures{})
	if err == nil || !strings.Contains(err.Error(), `counter family named "flow" is already watched`) {
		t.Fatalf("claiming a second flow: %v", err)
	}
	err = w.Claim(nil, scanner.Structures{Locks: []scanner.LockSpec{{Name: "mutex", Pattern: lockPattern}}})
	if err == nil || !strings.Contains(err.Error(), `lock named "mutex"`) {
		t.Fatalf("claiming a second lock mutex: %v", err)
	}
	if len(w.families) != 3 || len(w.opt.Structures.Locks) != 1 {
		t.Fatalf("a refused claim added something: %d families, %d locks", len(w.families), len(w.opt.Structures.Locks))
	}
}

func hasGroup(groups []discover.Group, prefix string) bool {
	for _, g := range groups {
		if strings.HasPrefix(g.Pattern, prefix) {
			return true
		}
	}
	return false
}
