package scanner

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// bitmapOf writes a bitmap of size bytes at key, with the bits at offsets set (and the last).
func bitmapOf(t *testing.T, rdb *redis.Client, key string, size int64, offsets ...int64) {
	t.Helper()
	ctx := t.Context()
	for _, off := range append(offsets, size*8-1) {
		if err := rdb.SetBit(ctx, key, off, 1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Expire(ctx, key, time.Hour)
}

func bitmapFamily(t *testing.T) (*store.Family, Structures) {
	t.Helper()
	fam, err := store.NewFamily(store.FamilySpec{Name: "dau", Pattern: "dau:<shard>:<window>", DayFormat: "yyyyMMdd", DayRetention: 40 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return fam, Structures{Uniques: []UniqueSpec{{Kind: store.Bitmap, Family: fam}}}
}

// TestSweepChargesBitmapsToItsBudget: a bitmap's BITCOUNT reads all of it, so the sweep counts
// it against keys_per_second by its size (a key per 4 KiB), not as one key: a sweep of forty
// 200 KiB bitmaps at 1,000 keys/s takes the two seconds their weight allows, where counting
// them as forty keys would let it run through in a few milliseconds.
func TestSweepChargesBitmapsToItsBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	now := redistest.ClearOfHourEnd(t, time.Minute).UTC()
	fam, structs := bitmapFamily(t)
	const n, size, rate = 40, 200 << 10, 1000
	for i := range n {
		k, _ := fam.Key(store.WindowAt(store.Day, now, time.UTC), []string{fmt.Sprint("s", i)})
		bitmapOf(t, rdb, k, size, int64(i))
	}
	s := New(rdb, nil, Options{Count: 2, KeysPerSecond: rate, Location: time.UTC, Structures: structs})
	var pages []int // each page's weight: its keys, and its bitmaps' sizes
	counted := 0
	start := time.Now()
	err := s.Run(t.Context(), func(p Page) {
		w := p.Seen
		for _, k := range p.Keys {
			if k.kind == kindUnique && !k.Gone {
				w += bitmapCost(size)
				counted++
			}
		}
		pages = append(pages, w)
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if counted != n {
		t.Fatalf("the sweep read %d bitmaps, want %d", counted, n)
	}
	total := 0
	for _, w := range pages {
		total += w
	}
	// The pacer lets a step run before it charges it: the last pages (the one scanned last and
	// those still being read) may be unpaid when the sweep ends.
	sort.Sort(sort.Reverse(sort.IntSlice(pages)))
	tail := 0
	for _, w := range pages[:min(len(pages), readsInFlight+2)] {
		tail += w
	}
	paid := time.Duration(float64(total-tail) / rate * float64(time.Second))
	if paid < time.Second {
		t.Fatalf("the test's bitmaps weigh too little (%d keys, %d of them the tail) to show the budget", total, tail)
	}
	if elapsed < paid {
		t.Errorf("the sweep of %d bitmaps weighing %d keys took %v at %d keys/s, want at least %v", n, total, elapsed, rate, paid)
	}
	t.Logf("%d bitmaps, %d keys' weight, in %v at %d keys/s", n, total, elapsed, rate)
}

// TestUnionsKeepTheBudget: a bitmap union the sweep's budget allows is read and charged to it
// (the next pages wait for it); one over it is skipped and says how much it would have read,
// with its reason, and no count (null in the JSON, never 0).
func TestUnionsKeepTheBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := redistest.ClearOfHourEnd(t, time.Minute).UTC()
	fam, structs := bitmapFamily(t)
	const size = 30 << 10
	today, _ := fam.Key(store.WindowAt(store.Day, now, time.UTC), []string{"s1"})
	yesterday, _ := fam.Key(store.WindowAt(store.Day, now.AddDate(0, 0, -1), time.UTC), []string{"s1"})
	bitmapOf(t, rdb, today, size, 0)
	bitmapOf(t, rdb, yesterday, size, 1)
	take := func(rate int) (*snapshot.Unique, time.Duration) {
		s := New(rdb, nil, Options{KeysPerSecond: rate, Location: time.UTC, Structures: structs})
		a := NewAggregator(nil, Options{Location: time.UTC, Structures: structs})
		if err := s.Run(ctx, a.Add); err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		a.AddReads(s.Finish(ctx, a.Wants()))
		u := a.Snapshot(true).Uniques[0]
		s.pace.mu.Lock()
		defer s.pace.mu.Unlock()
		return &u, s.pace.next.Sub(at) // what the next page waits for
	}

	// 1,000 keys/s: a union may read 4,000 keys' worth (15.6 MiB); these read 60 KiB.
	u, wait := take(1000)
	if u.Union7d == nil || *u.Union7d != 3 || u.Union30d == nil || *u.Union30d != 3 || u.Union7dSkipped != nil || u.Error != "" {
		t.Fatalf("unions %+v, want 3 members each", u)
	}
	// Charged: 7 and 30 STRLENs, 7 and 30 keys, and 15 keys' weight (60 KiB) for each union's GETs.
	if want := time.Duration(7+30+7+30+2*bitmapCost(2*size)) * time.Millisecond; wait < want {
		t.Errorf("after the unions the next page waits %v, want at least %v (their weight at 1,000 keys/s)", wait, want)
	}

	// 10 keys/s: a union may read 40 KiB; these would read 60 KiB.
	u, _ = take(10)
	if u.Union7d != nil || u.Union30d != nil || u.Union7dSkipped == nil || u.Union30dSkipped == nil || u.Error != "" {
		t.Fatalf("unions %+v, want both skipped", u)
	}
	if sk := u.Union7dSkipped; sk.Bytes != 2*size || sk.BudgetBytes != 10*bitmapBytesPerKey || !strings.Contains(sk.Reason, "keys_per_second") {
		t.Errorf("skipped %+v, want the 60 KiB it would read, the 40 KiB it may, and why", sk)
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"union_7d":null`, `"union_30d":null`, `"union_7d_skipped":{"bytes":61440,"budget_bytes":40960,"reason":"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JSON %s lacks %s", b, want)
		}
	}
}
