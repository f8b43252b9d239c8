package jobs

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkBulkRetry measures a bulk retry of 100,000 jobs Sidekiq itself failed into its retry
// set, with the chunk adapting to BulkMaxCall (as the console runs it) and at fixed sizes, as Redis sees it: the longest single call in SLOWLOG (with
// slowlog-log-slower-than 0, every call is logged) and the longest chunk script. Run it with
//
//	go test ./store -run '^$' -bench BulkRetry -benchtime 1x -timeout 30m
//
// HOURGLASS_BENCH_JOBS changes the 100,000. The set is filled once by Sidekiq
// (testdata/sidekiq/bulk.rb), kept as its DUMP, and restored before each run with the queues
// emptied; the run, with no budget and no journal, is what is timed (the journal's fsyncs are the
// disk's, not Redis'). Each case reports
// max-call-µs (Redis' longest call of the run, any command), max-chunk-µs (the longest
// bulk_apply script), chunk-p50-µs, and jobs/s end to end.
func BenchmarkBulkRetry(b *testing.B) {
	jobs := 100_000
	if n, err := strconv.Atoi(os.Getenv("HOURGLASS_BENCH_JOBS")); err == nil && n > 0 {
		jobs = n
	}
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := b.Context()
	var got struct{ Retry int }
	redistest.RunFixture(b, redistest.Interpreter(b, "ruby", "sidekiq"), "testdata/sidekiq", &got,
		"bulk.rb", "fill", "redis://"+srv.Addr+"/0", strconv.Itoa(jobs), "0")
	set := rdb.Dump(ctx, "retry").Val()
	rdb.ConfigSet(ctx, "slowlog-max-len", "1000000")
	q := Source{Layout: Sidekiq}.SharedQueue()
	for _, c := range []struct {
		name    string
		chunk   int
		maxCall time.Duration
	}{
		{"adaptive", 0, 0}, // what the console runs: the first chunk BulkChunkDefault, then sized to BulkMaxCall
		{"chunk=25", 25, -1}, {"chunk=50", 50, -1}, {"chunk=100", 100, -1}, {"chunk=200", 200, -1},
	} {
		b.Run(c.name, func(b *testing.B) {
			var st slowStats
			var res BulkResult
			var err error
			start := time.Now()
			for range b.N {
				b.StopTimer()
				rdb.Del(ctx, "retry", "queue:default", "queue:mail")
				rdb.Restore(ctx, "retry", 0, set)
				rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0")
				rdb.SlowLogReset(ctx)
				b.StartTimer()
				res, err = RunBulk(ctx, rdb, q, SectionRetry, ActionRunNow, time.Now(), BulkOptions{Chunk: c.chunk, MaxCall: c.maxCall})
				b.StopTimer()
				rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
				if err != nil || res.Done != int64(jobs) {
					b.Fatalf("retry all: %+v, %v", res, err)
				}
				st = slowest(b, rdb)
				b.StartTimer()
			}
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
			b.ReportMetric(us(st.maxCall), "max-call-µs")
			b.ReportMetric(us(st.chunkP50), "chunk-p50-µs")
			b.ReportMetric(us(st.chunkP99), "chunk-p99-µs")
			b.ReportMetric(us(st.chunkP999), "chunk-p99.9-µs")
			b.ReportMetric(us(st.maxOther), "max-read-µs")
			b.ReportMetric(float64(jobs*b.N)/time.Since(start).Seconds(), "jobs/s")
			b.Logf("%s: %d chunks; longest call %v (%s); chunk scripts median %v, p99 %v, p99.9 %v, longest %v; longest read (ZRANGE, ZMSCORE) %v",
				c.name, res.Chunks, st.maxCall, st.maxCmd, st.chunkP50, st.chunkP99, st.chunkP999, st.maxChunk, st.maxOther)
		})
	}
}

// slowStats is what SLOWLOG logged of a run.
type slowStats struct {
	maxCall                                 time.Duration // the longest call, any command
	maxCmd                                  string
	maxChunk, chunkP50, chunkP99, chunkP999 time.Duration // the chunk scripts (EVALSHA, EVAL)
	maxOther                                time.Duration // the longest other call: the page reads
}

// slowest reads the whole SLOWLOG of a run.
func slowest(b *testing.B, rdb *redis.Client) slowStats {
	entries, err := rdb.SlowLogGet(b.Context(), -1).Result()
	if err != nil {
		b.Fatal(err)
	}
	var st slowStats
	var chunks []time.Duration
	for _, e := range entries {
		name := ""
		if len(e.Args) > 0 {
			name = strings.ToUpper(e.Args[0])
		}
		read := len(e.Args) > 1 && e.Args[1] == bulkListWindow.Hash() // a list's window, read
		switch {
		case name == "SLOWLOG" || name == "CONFIG":
			continue
		case (name == "EVALSHA" || name == "EVAL") && !read:
			chunks = append(chunks, e.Duration)
			st.maxChunk = max(st.maxChunk, e.Duration)
		default:
			st.maxOther = max(st.maxOther, e.Duration)
		}
		if e.Duration > st.maxCall {
			st.maxCall, st.maxCmd = e.Duration, name
		}
	}
	if n := len(chunks); n > 0 {
		slices.Sort(chunks)
		st.chunkP50, st.chunkP99, st.chunkP999 = chunks[n/2], chunks[n*99/100], chunks[n*999/1000]
	}
	return st
}
