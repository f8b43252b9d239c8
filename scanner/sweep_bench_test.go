package scanner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkSweep compares, in one run against one redis-server holding 1M keys (every one of them
// a family key, the costliest case: each needs its TTL and value read), four passes at COUNT 1000:
//
//   - raw_scan: SCAN alone, nothing else;
//   - redis_cli_scan: `redis-cli --scan | wc -l`, for reference (Debian's redis-cli has no --count);
//   - sweep: SCAN, classify, PTTL and value of every family key;
//   - snapshot: the sweep folded into a Snapshot (windows, top dims, TTL health, reconciliation).
//
// Run it with
//
//	go test ./scanner -run '^$' -bench Sweep -benchtime 3x
//
// HOURGLASS_BENCH_KEYS changes the number of keys. Like the hourglass binary, the benchmark
// collects garbage at GOGC=400 unless GOGC is set.
func BenchmarkSweep(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	n := benchKeys()
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	fillCounters(b, rdb, n)
	rate := func(b *testing.B, keys int, start time.Time, cpu0, self0 float64) {
		secs := time.Since(start).Seconds()
		b.ReportMetric(float64(keys)/secs, "keys/s")
		b.ReportMetric(100*(redisCPU(b, rdb)-cpu0)/secs, "redis-cpu-%")
		b.ReportMetric(100*(selfCPU()-self0)/secs, "client-cpu-%")
	}
	b.Run("raw_scan", func(b *testing.B) {
		var keys int
		cpu0, self0, start := redisCPU(b, rdb), selfCPU(), time.Now()
		for range b.N {
			var cursor uint64
			for {
				page, next, err := rdb.Scan(ctx, cursor, "", 1000).Result()
				if err != nil {
					b.Fatal(err)
				}
				keys += len(page)
				if cursor = next; cursor == 0 {
					break
				}
			}
		}
		rate(b, keys, start, cpu0, self0)
	})
	b.Run("redis_cli_scan", func(b *testing.B) {
		cli, err := exec.LookPath("redis-cli")
		if err != nil {
			b.Skip("redis-cli is not installed")
		}
		host, port, _ := strings.Cut(srv.Addr, ":")
		var keys int
		start := time.Now()
		for range b.N {
			out, err := exec.Command("sh", "-c", fmt.Sprintf("%s -h %s -p %s --scan | wc -l", cli, host, port)).Output()
			if err != nil {
				b.Fatal(err)
			}
			k, err := strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				b.Fatal(err)
			}
			keys += k
		}
		b.ReportMetric(float64(keys)/time.Since(start).Seconds(), "keys/s")
	})
	b.Run("sweep", func(b *testing.B) {
		var keys, read int
		cpu0, self0, start := redisCPU(b, rdb), selfCPU(), time.Now()
		for range b.N {
			s := New(rdb, families(b), Options{Count: 1000, Location: shanghai})
			if err := s.Run(ctx, func(p Page) { keys += p.Seen; read += len(p.Keys) }); err != nil {
				b.Fatal(err)
			}
		}
		if read != keys {
			b.Fatalf("read %d of %d keys", read, keys)
		}
		rate(b, keys, start, cpu0, self0)
	})
	b.Run("snapshot", func(b *testing.B) {
		var keys int64
		cpu0, self0, start := redisCPU(b, rdb), selfCPU(), time.Now()
		for range b.N {
			snap, err := Take(ctx, rdb, families(b), Options{Count: 1000, Location: shanghai})
			if err != nil {
				b.Fatal(err)
			}
			keys += snap.Scan.KeysSeen
		}
		rate(b, int(keys), start, cpu0, self0)
	})
}

// redisCPU returns the CPU seconds the server has used, from INFO cpu.
func redisCPU(b *testing.B, rdb *redis.Client) float64 {
	b.Helper()
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, f := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
		}
	}
	return total
}

// selfCPU returns the CPU seconds this process has used.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
