package store

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkWriter measures the batch writer against a real redis-server, and, in the same run
// and against the same server, redis-benchmark calling the same script with one key pair per
// call, 16 calls pipelined per connection. Run it with
//
//	go test ./store -run '^$' -bench Writer -benchtime 2000000x
//
// The "depth16_lanes1" cases hold the writer to redis-benchmark -c 1 -P 16's shape: one
// connection, pipelines of 16 calls; "depth16_lanes4" to -c 4 -P 16's. The "default" cases use
// the writer's defaults (4 lanes, pipelines of up to 256 calls). Each case starts on an empty
// server and reports events/s, pairs/s (hour+day key pairs updated: the figure to set beside
// redis-benchmark's calls/s) and scripts/s (calls).
func BenchmarkWriter(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	const depth = 16 // script calls per pipeline, as redis-benchmark -P 16

	for _, c := range []struct {
		name         string
		pairsPerCall int  // 0 for the default (32)
		lanes, calls int  // WriterOptions.Lanes and CallsPerPipeline; 0 for the defaults
		dims         int  // distinct dims tuples for Zipf draws; otherwise drawn uniformly from 1M
		zipf         bool // draw tuples Zipf-like (pre-aggregation folds the hot ones)
	}{
		{"depth16_lanes1/pairs_per_call=1", 1, 1, depth, 0, false},
		{"depth16_lanes1/pairs_per_call=16", 16, 1, depth, 0, false},
		{"depth16_lanes1/pairs_per_call=32", 32, 1, depth, 0, false},
		{"depth16_lanes1/pairs_per_call=64", 64, 1, depth, 0, false},
		{"depth16_lanes4/pairs_per_call=1", 1, 4, depth, 0, false},
		{"depth16_lanes4/pairs_per_call=16", 16, 4, depth, 0, false},
		{"depth16_lanes4/pairs_per_call=32", 32, 4, depth, 0, false},
		{"default/pairs_per_call=1", 1, 0, 0, 0, false},
		{"default/pairs_per_call=16", 16, 0, 0, 0, false},
		{"default/pairs_per_call=32", 0, 0, 0, 0, false},
		{"default/pairs_per_call=64", 64, 0, 0, 0, false},
		{"default/zipf_dims=10000", 0, 0, 0, 10000, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
			s := New(rdb, Options{Location: shanghai})
			if err := s.Init(context.Background()); err != nil {
				b.Fatal(err)
			}
			f := adRevenue(b)
			if !c.zipf {
				// Drawn as redis-benchmark -r 1000000 draws its keys, so both find the same
				// share of keys already there.
				c.dims = 1_000_000
			}
			tuples := make([][]string, c.dims)
			for i := range tuples {
				tuples[i] = []string{"ch" + strconv.Itoa(i%97), "ad" + strconv.Itoa(i)}
			}
			r := rand.New(rand.NewPCG(7, 8))
			zipf := rand.NewZipf(r, 1.1, 1, uint64(c.dims-1))
			w := s.NewWriter(WriterOptions{KeysPerCall: 2 * c.pairsPerCall, Lanes: c.lanes, CallsPerPipeline: c.calls})
			// As a service uses it: events are added on one goroutine while another flushes
			// whatever has gathered.
			var sent FlushResult
			b.ResetTimer()
			start := time.Now()
			added := make(chan struct{})
			go func() {
				defer close(added)
				for range b.N {
					idx := r.IntN(c.dims)
					if c.zipf {
						idx = int(zipf.Uint64())
					}
					if err := w.Add(f, tuples[idx], 1, time.Time{}); err != nil {
						panic(err)
					}
				}
			}()
			for done := false; !done; {
				select {
				case <-added:
					done = true
				default:
				}
				res, err := w.Flush(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				sent.Events += res.Events
				sent.Keys += res.Keys
				sent.Calls += res.Calls
			}
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(sent.Events)/secs, "events/s")
			b.ReportMetric(float64(sent.Keys)/2/secs, "pairs/s")
			b.ReportMetric(float64(sent.Calls)/secs, "scripts/s")
		})
	}

	// The yardstick: redis-benchmark sending the same script, one hour+day pair per call, 16 calls
	// pipelined per connection, on one connection, on four (the writer's lanes) and on its default
	// 50. It passes sequence 0, which skips the script's duplicate check: the writer pays for
	// exactly-once (an INCR per call) and redis-benchmark does not.
	for _, clients := range []int{1, 4, 50} {
		b.Run(fmt.Sprintf("redis-benchmark_c=%d_P=%d", clients, depth), func(b *testing.B) {
			bin, err := exec.LookPath("redis-benchmark")
			if err != nil {
				b.Skip("redis-benchmark is not installed (Debian: redis-tools)")
			}
			sha, err := incrWindows.Load(context.Background(), rdb).Result()
			if err != nil {
				b.Fatal(err)
			}
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
			exp := strconv.FormatInt(time.Now().Add(72*time.Hour).UnixMilli(), 10)
			host, port, _ := strings.Cut(srv.Addr, ":")
			n := max(b.N, 1000)

			out, err := exec.Command(bin, "-h", host, "-p", port, "-c", strconv.Itoa(clients), "-P", strconv.Itoa(depth),
				"-n", strconv.Itoa(n), "-r", "1000000", "--csv",
				"EVALSHA", sha, "3", "{rb}:seq", "{rb:__rand_int__}:h", "{rb:__rand_int__}:d", "0", "0", "0", "1", exp, "1", exp).Output()
			if err != nil {
				b.Fatalf("redis-benchmark: %v: %s", err, out)
			}
			rps, err := parseBenchmarkCSV(out)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(rps, "pairs/s")
			b.ReportMetric(rps, "scripts/s")
		})
	}
}

// parseBenchmarkCSV reads the requests per second from redis-benchmark --csv output.
func parseBenchmarkCSV(out []byte) (float64, error) {
	rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		return 0, fmt.Errorf("unexpected redis-benchmark output %q", out)
	}
	return strconv.ParseFloat(rows[1][1], 64)
}
