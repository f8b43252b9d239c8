package store

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestWriteKeepsAKeysOwnTTL writes through the writer to keys that already hold a TTL other than
// their window-aligned one, one of them at 0 so that the write brings it to exactly the delta,
// and checks each keeps the TTL it had: only a key without a TTL is given one. The key at 0 is
// checked on Redis 7.0 and later only: before, the script takes a key the write brings to exactly
// its delta for one it created (miniredis's scripts name no version, so it stands for those).
func TestWriteKeepsAKeysOwnTTL(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := newStore(t, b.rdb, Options{})
		f := adRevenue(t)
		at := s.Now()
		starts := []int64{0, 5}
		if b.mini != nil {
			starts = starts[1:]
		}
		for _, start := range starts {
			dims := []string{"own", strconv.FormatInt(start, 10)}
			hour, err := f.Key(WindowAt(Hour, at, f.Zone(shanghai)), dims)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.rdb.Set(t.Context(), hour, start, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			w := s.NewWriter(WriterOptions{})
			if err := w.Add(f, dims, 3, at); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := getInt(t, b.rdb, hour); got != start+3 {
				t.Errorf("%s = %d, want %d", hour, got, start+3)
			}
			ttl, err := b.rdb.TTL(t.Context(), hour).Result()
			if err != nil {
				t.Fatal(err)
			}
			if ttl > time.Hour || ttl < time.Hour-5*time.Second {
				t.Errorf("%s (was %d) TTL %v after the write, want the hour it had", hour, start, ttl)
			}
		}
	})
}

// TestSteadyWritesAskNoTTL checks that on Redis 7.0 and later a write to keys that exist with
// their TTLs costs one PEXPIREAT ... NX a key and no PTTL, that the NX leaves their TTLs alone,
// and that a key whose TTL was removed gets it back.
func TestSteadyWritesAskNoTTL(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	if v := serverVersion(t, rdb); v < 7 {
		t.Skipf("redis-server %d has no PEXPIREAT NX", v)
	}
	s := newStore(t, rdb, Options{})
	f := adRevenue(t)
	at := s.Now()
	w := s.NewWriter(WriterOptions{})
	add := func() {
		t.Helper()
		for i := range 50 {
			if err := w.Add(f, []string{"steady", strconv.Itoa(i)}, 1, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	add() // the keys are created with their TTLs
	leaked, err := f.Key(WindowAt(Day, at, f.Zone(shanghai)), []string{"steady", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Persist(t.Context(), leaked).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigResetStat(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	add()
	stats := commandCalls(t, rdb)
	if stats["pttl"] != 0 || stats["pexpireat"] != 100 || stats["incrby"] != 100 {
		t.Errorf("a write of 50 pairs to existing keys ran %v, want 100 INCRBY, 100 PEXPIREAT and no PTTL", stats)
	}
	b := backend{name: "redis-server", rdb: rdb, real: srv}
	for i := range 50 {
		for _, g := range []Granularity{Hour, Day} {
			key, _ := f.Key(WindowAt(g, at, f.Zone(shanghai)), []string{"steady", strconv.Itoa(i)})
			checkTTL(t, b, key, expectedExpiry(g, at), s.Now())
			if got := getInt(t, rdb, key); got != 2 {
				t.Errorf("%s = %d, want 2", key, got)
			}
		}
	}
}

// serverVersion returns the server's major version, from INFO server.
func serverVersion(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			major, _, _ := strings.Cut(v, ".")
			n, _ := strconv.Atoi(major)
			return n
		}
	}
	t.Fatal("INFO server has no redis_version")
	return 0
}

// commandCalls returns the calls of each command since the last CONFIG RESETSTAT, by lower-case
// name, from INFO commandstats.
func commandCalls(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		calls[name], _ = addStat(0, 0, rest)
	}
	return calls
}
