package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/scanner"
	"hourglass/store"
	"hourglass/tui"
)

const benchUsage = `hourglass bench: measure hourglass's writers and sweep against a Redis, side by side with
redis-benchmark and a raw SCAN in the same run.

With no --addr it starts a redis-server of its own (from PATH) on a free loopback port, with
persistence off, and stops it at the end. With --addr it uses that Redis (one standalone server;
its [redis] user, password and TLS settings apply) and writes to it: it needs --allow-writes, it
writes about a million keys under "bench:" and "{bench:...}" and deletes them again (its own keys
only), and it loads the server to its limit for a minute or two. Point it at a test server.

It measures, one after another:
  - the counter batch writer: events/s, key pairs/s and script calls/s, with dims drawn uniformly
    from a million, as redis-benchmark -r 1000000 draws its keys (events that meet a pending pair
    fold into it, so key pairs/s is the figure to compare); at redis-benchmark's shape (pipelines
    of 16 calls) on one connection and on four, with 1 and 32 pairs a call; with its defaults; and
    over 10,000 Zipf-drawn dims, where pre-aggregation folds most events;
  - go-redis alone sending redis-benchmark's calls on one connection and on four: the Go
    client's ceiling;
  - redis-benchmark calling the same script with one pair a call at the same depth (-c 1 -P 16
    and -c 4 -P 16; skipped with a note when redis-benchmark is not installed);
  - the sliding limiter and the delay queue (enqueue, claim and acknowledge);
  - a sweep of --keys keys (TTL and value of each) next to a raw SCAN at the same COUNT;
  - the console's own load: Redis' CPU while a console polls it at the default refresh.
Then it prints a table with the ratios, or with --json one object.

Usage:
  hourglass bench [--addr ADDR --allow-writes] [--events N] [--keys N] [--json]

Flags:
`

// benchReport is what bench measures; --json prints it as is.
type benchReport struct {
	Machine      string  `json:"machine"`
	RedisVersion string  `json:"redis_version"`
	Events       int     `json:"events"`
	Writer       []rate3 `json:"writer"`
	// RedisBenchmark is redis-benchmark's EVALSHA of the counter script, one pair a call, -c 1
	// -P 16, and RedisBenchmark4 the same on four connections (-c 4); nil when redis-benchmark is
	// not installed.
	RedisBenchmark  *float64 `json:"redis_benchmark_pairs_per_sec"`
	RedisBenchmark4 *float64 `json:"redis_benchmark_c4_pairs_per_sec"`
	// BareClient is go-redis alone sending redis-benchmark's calls at its shape (one connection,
	// pipelines of 16, sequence 0): what any Go client reaches before the writer does anything;
	// BareClient4 the same on four connections.
	BareClient  float64 `json:"bare_client_pairs_per_sec"`
	BareClient4 float64 `json:"bare_client_c4_pairs_per_sec"`
	Limiter     float64 `json:"limiter_hits_per_sec"`
	Enqueue     float64 `json:"delay_queue_enqueued_per_sec"`
	ClaimAck    float64 `json:"delay_queue_claimed_acked_per_sec"`
	SweepKeys   int     `json:"sweep_keys"`
	Sweep       float64 `json:"sweep_keys_per_sec"`
	RawScan     float64 `json:"raw_scan_keys_per_sec"`
	// ConsoleCPU is the console's own load, in percent of one core: Redis' CPU in seconds with a
	// poll less IdleCPU, its CPU in the seconds between without one (its cron, and freeing the
	// memory of bench's earlier keys).
	ConsoleCPU float64 `json:"console_redis_cpu_percent"`
	IdleCPU    float64 `json:"idle_redis_cpu_percent"`
	// The ratios the goals are stated in: key pairs/s at the same pipeline depth (16) and
	// connection count, 1 or 4.
	WriterVsRedisBenchmark      *float64 `json:"writer_vs_redis_benchmark"`         // 32 pairs a call, 1 connection
	SinglePairVsRedisBenchmark  *float64 `json:"single_pair_vs_redis_benchmark"`    // 1 pair a call, 1 connection
	WriterVsRedisBenchmark4     *float64 `json:"writer_vs_redis_benchmark_c4"`      // 32 pairs a call, 4 connections
	SinglePairVsRedisBenchmark4 *float64 `json:"single_pair_vs_redis_benchmark_c4"` // 1 pair a call, 4 connections
	BareClientVsRedisBenchmark  *float64 `json:"bare_client_vs_redis_benchmark"`    // go-redis alone, 1 connection
	BareClientVsRedisBenchmark4 *float64 `json:"bare_client_vs_redis_benchmark_c4"` // go-redis alone, 4 connections
	ZipfEventsPerScript         float64  `json:"zipf_events_per_script"`            // pre-aggregation
	SweepVsRawScan              float64  `json:"sweep_vs_raw_scan"`                 // TTL and value of every key
	RedisBenchmarkSkipped       string   `json:"redis_benchmark_skipped,omitempty"`
}

// benchKeyspace is how many dims tuples the writer cases draw from, and redis-benchmark's -r.
const benchKeyspace = 1_000_000

// rate3 is one writer case: events, key pairs and script calls a second.
type rate3 struct {
	Case          string  `json:"case"`
	EventsPerSec  float64 `json:"events_per_sec"`
	PairsPerSec   float64 `json:"pairs_per_sec"`
	ScriptsPerSec float64 `json:"scripts_per_sec"`
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchUsage, stdout)
	var common commonFlags
	common.register(fs)
	events := fs.Int("events", 1_000_000, "events per writer case")
	keys := fs.Int("keys", 1_000_000, "keys the sweep measures")
	asJSON := fs.Bool("json", false, "print one JSON object")
	loadFor := fs.Duration("load-for", 10*time.Second, "how long to measure the console's load on Redis")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *events < 1000 || *keys < 1000 {
		return usagef("bench: --events and --keys must be at least 1000")
	}
	var tg store.Target
	own := len(common.addrs) == 0
	if !own {
		if len(common.addrs) > 1 {
			return usagef("bench measures one server; give one standalone address")
		}
		if !common.allowWrites {
			return usagef("bench writes test keys: give --allow-writes to use %s", redactAddrs(common.addrs))
		}
		cfg, err := common.load() // the [redis] user, password and TLS settings apply
		if err != nil {
			return err
		}
		if tg, err = cfg.Redis.target(); err != nil {
			return err
		}
	} else {
		addr, stopServer, err := startBenchRedis()
		if err != nil {
			return err
		}
		defer stopServer()
		fmt.Fprintf(stderr, "hourglass: bench on a redis-server of its own at %s\n", addr)
		tg = store.Target{Addrs: []string{addr}}
	}
	rdb := redis.NewClient(&redis.Options{Addr: tg.Addrs[0], Username: tg.Username, Password: tg.Password, DB: tg.DB,
		TLSConfig: tg.TLS, PoolSize: 64})
	defer rdb.Close()
	if clusterNode(ctx, rdb) {
		return usagef("bench measures one server, and %s is a cluster node", tg.Addrs[0])
	}
	b := &bencher{ctx: ctx, rdb: rdb, target: tg, own: own, log: stderr, loadFor: max(*loadFor, time.Second)}
	rep, err := b.run(*events, *keys)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	writeBenchTable(stdout, rep)
	return nil
}

// startBenchRedis runs redis-server on a free loopback port and returns its address and a stop.
func startBenchRedis() (string, func(), error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("bench: no redis-server on PATH (Debian: apt-get install redis-server), and no --addr given")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("bench: start redis-server: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		// The port was free a moment ago; make sure the server answering is the one started.
		if info, err := c.Info(context.Background(), "server").Result(); err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(cmd.Process.Pid)+"\r\n") {
				return addr, stop, nil
			}
			stop()
			return "", nil, fmt.Errorf("bench: another server took port %s before redis-server did; run bench again", port)
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("bench: redis-server did not answer: %s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type bencher struct {
	ctx     context.Context
	rdb     *redis.Client
	target  store.Target
	own     bool // the server is bench's own: it may empty it
	log     io.Writer
	loadFor time.Duration
	dims    [][]string // the writer cases' dims tuples, made once
}

// clean empties the bench's own server; on a given Redis it deletes only the keys bench writes
// ("bench:*" and "{bench:*"), with SCAN and UNLINK a page at a time.
func (b *bencher) clean() error {
	if b.own {
		return b.rdb.FlushDB(b.ctx).Err()
	}
	for _, match := range []string{"bench:*", "{bench:*"} {
		var cursor uint64
		for {
			keys, next, err := b.rdb.Scan(b.ctx, cursor, match, 1000).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				if err := b.rdb.Unlink(b.ctx, keys...).Err(); err != nil {
					return err
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return nil
}

func (b *bencher) step(format string, args ...any) {
	fmt.Fprintf(b.log, "hourglass: bench: "+format+"\n", args...)
}

func (b *bencher) run(events, keys int) (*benchReport, error) {
	rep := &benchReport{Events: events, SweepKeys: keys,
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())}
	if info, err := b.rdb.Info(b.ctx, "server").Result(); err == nil {
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
				rep.RedisVersion = v
			}
		}
	}
	st := store.New(b.rdb, store.Options{Location: time.UTC})
	if err := st.Init(b.ctx); err != nil {
		return nil, err
	}
	fam, err := store.NewFamily(store.FamilySpec{Name: "bench", Pattern: "{bench:<ch>:<ad>}:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 2 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 24 * time.Hour})
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name                string
		pairs, lanes, calls int
		zipf                bool
	}{
		{"1 connection, pipelines of 16, 1 pair a call", 1, 1, 16, false},
		{"1 connection, pipelines of 16, 32 pairs a call", 32, 1, 16, false},
		{"4 connections, pipelines of 16, 1 pair a call", 1, 4, 16, false},
		{"4 connections, pipelines of 16, 32 pairs a call", 32, 4, 16, false},
		{"defaults (4 lanes, pipelines of 256, 32 pairs)", 32, 0, 0, false},
		{"defaults, Zipf over 10,000 dims", 32, 0, 0, true},
	} {
		b.step("writer: %s", c.name)
		if err := b.clean(); err != nil { // every case starts from the same keyspace
			return nil, err
		}
		r, err := b.writer(st, fam, events, c.pairs, c.lanes, c.calls, c.zipf)
		if err != nil {
			return nil, err
		}
		r.Case = c.name
		rep.Writer = append(rep.Writer, r)
	}
	b.step("go-redis alone at redis-benchmark's shape")
	if rep.BareClient, err = b.bareClient(events, 1); err != nil {
		return nil, err
	}
	if rep.BareClient4, err = b.bareClient(events, 4); err != nil {
		return nil, err
	}
	b.step("redis-benchmark")
	ratio := func(a, b float64) *float64 { r := a / b; return &r }
	if rb, err := b.redisBenchmark(events, 1); err != nil {
		rep.RedisBenchmarkSkipped = err.Error()
	} else if rb4, err := b.redisBenchmark(events, 4); err != nil {
		rep.RedisBenchmarkSkipped = err.Error()
	} else {
		rep.RedisBenchmark, rep.RedisBenchmark4 = &rb, &rb4
		rep.SinglePairVsRedisBenchmark = ratio(rep.Writer[0].PairsPerSec, rb)
		rep.WriterVsRedisBenchmark = ratio(rep.Writer[1].PairsPerSec, rb)
		rep.SinglePairVsRedisBenchmark4 = ratio(rep.Writer[2].PairsPerSec, rb4)
		rep.WriterVsRedisBenchmark4 = ratio(rep.Writer[3].PairsPerSec, rb4)
		rep.BareClientVsRedisBenchmark = ratio(rep.BareClient, rb)
		rep.BareClientVsRedisBenchmark4 = ratio(rep.BareClient4, rb4)
	}
	if z := rep.Writer[5]; z.ScriptsPerSec > 0 {
		rep.ZipfEventsPerScript = z.EventsPerSec / z.ScriptsPerSec
	}
	b.step("limiter")
	if rep.Limiter, err = b.limiter(st, min(events/5, 200_000)); err != nil {
		return nil, err
	}
	b.step("delay queue")
	if rep.Enqueue, rep.ClaimAck, err = b.delayQueue(st, min(events/5, 200_000)); err != nil {
		return nil, err
	}
	b.step("the console's load on an idle Redis of 10,000 keys, %v", b.loadFor)
	if rep.ConsoleCPU, rep.IdleCPU, err = b.consoleLoad(st, fam); err != nil {
		return nil, err
	}
	b.step("sweep of %d keys and a raw SCAN", keys)
	if rep.Sweep, rep.RawScan, err = b.sweep(keys); err != nil {
		return nil, err
	}
	if rep.RawScan > 0 {
		rep.SweepVsRawScan = rep.Sweep / rep.RawScan
	}
	if !b.own {
		b.step("deleting the keys bench wrote")
		if err := b.clean(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// writer adds events on one goroutine while another flushes, as a service runs it.
func (b *bencher) writer(st *store.Store, f *store.Family, events, pairs, lanes, calls int, zipf bool) (rate3, error) {
	w := st.NewWriter(store.WriterOptions{KeysPerCall: 2 * pairs, Lanes: lanes, CallsPerPipeline: calls})
	// Dims are drawn the way redis-benchmark draws its keys (-r 1000000: uniformly from a
	// million), so both find the same share of keys already there; or Zipf-like from 10,000.
	tuples := b.tuples()
	dims := len(tuples)
	if zipf {
		dims = 10_000
	}
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.1, 1, uint64(dims-1))
	var sent store.FlushResult
	var addErr atomic.Value
	start := time.Now()
	added := make(chan struct{})
	go func() {
		defer close(added)
		for range events {
			idx := r.IntN(dims)
			if zipf {
				idx = int(z.Uint64())
			}
			if err := w.Add(f, tuples[idx], 1, time.Time{}); err != nil {
				addErr.Store(fmt.Sprint(err))
				return
			}
		}
	}()
	for done := false; !done || w.Pending() > 0; {
		select {
		case <-added:
			done = true
		default:
		}
		res, err := w.Flush(b.ctx)
		if err != nil {
			return rate3{}, err
		}
		sent.Events += res.Events
		sent.Keys += res.Keys
		sent.Calls += res.Calls
	}
	if e, _ := addErr.Load().(string); e != "" {
		return rate3{}, errors.New(e)
	}
	secs := time.Since(start).Seconds()
	return rate3{EventsPerSec: float64(sent.Events) / secs, PairsPerSec: float64(sent.Keys) / 2 / secs,
		ScriptsPerSec: float64(sent.Calls) / secs}, nil
}

// tuples returns the dims tuples the writer cases draw from, made once.
func (b *bencher) tuples() [][]string {
	if b.dims == nil {
		b.dims = make([][]string, benchKeyspace)
		for i := range b.dims {
			b.dims[i] = []string{"c" + strconv.Itoa(i%97), strconv.Itoa(i)}
		}
	}
	return b.dims
}

// bareClient sends the calls redis-benchmark sends (one pair a call, sequence 0, keys drawn from
// a million) through go-redis alone, in pipelines of 16 on each of conns connections at once.
func (b *bencher) bareClient(n, conns int) (float64, error) {
	st := store.New(b.rdb, store.Options{})
	if err := st.LoadScripts(b.ctx); err != nil {
		return 0, err
	}
	if err := b.clean(); err != nil {
		return 0, err
	}
	sha := store.CounterScriptHash()
	exp := time.Now().Add(3 * time.Hour).UnixMilli()
	const depth = 16
	each := n / conns / depth * depth
	errs := make([]error, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(9, uint64(c)))
			for i := 0; i < each; i += depth {
				pipe := b.rdb.Pipeline()
				for range depth {
					h, d := strconv.Itoa(r.IntN(benchKeyspace)), strconv.Itoa(r.IntN(benchKeyspace))
					pipe.EvalSha(b.ctx, sha, []string{"{bench:gr}:seq", "{bench:gr:" + h + "}:h", "{bench:gr:" + d + "}:d"}, 0, 0, 0, 1, exp, 1, exp)
				}
				if _, err := pipe.Exec(b.ctx); err != nil {
					errs[c] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(each*conns) / time.Since(start).Seconds(), nil
}

// redisBenchmark runs redis-benchmark -c clients -P 16 on the counter script, one pair a call.
func (b *bencher) redisBenchmark(n, clients int) (float64, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark is not installed (Debian: redis-tools)")
	}
	st := store.New(b.rdb, store.Options{})
	if err := st.LoadScripts(b.ctx); err != nil {
		return 0, err
	}
	if err := b.clean(); err != nil {
		return 0, err
	}
	if b.target.TLS != nil {
		return 0, fmt.Errorf("skipped over TLS: redis-benchmark would need its own TLS options")
	}
	exp := strconv.FormatInt(time.Now().Add(3*time.Hour).UnixMilli(), 10)
	host, port, err := net.SplitHostPort(b.target.Addrs[0])
	if err != nil {
		return 0, err
	}
	args := []string{"-h", host, "-p", port, "--dbnum", strconv.Itoa(b.target.DB), "-c", strconv.Itoa(clients), "-P", "16",
		"-n", strconv.Itoa(n), "-r", strconv.Itoa(benchKeyspace), "--csv"}
	if b.target.Username != "" {
		args = append(args, "--user", b.target.Username)
	}
	args = append(args, "EVALSHA", store.CounterScriptHash(), "3", "{bench:rb}:seq", "{bench:rb:__rand_int__}:h",
		"{bench:rb:__rand_int__}:d", "0", "0", "0", "1", exp, "1", exp)
	cmd := exec.CommandContext(b.ctx, bin, args...)
	if b.target.Password != "" { // by the environment, not the command line, where ps would show it
		cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+b.target.Password)
	}
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %v: %s", err, out)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark printed %q", out)
	}
	return strconv.ParseFloat(rows[1][1], 64)
}

// limiter hits the sliding limiter from 16 goroutines over 1,000 users.
func (b *bencher) limiter(st *store.Store, hits int) (float64, error) {
	l, err := st.NewLimiter(store.LimiterSpec{Name: "bench", Pattern: "bench:rl:<u>", Kind: store.Sliding, Window: time.Minute, Limit: 1 << 30})
	if err != nil {
		return 0, err
	}
	return b.parallel(hits, func(i int) error {
		_, err := l.Allow(b.ctx, strconv.Itoa(i%1000))
		return err
	})
}

// delayQueue enqueues tasks in batches of 100, then claims and acknowledges them 100 at a time,
// from 16 goroutines.
func (b *bencher) delayQueue(st *store.Store, tasks int) (float64, float64, error) {
	q := st.DelayQueue("bench:dq", store.Milliseconds)
	batches := tasks / 100
	enq, err := b.parallel(batches, func(i int) error {
		ts := make([]string, 100)
		for j := range ts {
			ts[j] = strconv.Itoa(i*100 + j)
		}
		return q.Enqueue(b.ctx, time.Time{}, ts...)
	})
	if err != nil {
		return 0, 0, err
	}
	claim, err := b.parallel(batches, func(int) error {
		c, err := q.Claim(b.ctx, 100, time.Minute)
		if err != nil {
			return err
		}
		_, err = q.Ack(b.ctx, c)
		return err
	})
	return enq * 100, claim * 100, err
}

// parallel runs op n times on 16 goroutines and returns ops a second.
func (b *bencher) parallel(n int, op func(i int) error) (float64, error) {
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), firstErr
}

// consoleLoad polls Redis as the console does at the default refresh for loadFor, and returns the
// share of one CPU Redis spent meanwhile.
func (b *bencher) consoleLoad(st *store.Store, f *store.Family) (console, idle float64, err error) {
	// An idle Redis: no traffic, and a keyspace the size of the demo's (10,000 counter keys) on
	// bench's own server; a given Redis keeps its own keys beside them.
	if err := b.clean(); err != nil {
		return 0, 0, err
	}
	wr := st.NewWriter(store.WriterOptions{})
	for i := range 5000 {
		if err := wr.Add(f, []string{"c" + strconv.Itoa(i%97), strconv.Itoa(i)}, 1, time.Time{}); err != nil {
			return 0, 0, err
		}
	}
	if _, err := wr.Flush(b.ctx); err != nil {
		return 0, 0, err
	}
	// Redis does work of its own meanwhile (its cron, and returning the memory of the keys
	// deleted above), so seconds with the console polling alternate with seconds without, and
	// the console's load is the difference: what Redis does anyway falls on both alike.
	w := scanner.NewWatcher(b.rdb, []*store.Family{f}, scanner.Options{KeysPerSecond: 20_000, Location: time.UTC},
		scanner.SnapshotOptions{Now: st.Now, Location: time.UTC})
	var with, without float64 // CPU seconds
	seconds := int(b.loadFor / time.Second)
	for i := range 2 * seconds {
		cpu0, err := redisCPU(b.ctx, b.rdb)
		if err != nil {
			return 0, 0, err
		}
		next := time.Now().Add(time.Second)
		if i%2 == 0 {
			ctx, cancel := context.WithTimeout(b.ctx, 6*time.Second)
			_, err := w.Poll(ctx, 500*time.Millisecond, f.Name())
			cancel()
			if err != nil {
				return 0, 0, err
			}
		}
		select {
		case <-b.ctx.Done():
			return 0, 0, b.ctx.Err()
		case <-time.After(time.Until(next)):
		}
		cpu1, err := redisCPU(b.ctx, b.rdb)
		if err != nil {
			return 0, 0, err
		}
		if i%2 == 0 {
			with += cpu1 - cpu0
		} else {
			without += cpu1 - cpu0
		}
	}
	with, without = 100*with/float64(seconds), 100*without/float64(seconds)
	return max(with-without, 0), without, nil
}

// sweep fills keys family keys and measures a sweep and a raw SCAN of the whole server.
func (b *bencher) sweep(n int) (float64, float64, error) {
	fam, err := store.NewFamily(store.FamilySpec{Name: "sweep", Pattern: "bench:sw:<a>:<b>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		return 0, 0, err
	}
	if err := b.clean(); err != nil {
		return 0, 0, err
	}
	hour := time.Now().UTC().Format("2006010215")
	for start := 0; start < n; start += 10_000 {
		pipe := b.rdb.Pipeline()
		for i := start; i < min(start+10_000, n); i++ {
			pipe.Set(b.ctx, fmt.Sprintf("bench:sw:a%d:b%d:%s", i%97, i, hour), i, 48*time.Hour)
		}
		if _, err := pipe.Exec(b.ctx); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	var cursor uint64
	var raw int
	for {
		page, next, err := b.rdb.Scan(b.ctx, cursor, "", 1000).Result()
		if err != nil {
			return 0, 0, err
		}
		raw += len(page)
		if cursor = next; cursor == 0 {
			break
		}
	}
	rawRate := float64(raw) / time.Since(start).Seconds()
	start = time.Now()
	var seen int
	s := scanner.New(b.rdb, []*store.Family{fam}, scanner.Options{Count: 1000, Location: time.UTC})
	if err := s.Run(b.ctx, func(p scanner.Page) { seen += p.Seen }); err != nil {
		return 0, 0, err
	}
	return float64(seen) / time.Since(start).Seconds(), rawRate, nil
}

// redisCPU is the CPU seconds the server has used, from INFO cpu.
func redisCPU(ctx context.Context, rdb *redis.Client) (float64, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
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
	return total, nil
}

func writeBenchTable(out io.Writer, r *benchReport) {
	fmt.Fprintf(out, "hourglass bench on %s, Redis %s\n\n", r.Machine, r.RedisVersion)
	tb := newTable("COUNTER WRITER", ">EVENTS/S", ">KEY PAIRS/S", ">SCRIPTS/S")
	for _, w := range r.Writer {
		tb.row(w.Case, tui.Commas(int64(w.EventsPerSec)), tui.Commas(int64(w.PairsPerSec)), tui.Commas(int64(w.ScriptsPerSec)))
	}
	tb.row("go-redis alone, 1 connection, pipelines of 16, 1 pair", "", tui.Commas(int64(r.BareClient)), tui.Commas(int64(r.BareClient)))
	tb.row("go-redis alone, 4 connections, pipelines of 16, 1 pair", "", tui.Commas(int64(r.BareClient4)), tui.Commas(int64(r.BareClient4)))
	if r.RedisBenchmark != nil {
		tb.row("redis-benchmark -c 1 -P 16, 1 pair a call", "", tui.Commas(int64(*r.RedisBenchmark)), tui.Commas(int64(*r.RedisBenchmark)))
		tb.row("redis-benchmark -c 4 -P 16, 1 pair a call", "", tui.Commas(int64(*r.RedisBenchmark4)), tui.Commas(int64(*r.RedisBenchmark4)))
	}
	tb.write(out, "")
	fmt.Fprintln(out)
	tb = newTable("OTHER", ">PER SECOND")
	tb.row("sliding limiter hits (16 clients)", tui.Commas(int64(r.Limiter)))
	tb.row("delay queue tasks enqueued", tui.Commas(int64(r.Enqueue)))
	tb.row("delay queue tasks claimed and acknowledged", tui.Commas(int64(r.ClaimAck)))
	tb.row(fmt.Sprintf("sweep of %s keys (TTL and value of each)", tui.Commas(int64(r.SweepKeys))), tui.Commas(int64(r.Sweep)))
	tb.row("raw SCAN of the same keys, COUNT 1000", tui.Commas(int64(r.RawScan)))
	tb.write(out, "")
	fmt.Fprintln(out)
	tb = newTable("RATIO", ">MEASURED", ">GOAL")
	if r.WriterVsRedisBenchmark != nil {
		times := func(v *float64) string { return fmt.Sprintf("%.2f×", *v) }
		tb.row("writer, 32 pairs a call ÷ redis-benchmark, 1 connection (key pairs/s)", times(r.WriterVsRedisBenchmark), "≥ 2×")
		tb.row("writer, 32 pairs a call ÷ redis-benchmark, 4 connections", times(r.WriterVsRedisBenchmark4), "≥ 2×")
		tb.row("writer, 1 pair a call ÷ redis-benchmark, 1 connection", times(r.SinglePairVsRedisBenchmark), "≥ 0.9×")
		tb.row("writer, 1 pair a call ÷ redis-benchmark, 4 connections", times(r.SinglePairVsRedisBenchmark4), "≥ 0.9×")
		tb.row("go-redis alone ÷ redis-benchmark, 1 connection (the client's ceiling)", times(r.BareClientVsRedisBenchmark), "")
		tb.row("go-redis alone ÷ redis-benchmark, 4 connections", times(r.BareClientVsRedisBenchmark4), "")
	} else {
		tb.row("writer ÷ redis-benchmark", "skipped: "+r.RedisBenchmarkSkipped, "")
	}
	tb.row("Zipf events ÷ script calls (pre-aggregation)", fmt.Sprintf("%.0f×", r.ZipfEventsPerScript), "≥ 10×")
	tb.row("sweep ÷ raw SCAN (keys/s)", fmt.Sprintf("%.2f×", r.SweepVsRawScan), "≥ 0.45×")
	tb.row("Redis CPU a console adds polling 10,000 idle keys, default refresh", fmt.Sprintf("%.2f%%", r.ConsoleCPU), "< 1%")
	tb.row("  (Redis CPU with nobody asking, not counted above)", fmt.Sprintf("%.2f%%", r.IdleCPU), "")
	tb.write(out, "")
}
