package scanner

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// counterName is the i-th key of the benchmarks' keyspace, in hour: every key of it belongs to
// families(b), half to each family.
func counterName(i int, hour string) string {
	if i%2 == 0 {
		return fmt.Sprintf("{ch%d:ad%d}:%s", i%97, i/24, hour)
	}
	return fmt.Sprintf("flow:count:app%d:dev%d:10.0.%d.%d:%s", i%7, i%1000, i/256%256, i%256, hour)
}

// benchHours are the last 24 hours in families(b)'s zone, newest first.
func benchHours() []string {
	now := time.Now()
	hours := make([]string, 24)
	for h := range hours {
		hours[h] = now.Add(-time.Duration(h) * time.Hour).In(shanghai).Format("2006010215")
	}
	return hours
}

// fillCounters writes n keys of the benchmarks' keyspace, spread over 24 hours.
func fillCounters(b testing.TB, rdb *redis.Client, n int) {
	ctx, hours := context.Background(), benchHours()
	for start := 0; start < n; start += 10_000 {
		pipe := rdb.Pipeline()
		for i := start; i < min(start+10_000, n); i++ {
			pipe.Set(ctx, counterName(i, hours[i%24]), i, 48*time.Hour)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// benchKeys is HOURGLASS_BENCH_KEYS, or 1M.
func benchKeys() int {
	if v, err := strconv.Atoi(os.Getenv("HOURGLASS_BENCH_KEYS")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

// BenchmarkDiscoverAdd measures, on the client alone, what a page of unclaimed keys costs the
// sweep beside a page of claimed ones, over the same 100,000 names (those of BenchmarkSweep):
//
//   - classify: the sweep's classification with families(b), which claim every name (the
//     reference: what a configured key costs before it is read);
//   - unclaimed: the same classification with no config, every name counted into discover's
//     groups (classify, then one Groups.Add per page);
//   - add: Groups.Add alone.
//
// Each is reported in ns and allocations a key, with unclaimed÷classify as discover/classify.
//
//	go test ./scanner -run '^$' -bench DiscoverAdd
func BenchmarkDiscoverAdd(b *testing.B) {
	hours := benchHours()
	names := make([]string, 100_000)
	for i := range names {
		names[i] = counterName(i, hours[i%24])
	}
	claimed := New(nil, families(b), Options{Location: shanghai})
	unclaimed := New(nil, nil, Options{Location: shanghai})
	groups := discover.New(discover.Options{Location: shanghai})
	const page = 1000
	pageOf := func(i int) []string { return names[i*page%len(names):][:page] }
	paths := []func([]string){
		func(p []string) {
			if found, _ := claimed.classify("", false, p); len(found) != len(p) {
				b.Fatalf("families claimed %d of %d keys", len(found), len(p))
			}
		},
		func(p []string) { unclaimed.classify("", false, p) },
		func(p []string) { groups.Add(p) },
	}
	// Warm each path over every name once, as a sweep's first pages do: the groups' shapes and
	// their first samples are made then.
	for i := range len(names) / page {
		for _, fn := range paths {
			fn(pageOf(i))
		}
	}
	// The paths take turns on each page, so that what else the machine runs weighs on all alike.
	var elapsed [3]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j, fn := range paths {
			start := time.Now()
			fn(pageOf(i))
			elapsed[j] += time.Since(start)
		}
	}
	b.StopTimer()
	var ns, allocs [3]float64
	for j, fn := range paths {
		ns[j] = float64(elapsed[j].Nanoseconds()) / float64(b.N*page)
		k := 0
		allocs[j] = testing.AllocsPerRun(100, func() { fn(pageOf(k)); k++ }) / page
	}
	b.ReportMetric(ns[0], "classify-ns/key")
	b.ReportMetric(allocs[0], "classify-allocs/key")
	b.ReportMetric(ns[1], "unclaimed-ns/key")
	b.ReportMetric(allocs[1], "unclaimed-allocs/key")
	b.ReportMetric(ns[2], "add-ns/key")
	b.ReportMetric(allocs[2], "add-allocs/key")
	b.ReportMetric(ns[1]/ns[0], "discover/classify")
	if g := groups.Keys(); g < int64(len(names)) {
		b.Fatalf("groups counted %d keys", g)
	}
}

// BenchmarkSweepDiscover sweeps one redis-server holding 1M keys (HOURGLASS_BENCH_KEYS changes
// it; those of BenchmarkSweep) twice an iteration at COUNT 1000: with families(b), which claim
// every key (each key's TTL and value are read), and with no config, every key unclaimed
// (counted into discover's groups, a few of each group read). It reports each pass's keys/s, and
// Redis' and this process's CPU a key, and the unclaimed pass's time over the claimed one's as
// discover/sweep.
//
//	go test ./scanner -run '^$' -bench SweepDiscover -benchtime 3x
func BenchmarkSweepDiscover(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	n := benchKeys()
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	fillCounters(b, rdb, n)
	ctx := context.Background()
	// pass sweeps the server once and returns its seconds, Redis' CPU seconds and this process's.
	pass := func(fams bool) (float64, float64, float64) {
		opt := Options{Count: 1000, Location: shanghai}
		s := New(rdb, nil, opt)
		if fams {
			s = New(rdb, families(b), opt)
		}
		var seen, read int
		cpu0, self0, start := redisCPU(b, rdb), selfCPU(), time.Now()
		if err := s.Run(ctx, func(p Page) { seen += p.Seen; read += len(p.Keys) }); err != nil {
			b.Fatal(err)
		}
		secs := time.Since(start).Seconds()
		if want := map[bool]int{true: n, false: 0}[fams]; seen != n || read != want {
			b.Fatalf("saw %d keys and read %d; want %d and %d", seen, read, n, want)
		}
		if got := s.unclaimedResult().Keys; fams == (got != 0) {
			b.Fatalf("%d keys unclaimed", got)
		}
		return secs, redisCPU(b, rdb) - cpu0, selfCPU() - self0
	}
	var sweep, disc [3]float64 // seconds, Redis CPU seconds, client CPU seconds
	b.ResetTimer()
	for range b.N {
		for _, p := range []struct {
			fams bool
			sum  *[3]float64
		}{{true, &sweep}, {false, &disc}} {
			secs, redis, client := pass(p.fams)
			p.sum[0], p.sum[1], p.sum[2] = p.sum[0]+secs, p.sum[1]+redis, p.sum[2]+client
		}
	}
	keys := float64(b.N * n)
	b.ReportMetric(keys/sweep[0], "sweep-keys/s")
	b.ReportMetric(keys/disc[0], "discover-keys/s")
	b.ReportMetric(1e9*sweep[1]/keys, "sweep-redis-cpu-ns/key")
	b.ReportMetric(1e9*disc[1]/keys, "discover-redis-cpu-ns/key")
	b.ReportMetric(1e9*sweep[2]/keys, "sweep-client-cpu-ns/key")
	b.ReportMetric(1e9*disc[2]/keys, "discover-client-cpu-ns/key")
	b.ReportMetric(disc[0]/sweep[0], "discover/sweep")
}
