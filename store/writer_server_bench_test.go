package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// BenchmarkWriterServer measures what Redis itself spends on the batch writer's counter updates,
// from INFO commandstats (the usec of EVALSHA and EVAL), against redis-benchmark calling the same
// script with one hour+day pair a call, 16 calls pipelined, keys drawn from a million, on an
// emptied server. Run it with
//
//	go test ./store -run '^$' -bench WriterServer -benchtime 1000000x
//
// b.N is the events (or redis-benchmark calls) of each case. A round runs every case once, one
// after another on one server, so a round's ratios compare figures taken minutes apart at most;
// HOURGLASS_BENCH_ROUNDS rounds (3 when unset) give each figure's min, median and max. The cases,
// each on one connection (1) and on four (4):
//
//   - ref: redis-benchmark -c 1 or 4 -P 16 -r 1000000, one pair a call, sequence 0;
//   - fresh: the writer with its defaults, every event a new dims tuple, so every pair creates
//     its hour and day keys;
//   - steady: a million tuples written first (their keys exist with their TTLs), then events
//     drawn uniformly from them;
//   - script32 and incrby32 (one connection): redis-benchmark sending calls of 32 pairs on keys
//     that exist, of the counter script and of a script that only INCRBYs each key, which keeps
//     no TTL and is the floor of any script that counts.
//
// Events are added on one goroutine while another flushes, as a service uses the writer. The
// metrics: <case>-µs/pair, Redis' time per hour+day pair updated (the reference's per call);
// <case>-vs-ref, that over the reference on as many connections in the same round; <case>-cpu,
// Redis' main thread CPU time per pair (INFO cpu), which unlike commandstats' wall-clock usec
// does not count time the server waited for a core it shares with the client. The round's
// figures, with calls' sizes in keys and Redis' busy share of the case's time, are logged.
func BenchmarkWriterServer(b *testing.B) {
	if b.N < 1000 {
		return // the sizing run: the figures come from the one run at -benchtime
	}
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("HOURGLASS_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	figures := map[string][]float64{}
	for round := range rounds {
		ref := map[int]cost{}
		for _, c := range []int{1, 4} {
			ref[c] = redisBenchmark(b, srv, rdb, c, b.N)
			b.Logf("round %d ref%d: %s", round+1, c, ref[c])
			figures[fmt.Sprintf("ref%d-µs/pair", c)] = append(figures[fmt.Sprintf("ref%d-µs/pair", c)], ref[c].perPair())
		}
		for _, state := range []string{"fresh", "steady"} {
			flushAll(b, rdb)
			s := New(rdb, Options{Location: shanghai})
			if err := s.Init(context.Background()); err != nil {
				b.Fatal(err)
			}
			f := adRevenue(b)
			if state == "steady" {
				prefill(b, s, f, benchTuples)
			}
			if state == "steady" {
				// What 32-pair calls cost without the writer around them, on the same kind of
				// keys: the counter script, and a script that only INCRBYs (the floor of any
				// script that counts, with no TTL kept at all).
				prefillBenchmarkKeys(b, rdb)
				for _, fl := range []struct{ name, script string }{{"script32", ""}, {"incrby32", incrbyOnly}} {
					c := redisBenchmark32(b, srv, rdb, fl.script, b.N/32)
					b.Logf("round %d %s: %s, %.2f× ref", round+1, fl.name, c, c.perPair()/ref[1].perPair())
					figures[fl.name+"-vs-ref"] = append(figures[fl.name+"-vs-ref"], c.perPair()/ref[1].perPair())
				}
			}
			for _, lanes := range []int{1, 4} {
				if state == "fresh" && lanes > 1 {
					flushAll(b, rdb) // each fresh case starts on an empty keyspace, as the reference does
				}
				c := runCase(b, rdb, s, f, state, lanes)
				name := fmt.Sprintf("%s%d", state, lanes)
				b.Logf("round %d %s: %s, %.2f× ref", round+1, name, c, c.perPair()/ref[lanes].perPair())
				figures[name+"-µs/pair"] = append(figures[name+"-µs/pair"], c.perPair())
				figures[name+"-vs-ref"] = append(figures[name+"-vs-ref"], c.perPair()/ref[lanes].perPair())
				figures[name+"-cpu-µs/pair"] = append(figures[name+"-cpu-µs/pair"], c.cpu*1e6/c.pairs)
			}
		}
	}
	for name, v := range figures {
		slices.Sort(v)
		b.ReportMetric(v[len(v)/2], name)
		if strings.HasSuffix(name, "-vs-ref") {
			b.ReportMetric(v[0], strings.TrimSuffix(name, "-vs-ref")+"-vs-ref-min")
			b.ReportMetric(v[len(v)-1], strings.TrimSuffix(name, "-vs-ref")+"-vs-ref-max")
		}
	}
}

// benchTuples is how many dims tuples the steady case writes first and draws from, as
// redis-benchmark -r 1000000 draws its keys.
const benchTuples = 1_000_000

// redisBenchmark runs redis-benchmark on an emptied server: n calls of the counter script, one
// pair a call, on clients connections, 16 calls pipelined, keys from a million, sequence 0.
func redisBenchmark(b *testing.B, srv *redistest.Server, rdb *redis.Client, clients, n int) cost {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.Skip("redis-benchmark is not installed (Debian: redis-tools)")
	}
	flushAll(b, rdb)
	sha, err := incrWindows.Load(context.Background(), rdb).Result()
	if err != nil {
		b.Fatal(err)
	}
	before, start := serverCost(b, rdb), time.Now()
	exp := strconv.FormatInt(time.Now().Add(72*time.Hour).UnixMilli(), 10)
	host, port, _ := strings.Cut(srv.Addr, ":")
	out, err := exec.Command(bin, "-h", host, "-p", port, "-c", strconv.Itoa(clients), "-P", "16",
		"-n", strconv.Itoa(n), "-r", "1000000", "--csv",
		"EVALSHA", sha, "3", "{rb}:seq", "{rb:__rand_int__}:h", "{rb:__rand_int__}:d", "0", "0", "0", "1", exp, "1", exp).Output()
	if err != nil {
		b.Fatalf("redis-benchmark: %v: %s", err, out)
	}
	d := serverCost(b, rdb).sub(before)
	d.secs = time.Since(start).Seconds()
	d.pairs, d.keys = float64(d.calls), 2*float64(d.calls)
	return d
}

// incrbyOnly adds ARGV[i] to KEYS[i] and nothing else.
const incrbyOnly = `for i = 1, #KEYS do redis.call('INCRBY', KEYS[i], ARGV[i]) end return 1`

// prefillBenchmarkKeys writes the keys redis-benchmark -r 1000000 draws ({rb:<12 digits>}:h and
// :d), with a TTL, so that its calls find them as the writer's steady case finds its own.
func prefillBenchmarkKeys(b *testing.B, rdb *redis.Client) {
	ctx := context.Background()
	for start := 0; start < benchTuples; start += 10_000 {
		pipe := rdb.Pipeline()
		for i := start; i < start+10_000; i++ {
			for _, g := range []string{"h", "d"} {
				pipe.Set(ctx, fmt.Sprintf("{rb:%012d}:%s", i, g), 1, 72*time.Hour)
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// redisBenchmark32 runs redis-benchmark -c 1 -P 16 with n calls of 32 pairs each, keys from a
// million: of the counter script (sequence 0) when script is empty, else of script, which takes
// the keys and one delta a key.
func redisBenchmark32(b *testing.B, srv *redistest.Server, rdb *redis.Client, script string, n int) cost {
	ctx := context.Background()
	sha, err := incrWindows.Load(ctx, rdb).Result()
	if script != "" {
		sha, err = rdb.ScriptLoad(ctx, script).Result()
	}
	if err != nil {
		b.Fatal(err)
	}
	exp := strconv.FormatInt(time.Now().Add(72*time.Hour).UnixMilli(), 10)
	keys, args := []string{"{rb}:seq"}, []string{"0", "0", "0"}
	if script != "" {
		keys, args = nil, nil
	}
	for range 32 {
		keys = append(keys, "{rb:__rand_int__}:h", "{rb:__rand_int__}:d")
		if script != "" {
			args = append(args, "1", "1")
		} else {
			args = append(args, "1", exp, "1", exp)
		}
	}
	host, port, _ := strings.Cut(srv.Addr, ":")
	cmd := append([]string{"-h", host, "-p", port, "-c", "1", "-P", "16", "-n", strconv.Itoa(max(n, 100)),
		"-r", "1000000", "--csv", "EVALSHA", sha, strconv.Itoa(len(keys))}, append(keys, args...)...)
	before, start := serverCost(b, rdb), time.Now()
	if out, err := exec.Command("redis-benchmark", cmd...).CombinedOutput(); err != nil {
		b.Fatalf("redis-benchmark: %v: %s", err, out)
	}
	d := serverCost(b, rdb).sub(before)
	d.secs = time.Since(start).Seconds()
	d.pairs, d.keys = 32*float64(d.calls), 64*float64(d.calls)
	return d
}

// runCase runs the writer on lanes connections over b.N events, each a new tuple (fresh) or drawn
// from the tuples prefill wrote (steady), and returns what Redis spent.
func runCase(b *testing.B, rdb *redis.Client, s *Store, f *Family, state string, lanes int) cost {
	next := func(r *rand.Rand, i int) []string { // fresh: a new tuple per event
		return []string{"fresh" + strconv.Itoa(lanes), "ad" + strconv.Itoa(i)}
	}
	if state == "steady" {
		next = func(r *rand.Rand, _ int) []string {
			return []string{"ch", "ad" + strconv.Itoa(r.IntN(benchTuples))}
		}
	}
	w := s.NewWriter(WriterOptions{Lanes: lanes})
	before, start := serverCost(b, rdb), time.Now()
	sent := runWriter(b, w, f, b.N, next)
	d := serverCost(b, rdb).sub(before)
	d.secs = time.Since(start).Seconds()
	d.calls = int64(sent.Calls) // the script calls confirmed; commandstats counts the sends
	d.pairs, d.keys = float64(sent.Keys)/2, float64(sent.Keys)
	return d
}

// runWriter adds n events, the i-th on the tuple next gives, on one goroutine while this one
// flushes whatever has gathered, as a service uses the writer, and returns what was written.
func runWriter(b *testing.B, w *Writer, f *Family, n int, next func(*rand.Rand, int) []string) FlushResult {
	var sent FlushResult
	added := make(chan struct{})
	go func() {
		defer close(added)
		r := rand.New(rand.NewPCG(7, 8))
		for i := range n {
			if err := w.Add(f, next(r, i), 1, time.Time{}); err != nil {
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
	return sent
}

// prefill writes one event on each of n tuples, so their keys exist with their TTLs.
func prefill(b *testing.B, s *Store, f *Family, n int) {
	w := s.NewWriter(WriterOptions{})
	for i := range n {
		if err := w.Add(f, []string{"ch", "ad" + strconv.Itoa(i)}, 1, time.Time{}); err != nil {
			b.Fatal(err)
		}
		if i%100_000 == 0 {
			if _, err := w.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := w.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

func flushAll(b *testing.B, rdb *redis.Client) {
	b.Helper()
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// cost is what the server spent on a case's scripts: calls and usec of EVALSHA and EVAL from
// INFO commandstats, the main thread's CPU seconds from INFO cpu, and, filled by the case, the
// pairs and keys written and the case's wall-clock seconds.
type cost struct {
	calls       int64
	usec, cpu   float64
	pairs, keys float64
	secs        float64
}

func (c cost) sub(o cost) cost {
	return cost{calls: c.calls - o.calls, usec: c.usec - o.usec, cpu: c.cpu - o.cpu}
}

func (c cost) perPair() float64 { return c.usec / c.pairs }

func (c cost) String() string {
	return fmt.Sprintf("%.2f µs/pair (cpu %.2f), %.1f µs/call, %.1f keys/call, Redis busy %.0f%%",
		c.perPair(), c.cpu*1e6/c.pairs, c.usec/float64(c.calls), c.keys/float64(c.calls), 100*c.cpu/c.secs)
}

func serverCost(b *testing.B, rdb *redis.Client) cost {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var c cost
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			c.calls, c.usec = addStat(c.calls, c.usec, rest)
		} else if rest, ok := strings.CutPrefix(line, "cmdstat_eval:"); ok {
			c.calls, c.usec = addStat(c.calls, c.usec, rest)
		}
		for _, f := range []string{"used_cpu_user_main_thread:", "used_cpu_sys_main_thread:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				x, _ := strconv.ParseFloat(v, 64)
				c.cpu += x
			}
		}
	}
	return c
}

// addStat adds a commandstats line's calls and usec ("calls=3,usec=12,...").
func addStat(calls int64, usec float64, stat string) (int64, float64) {
	for _, kv := range strings.Split(stat, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "calls":
			n, _ := strconv.ParseInt(v, 10, 64)
			calls += n
		case "usec":
			n, _ := strconv.ParseFloat(v, 64)
			usec += n
		}
	}
	return calls, usec
}
