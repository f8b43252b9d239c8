package scanner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"hourglass/internal/redistest"
)

// BenchmarkSweep compares a full sweep (SCAN, classify, PTTL and GET of every family key) with a
// raw SCAN of the same keys at the same COUNT, in one run against one redis-server. Half the keys
// belong to a family. Run it with
//
//	go test ./scanner -run '^$' -bench Sweep -benchtime 3x
func BenchmarkSweep(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	const n = 400_000
	hour := time.Now().In(shanghai).Format("2006010215")
	for start := 0; start < n; start += 10_000 {
		pipe := rdb.Pipeline()
		for i := start; i < start+10_000; i++ {
			if i%2 == 0 {
				pipe.Set(ctx, fmt.Sprintf("{ch%d:ad%d}:%s", i%97, i, hour), i, time.Hour)
			} else {
				pipe.Set(ctx, fmt.Sprintf("session:%d", i), "x", 0)
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("raw_scan", func(b *testing.B) {
		var keys int
		start := time.Now()
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
		b.ReportMetric(float64(keys)/time.Since(start).Seconds(), "keys/s")
	})
	b.Run("sweep", func(b *testing.B) {
		var keys, read int
		start := time.Now()
		for range b.N {
			s := New(rdb, families(b), Options{Count: 1000, Location: shanghai})
			if err := s.Run(ctx, func(p Page) { keys += p.Seen; read += len(p.Keys) }); err != nil {
				b.Fatal(err)
			}
		}
		secs := time.Since(start).Seconds()
		b.ReportMetric(float64(keys)/secs, "keys/s")
		b.ReportMetric(float64(read)/secs, "read/s")
	})
}
