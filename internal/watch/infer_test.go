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
	"github.com/hourglass-dev/hourglass/store"
)

// pickyInferrer adopts fam once the unclaimed keys seen reach after and a group of fam's keys is
// among them; it records the Result of every turn.
type pickyInferrer struct {
	fam    *store.Family
	prefix string
	after  int64

	mu      sync.Mutex
	turns   []int64 // unclaimed keys seen at each turn
	adopted bool
}

func (p *pickyInferrer) Adopt(r discover.Result, _ bool) scanner.Adoption {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turns = append(p.turns, r.Keys)
	if p.adopted || r.Keys < p.after || !hasGroup(r.Groups, p.prefix) {
		return scanner.Adoption{}
	}
	p.adopted = true
	return scanner.Adoption{Families: []*store.Family{p.fam}, Entries: []discover.Entry{{Table: "counter", Name: p.fam.Name(), Pattern: p.fam.Pattern().String()}}}
}

// inferKeyspace writes 300 hits keys (their current hour's total returned) among 45,000 others.
func inferKeyspace(t *testing.T, srv *redistest.Server, now time.Time) (*store.Family, int64) {
	t.Helper()
	rdb, ctx := srv.Client(t), t.Context()
	hits, err := store.NewFamily(store.FamilySpec{Name: "hits", Pattern: "hits:<page>:<window>", HourFormat: "yyyyMMddHH",
		HourRetention: 48 * time.Hour, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	pipe := rdb.Pipeline()
	for i := range 300 {
		k, err := hits.Key(store.WindowAt(store.Hour, now, time.UTC), []string{fmt.Sprint("page", i)})
		if err != nil {
			t.Fatal(err)
		}
		pipe.Set(ctx, k, i+1, 2*time.Hour)
		total += int64(i + 1)
	}
	for i := range 45_000 {
		pipe.Set(ctx, fmt.Sprintf("noise:%07d", i), "a cached value", time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return hits, total
}

// TestWatcherCountsLateEntriesFromTheNextSweep: an entry adopted when the first sweep is too far
// on to start over is pending (the Status says so) and counted, exactly, by the next sweep.
func TestWatcherCountsLateEntriesFromTheNextSweep(t *testing.T) {
	srv := redistest.Start(t)
	now := redistest.ClearOfHourEnd(t, 2*time.Minute)
	hits, total := inferKeyspace(t, srv, now)
	inf := &pickyInferrer{fam: hits, prefix: "hits:", after: 30_000}
	w := New(srv.Client(t), nil, scanner.Options{Location: time.UTC, Infer: inf, KeysPerSecond: 30_000})
	sawPending := false
	redistest.Eventually(t, "the next sweep counts the late entry", 60*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Inferred == nil {
			t.Fatal("a watcher with an Inferrer says nothing of it")
		}
		sawPending = sawPending || st.Inferred.Pending == 1
		if st.Snapshot == nil {
			return false
		}
		f := st.Snapshot.Family("hits")
		if f == nil {
			return false
		}
		if cw := f.CurrentWindow("hour"); cw == nil || cw.Total != total {
			t.Fatalf("hits' current hour %+v, want %d", cw, total)
		}
		return st.Inferred.Pending == 0 && len(st.Inferred.Entries) == 1
	})
	if !sawPending {
		t.Fatal("the late entry was never shown as counted from the next sweep")
	}
	if strings.Join(hits.Dims(), ",") != "page" {
		t.Fatal("the family changed")
	}
}

// TestAnEntryAdoptedAtTheSweepsEndIsPendingUntilCounted: an entry adopted at the end of a sweep is
// not in that sweep's figures, so the Status says it is pending until the next sweep completes.
func TestAnEntryAdoptedAtTheSweepsEndIsPendingUntilCounted(t *testing.T) {
	srv := redistest.Start(t)
	now := redistest.ClearOfHourEnd(t, 2*time.Minute)
	hits, _ := inferKeyspace(t, srv, now)
	inf := &pickyInferrer{fam: hits, prefix: "hits:", after: 45_300} // the whole keyspace: at the end
	w := New(srv.Client(t), nil, scanner.Options{Location: time.UTC, Infer: inf, KeysPerSecond: 100_000})
	completed := 0
	redistest.Eventually(t, "two sweeps complete", 60*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if !st.Sweep.Completed {
			return false
		}
		completed++
		counted := st.Snapshot.Family("hits") != nil
		if completed == 1 && (counted || st.Inferred.Pending != 1 || len(st.Inferred.Entries) != 1) {
			t.Fatalf("first sweep: hits counted %v, inferred %+v; want not counted and 1 pending", counted, st.Inferred)
		}
		if completed == 2 && (!counted || st.Inferred.Pending != 0) {
			t.Fatalf("second sweep: hits counted %v, inferred %+v; want counted and none pending", counted, st.Inferred)
		}
		return completed == 2
	})
}

// TestFiguresHoldWhileTheSweepStartsOver: when the first sweep starts over with an entry it
// adopted, the figures shown stay those of the sweep dropped until the new one has seen as many
// keys: the keys seen under the figures never go back, and the entry shows once it has.
func TestFiguresHoldWhileTheSweepStartsOver(t *testing.T) {
	srv := redistest.Start(t)
	now := redistest.ClearOfHourEnd(t, 2*time.Minute)
	hits, _ := inferKeyspace(t, srv, now)
	inf := &pickyInferrer{fam: hits, prefix: "hits:", after: 8000}
	w := New(srv.Client(t), nil, scanner.Options{Location: time.UTC, Infer: inf, KeysPerSecond: 20_000})
	var shown int64
	redistest.Eventually(t, "the partial figures show the adopted family", 60*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 100*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		p := st.Partial
		if st.Snapshot != nil {
			t.Fatal("the first sweep completed before the partial figures showed the family")
		}
		if p == nil {
			return false
		}
		if p.Scan.KeysSeen < shown {
			t.Fatalf("the figures went back from %d keys seen to %d", shown, p.Scan.KeysSeen)
		}
		shown = p.Scan.KeysSeen
		return inf.adopted && p.Family("hits") != nil
	})
}
