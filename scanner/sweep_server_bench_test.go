package scanner

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkSweepServer measures what a sweep costs Redis itself beside a raw SCAN pass at the
// same COUNT (1000), on a redis-server holding 1M keys (HOURGLASS_BENCH_KEYS), every one a family
// key whose TTL and value the sweep reads. Run it with
//
//	go test ./scanner -run '^$' -bench SweepServer -benchtime 1x
//
// Each of HOURGLASS_BENCH_ROUNDS rounds (3 when unset) runs a raw SCAN pass and then a sweep, so
// each ratio compares passes seconds apart. A pass reports keys/s; Redis' time per key from INFO
// commandstats (the usec of every command, reset before the pass) and its main thread's CPU per
// key; the client's CPU per key; the collections Go ran and their pauses; the live heap after
// the pass; and the longest call Redis logged (slowlog-log-slower-than 200 µs), and the longest
// other than SCAN (the reads the sweep adds). The metrics
// are the medians over the rounds, with the ratio's min and max; each pass is logged. Like the
// hourglass binary, the benchmark collects garbage at GOGC=400 unless GOGC is set.
func BenchmarkSweepServer(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	srv := redistest.Start(b, "--slowlog-log-slower-than", "200", "--slowlog-max-len", "100000")
	rdb := srv.Client(b)
	fillCounters(b, rdb, benchKeys())
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("HOURGLASS_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	figures := map[string][]float64{}
	b.ResetTimer()
	for round := range rounds {
		var rate [2]float64
		for i, pass := range []struct {
			name string
			run  func(b *testing.B, rdb *redis.Client) int
		}{{"raw", rawScan}, {"sweep", sweepPass}} {
			p := measurePass(b, rdb, pass.run)
			b.Logf("round %d %s: %s", round+1, pass.name, p)
			rate[i] = p.rate()
			figures[pass.name+"-keys/s"] = append(figures[pass.name+"-keys/s"], p.rate())
			figures[pass.name+"-server-µs/key"] = append(figures[pass.name+"-server-µs/key"], p.usec/float64(p.keys))
			figures[pass.name+"-cpu-µs/key"] = append(figures[pass.name+"-cpu-µs/key"], p.cpu*1e6/float64(p.keys))
			figures[pass.name+"-longest-µs"] = append(figures[pass.name+"-longest-µs"], float64(p.longest))
			figures[pass.name+"-longest-read-µs"] = append(figures[pass.name+"-longest-read-µs"], float64(p.longestRead))
		}
		figures["sweep/raw"] = append(figures["sweep/raw"], rate[1]/rate[0])
	}
	for name, v := range figures {
		slices.Sort(v)
		b.ReportMetric(v[len(v)/2], name)
	}
	r := figures["sweep/raw"]
	b.ReportMetric(r[0], "sweep/raw-min")
	b.ReportMetric(r[len(r)-1], "sweep/raw-max")
}

// rawScan SCANs the whole keyspace at COUNT 1000 and returns the keys it saw.
func rawScan(b *testing.B, rdb *redis.Client) int {
	var keys int
	var cursor uint64
	for {
		page, next, err := rdb.Scan(context.Background(), cursor, "", 1000).Result()
		if err != nil {
			b.Fatal(err)
		}
		keys += len(page)
		if cursor = next; cursor == 0 {
			return keys
		}
	}
}

// sweepPass sweeps the whole keyspace at COUNT 1000, checks every key was read, and returns the
// keys it saw.
func sweepPass(b *testing.B, rdb *redis.Client) int {
	var keys, read int
	s := New(rdb, families(b), Options{Count: 1000, Location: shanghai})
	if err := s.Run(context.Background(), func(p Page) { keys += p.Seen; read += len(p.Keys) }); err != nil {
		b.Fatal(err)
	}
	if read != keys {
		b.Fatalf("read %d of %d keys", read, keys)
	}
	return keys
}

// pass is what one pass cost.
type pass struct {
	keys          int
	secs          float64
	usec, cpu     float64 // Redis: commandstats usec of every command; main thread CPU seconds
	self          float64 // the client's CPU seconds
	gcs           uint32
	gcPause       time.Duration
	heap          uint64 // live heap after the pass, after a collection
	longest       int64  // µs of the longest call Redis logged; 0 when none took 200 µs
	longestCmd    string // its command
	longestRead   int64  // µs of the longest call other than SCAN
	longestReadOf string // its command
	over2ms, slow int    // calls over 2 ms, calls logged
}

func (p pass) rate() float64 { return float64(p.keys) / p.secs }

func (p pass) String() string {
	return fmt.Sprintf("%d keys, %.0f keys/s; Redis %.2f µs/key (cpu %.2f, busy %.0f%%); client cpu %.2f µs/key; "+
		"%d GCs, %v paused, live heap %d KiB; longest call %d µs (%s), longest other than SCAN %d µs (%s), %d over 2 ms, %d over 200 µs",
		p.keys, p.rate(), p.usec/float64(p.keys), p.cpu*1e6/float64(p.keys), 100*p.cpu/p.secs,
		p.self*1e6/float64(p.keys), p.gcs, p.gcPause.Round(time.Millisecond), p.heap/1024,
		p.longest, p.longestCmd, p.longestRead, p.longestReadOf, p.over2ms, p.slow)
}

// measurePass runs run once, with the server's statistics and slow log reset before it.
func measurePass(b *testing.B, rdb *redis.Client, run func(*testing.B, *redis.Client) int) pass {
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	if err := rdb.Do(ctx, "SLOWLOG", "RESET").Err(); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, self0, start := mainThreadCPU(b, rdb), selfCPU(), time.Now()
	keys := run(b, rdb)
	p := pass{keys: keys, secs: time.Since(start).Seconds(), self: selfCPU() - self0}
	p.cpu = mainThreadCPU(b, rdb) - cpu0
	runtime.ReadMemStats(&m1)
	p.gcs, p.gcPause = m1.NumGC-m0.NumGC, time.Duration(m1.PauseTotalNs-m0.PauseTotalNs)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	p.heap = m1.HeapAlloc
	p.usec = commandUsec(b, rdb)
	slow, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range slow {
		us := e.Duration.Microseconds()
		name := ""
		if len(e.Args) > 0 {
			name = strings.ToUpper(e.Args[0])
		}
		if name == "SLOWLOG" || name == "CONFIG" || name == "INFO" {
			continue // the measurement's own
		}
		p.slow++
		if us > p.longest {
			p.longest, p.longestCmd = us, name
		}
		if name != "SCAN" && us > p.longestRead {
			p.longestRead, p.longestReadOf = us, name
		}
		if us > 2000 {
			p.over2ms++
		}
	}
	return p
}

// commandUsec sums the usec of every command in INFO commandstats, less the INFO and CONFIG
// calls the measurement makes.
func commandUsec(b *testing.B, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || strings.HasPrefix(name, "cmdstat_info") ||
			strings.HasPrefix(name, "cmdstat_config") || strings.HasPrefix(name, "cmdstat_slowlog") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
		}
	}
	return total
}

// mainThreadCPU returns the CPU seconds Redis' main thread has used, from INFO cpu.
func mainThreadCPU(b testing.TB, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, f := range []string{"used_cpu_user_main_thread:", "used_cpu_sys_main_thread:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
		}
	}
	return total
}
