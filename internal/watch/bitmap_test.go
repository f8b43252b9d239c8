package watch

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
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

func bitmapFamily(t *testing.T) (*store.Family, scanner.Structures) {
	t.Helper()
	fam, err := store.NewFamily(store.FamilySpec{Name: "dau", Pattern: "dau:<shard>:<window>", DayFormat: "yyyyMMdd", DayRetention: 40 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return fam, scanner.Structures{Uniques: []scanner.UniqueSpec{{Kind: store.Bitmap, Family: fam}}}
}

// TestWatcherPaysForUnionsBeforeTheNextSweep: the console's watcher starts a new sweep when one
// completes; what the completed one read last (its unions among it) is still paid first.
func TestWatcherPaysForUnionsBeforeTheNextSweep(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	now := redistest.ClearOfHourEnd(t, time.Minute).UTC()
	fam, structs := bitmapFamily(t)
	for d := range 7 {
		k, _ := fam.Key(store.WindowAt(store.Day, now.AddDate(0, 0, -d), time.UTC), []string{"s1"})
		bitmapOf(t, rdb, k, 400<<10, int64(d))
	}
	const rate = 2000 // a union may read 7.8 MiB; each of these reads 2.7 MiB, 700 keys' weight
	w := New(rdb, nil, scanner.Options{KeysPerSecond: rate, Location: time.UTC, Structures: structs})
	var st snapshot.Status
	var err error
	for !st.Sweep.Completed {
		if st, err = w.Poll(t.Context(), time.Second, ""); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now()
	if u := st.Snapshot.Uniques[0]; u.Union7d == nil || *u.Union7d != 8 {
		t.Fatalf("unions %+v, want 8 members (a bit a day, and the last of each)", u)
	}
	wait := w.sweep.Pacer().Next().Sub(at)
	// The 7-day union alone weighs its 7 STRLENs, 7 keys and 700 keys' bitmaps (a key per 4 KiB).
	if want := time.Duration(float64(7+7+(7*400<<10)/4096) / rate * float64(time.Second)); wait < want {
		t.Errorf("the next sweep may start in %v, want at least %v: the unions were not paid", wait, want)
	}
}
