package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// compareRedisBenchmark runs redis-benchmark on fresh keys and on keys that are all there, on one
// connection and on four, into rep; when it cannot run, rep says why instead.
func (b *bencher) compareRedisBenchmark(rep *Report, events int) {
	for _, c := range []struct {
		clients int
		steady  bool
		rate    **float64
		us      **float64
	}{
		{1, false, &rep.RedisBenchmark, &rep.RBFreshC1},
		{4, false, &rep.RedisBenchmark4, &rep.RBFreshC4},
		{1, true, &rep.RedisBenchmarkSteady, &rep.RBSteadyC1},
		{4, true, &rep.RedisBenchmarkSteady4, &rep.RBSteadyC4},
	} {
		keys := "fresh keys"
		if c.steady {
			keys = "keys there"
		}
		b.step("redis-benchmark -c %d -P 16, 1 pair a call, %s", c.clients, keys)
		if rep.RedisBenchmarkSkipped != "" || b.ctx.Err() != nil {
			continue
		}
		rate, us, err := b.redisBenchmark(events, c.clients, c.steady)
		if err != nil {
			rep.RedisBenchmarkSkipped = err.Error()
			continue
		}
		*c.rate, *c.us = &rate, us
	}
	if rep.RedisBenchmarkSkipped != "" { // all four or none
		rep.RedisBenchmark, rep.RedisBenchmark4, rep.RedisBenchmarkSteady, rep.RedisBenchmarkSteady4 = nil, nil, nil, nil
		rep.RBFreshC1, rep.RBFreshC4, rep.RBSteadyC1, rep.RBSteadyC4 = nil, nil, nil, nil
	}
}

// rbKey is the key redis-benchmark's __rand_int__ gives for i, of granularity g ("h" or "d").
func rbKey(i int, g string) string {
	return fmt.Sprintf("{%s%012d}:%s", store.BenchKey("rb:"), i, g)
}

// redisBenchmark runs redis-benchmark -c clients -P 16 on the counter script, one pair a call,
// n calls: on fresh keys drawn from a million (-r 1000000, an empty keyspace), or steady, on
// keys drawn from n (-r n) that are all written first with their TTL. It returns pairs/s and
// Redis' µs a pair.
func (b *bencher) redisBenchmark(n, clients int, steady bool) (float64, *float64, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, nil, fmt.Errorf("redis-benchmark is not installed (Debian: redis-tools)")
	}
	if b.target.TLS != nil {
		return 0, nil, fmt.Errorf("skipped over TLS: redis-benchmark would need its own TLS options")
	}
	st := store.New(b.rdb, store.Options{})
	if err := st.LoadScripts(b.ctx); err != nil {
		return 0, nil, err
	}
	if err := b.clean(); err != nil {
		return 0, nil, err
	}
	expAt := time.Now().Add(3 * time.Hour)
	keyspace := benchKeyspace
	if steady {
		keyspace = n
		if err := b.fillRedisBenchmark(n, expAt); err != nil {
			return 0, nil, err
		}
	}
	exp := strconv.FormatInt(expAt.UnixMilli(), 10)
	host, port, err := net.SplitHostPort(b.target.Addrs[0])
	if err != nil {
		return 0, nil, err
	}
	args := []string{"-h", host, "-p", port, "--dbnum", strconv.Itoa(b.target.DB), "-c", strconv.Itoa(clients), "-P", "16",
		"-n", strconv.Itoa(n), "-r", strconv.Itoa(keyspace), "--csv"}
	if b.target.Username != "" {
		args = append(args, "--user", b.target.Username)
	}
	args = append(args, "EVALSHA", store.CounterScriptHash(), "3", "{"+store.BenchKey("rb")+"}:seq", "{"+store.BenchKey("rb:__rand_int__")+"}:h",
		"{"+store.BenchKey("rb:__rand_int__")+"}:d", "0", "0", "0", "1", exp, "1", exp)
	cmd := exec.CommandContext(b.ctx, bin, args...)
	if b.target.Password != "" { // by the environment, not the command line, where ps would show it
		cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+b.target.Password)
	}
	mk := b.meter.start(b.ctx)
	out, err := cmd.Output()
	if err != nil {
		if b.ctx.Err() != nil {
			return 0, nil, b.ctx.Err()
		}
		return 0, nil, fmt.Errorf("redis-benchmark: %v: %s", err, out)
	}
	id := fmt.Sprintf("redis_benchmark_fresh_c%d", clients)
	if steady {
		id = fmt.Sprintf("redis_benchmark_steady_c%d", clients)
	}
	var us *float64
	if stime := b.meter.since(b.ctx, mk, float64(n), "key pair", map[string]int64{"evalsha": int64(n)}); stime != nil {
		b.server[id], us = stime, &stime.UsPer
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		return 0, nil, fmt.Errorf("redis-benchmark printed %q", out)
	}
	rate, err := strconv.ParseFloat(rows[1][1], 64)
	return rate, us, err
}

// fillRedisBenchmark writes the hour and day key of each of the first n of redis-benchmark's
// keys, each with a count of 1 and its expiry, as the script leaves a key it wrote.
func (b *bencher) fillRedisBenchmark(n int, expAt time.Time) error {
	for start := 0; start < n; start += 5000 {
		pipe := b.rdb.Pipeline()
		for i := start; i < min(start+5000, n); i++ {
			for _, g := range []string{"h", "d"} {
				pipe.Set(b.ctx, rbKey(i, g), 1, 0)
				pipe.PExpireAt(b.ctx, rbKey(i, g), expAt)
			}
		}
		if _, err := pipe.Exec(b.ctx); err != nil {
			return err
		}
	}
	return nil
}
