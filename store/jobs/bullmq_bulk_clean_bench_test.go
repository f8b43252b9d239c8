package jobs

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkBulkBullMQClean measures delete all of BullMQ's failed, delayed and waiting sections
// (Queue.clean, bullmq_bulk_clean.go) with the chunk adapting to BulkMaxCall, as the console runs
// it, as Redis sees it (SLOWLOG, every call logged). Run it with
//
//	go test ./store -run '^$' -bench BulkBullMQClean -benchtime 1x
//
// HOURGLASS_BENCH_JOBS (default 2,000) is the jobs BullMQ itself puts in each section
// (testdata/node/bullmq_clean.mjs fill: the failed ones each with a log line, failed by a Worker,
// which takes a while). Each section reports max-call-µs (Redis' longest call of the run, any
// command), max-chunk-µs, chunk-p50-µs and chunk-p99-µs (the clean scripts).
func BenchmarkBulkBullMQClean(b *testing.B) {
	jobs := 2000
	if n, err := strconv.Atoi(os.Getenv("HOURGLASS_BENCH_JOBS")); err == nil && n > 0 {
		jobs = n
	}
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := b.Context()
	node := redistest.Interpreter(b, "node", "bullmq", "ioredis")
	var read bullmqCleanRead
	redistest.RunFixture(b, node, redistest.NodeDir(), &read, "bullmq_clean.mjs", "redis://"+srv.Addr, "fill", strconv.Itoa(jobs))
	saved := map[string]string{}
	for it := rdb.Scan(ctx, 0, "bull:*", 1000).Iterator(); it.Next(ctx); {
		saved[it.Val()] = rdb.Dump(ctx, it.Val()).Val()
	}
	rdb.ConfigSet(ctx, "slowlog-max-len", "1000000")
	q := Source{Layout: BullMQ}.Queue("clean")
	for _, sec := range []TaskSection{SectionDead, SectionLater, SectionWaiting} {
		b.Run(string(sec), func(b *testing.B) {
			var st slowStats
			var res BulkResult
			for range b.N {
				b.StopTimer()
				for k, v := range saved {
					rdb.RestoreReplace(ctx, k, 0, v)
				}
				rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0")
				rdb.SlowLogReset(ctx)
				b.StartTimer()
				var err error
				res, err = RunBulk(ctx, rdb, q, sec, ActionDelete, time.Now(), BulkOptions{})
				b.StopTimer()
				rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
				if err != nil || res.Done < int64(jobs) {
					b.Fatalf("delete all of %s: %+v, %v", sec, res, err)
				}
				st = slowest(b, rdb)
				b.StartTimer()
			}
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
			b.ReportMetric(us(st.maxCall), "max-call-µs")
			b.ReportMetric(us(st.maxChunk), "max-chunk-µs")
			b.ReportMetric(us(st.chunkP50), "chunk-p50-µs")
			b.ReportMetric(us(st.chunkP99), "chunk-p99-µs")
			b.Logf("%s: %d jobs in %d chunks; longest call %v (%s); chunk scripts median %v, p99 %v, longest %v; longest read %v",
				sec, res.Done, res.Chunks, st.maxCall, st.maxCmd, st.chunkP50, st.chunkP99, st.maxChunk, st.maxOther)
		})
	}
}
