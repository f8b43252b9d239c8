package scanner

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
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

func (p *pickyInferrer) Adopt(r discover.Result, _ bool) Adoption {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turns = append(p.turns, r.Keys)
	if p.adopted || r.Keys < p.after || !hasGroup(r.Groups, p.prefix) {
		return Adoption{}
	}
	p.adopted = true
	return Adoption{Families: []*store.Family{p.fam}, Entries: []discover.Entry{{Table: "counter", Name: p.fam.Name(), Pattern: p.fam.Pattern().String()}}}
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

// TestTakeCountsWhatItInfers: entries adopted early start Take's sweep over with them; entries
// adopted once it is too far on are counted by one more sweep. Either way the Snapshot counts
// every key of the inferred family, lists the entry, and leaves no group of its keys unclaimed.
func TestTakeCountsWhatItInfers(t *testing.T) {
	srv := redistest.Start(t)
	now := redistest.ClearOfHourEnd(t, 2*time.Minute)
	hits, total := inferKeyspace(t, srv, now)
	for _, c := range []struct {
		name  string
		after int64
	}{{"early: the sweep starts over", 0}, {"late: one more sweep", 30_000}} {
		t.Run(c.name, func(t *testing.T) {
			inf := &pickyInferrer{fam: hits, prefix: "hits:", after: c.after}
			snap, err := Take(t.Context(), srv.Client(t), nil, Options{Location: time.UTC, Infer: inf})
			if err != nil {
				t.Fatal(err)
			}
			f := snap.Family("hits")
			if f == nil || !inf.adopted {
				t.Fatalf("the family was not adopted (turns at %v)", inf.turns)
			}
			if cw := f.CurrentWindow("hour"); cw == nil || cw.Total != total || f.Keys != 300 {
				t.Fatalf("hits: %d keys, current hour %+v; want 300 keys totalling %d", f.Keys, cw, total)
			}
			if !snap.Scan.Complete || snap.Inferred == nil || len(snap.Inferred.Entries) != 1 || snap.Inferred.Pending != 0 {
				t.Fatalf("complete %v, inferred %+v", snap.Scan.Complete, snap.Inferred)
			}
			if hasGroup(snap.Unclaimed.Groups, "hits:") || snap.Unclaimed.Keys != 45_000 {
				t.Fatalf("unclaimed after the adoption: %d keys, groups %+v", snap.Unclaimed.Keys, snap.Unclaimed.Groups)
			}
			if c.after > 0 && inf.turns[len(inf.turns)-1] < c.after {
				t.Fatalf("the late adoption came at %v", inf.turns)
			}
		})
	}
}

// hasGroup reports whether one of groups has a pattern beginning with prefix.
func hasGroup(groups []discover.Group, prefix string) bool {
	for _, g := range groups {
		if strings.HasPrefix(g.Pattern, prefix) {
			return true
		}
	}
	return false
}
