package jobs

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkBulkListDelete measures a delete all of a Sidekiq queue of 100,000 jobs its
// Client#push pushed (as Queue#clear would clear it), then its undo, with the chunks adapting to
// BulkMaxCall as the console runs them, as Redis sees it (SLOWLOG, every call logged): the
// longest call of any command and the chunk scripts' spread. Run it with
//
//	go test ./store -run '^$' -bench BulkListDelete -benchtime 1x -timeout 30m
//
// HOURGLASS_BENCH_JOBS changes the 100,000. The queue is kept as its DUMP and restored before
// each run, with no budget and no journal.
func BenchmarkBulkListDelete(b *testing.B) {
	jobs := 100_000
	if n, err := strconv.Atoi(os.Getenv("HOURGLASS_BENCH_JOBS")); err == nil && n > 0 {
		jobs = n
	}
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := b.Context()
	var got struct{ Size int }
	redistest.RunFixture(b, redistest.Interpreter(b, "ruby", "sidekiq"), "testdata/sidekiq", &got,
		"bulk.rb", "push", "redis://"+srv.Addr+"/0", "mail", strconv.Itoa(jobs))
	list := rdb.Dump(ctx, "queue:mail").Val()
	rdb.ConfigSet(ctx, "slowlog-max-len", "1000000")
	q := Source{Layout: Sidekiq}.Queue("mail")
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
	var del, und slowStats
	var res BulkResult
	var ur UndoResult
	for range b.N {
		b.StopTimer()
		rdb.Del(ctx, "queue:mail")
		rdb.Restore(ctx, "queue:mail", 0, list)
		rdb.SAdd(ctx, "queues", "mail")
		var undo []UndoTask
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0")
		rdb.SlowLogReset(ctx)
		b.StartTimer()
		var err error
		res, err = RunBulk(ctx, rdb, q, SectionWaiting, ActionDelete, time.Now(), BulkOptions{
			Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
		})
		b.StopTimer()
		if err != nil || res.Done != int64(jobs) {
			b.Fatalf("delete all: %+v, %v", res, err)
		}
		del = slowest(b, rdb)
		rdb.SlowLogReset(ctx)
		if ur, err = Undo(ctx, rdb, undo, 0, nil); err != nil || ur.Restored != int64(jobs) || ur.Keys != 1 {
			b.Fatalf("undo: %+v, %v", ur, err)
		}
		und = slowest(b, rdb)
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
		b.StartTimer()
	}
	b.ReportMetric(us(del.maxCall), "max-call-µs")
	b.ReportMetric(us(del.chunkP99), "chunk-p99-µs")
	b.ReportMetric(us(und.maxCall), "undo-max-call-µs")
	b.ReportMetric(us(und.chunkP99), "undo-chunk-p99-µs")
	b.Logf("delete all: %d chunks; longest call %v (%s); chunks median %v, p99 %v, p99.9 %v, longest %v; longest read %v",
		res.Chunks, del.maxCall, del.maxCmd, del.chunkP50, del.chunkP99, del.chunkP999, del.maxChunk, del.maxOther)
	b.Logf("undo: longest call %v (%s); chunks median %v, p99 %v, p99.9 %v, longest %v",
		und.maxCall, und.maxCmd, und.chunkP50, und.chunkP99, und.chunkP999, und.maxChunk)
}
