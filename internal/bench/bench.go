package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/internal/config"
	"hourglass/store"
)

// Report is what bench measures; --json prints it as is.
type Report struct {
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
	// DiscoverVsSweep is the time a sweep of keys no entry claims takes over the time of the
	// same keys claimed by a config (Discover has both).
	DiscoverVsSweep       float64         `json:"discover_vs_sweep"`
	Discover              *DiscoverReport `json:"discover"`
	RedisBenchmarkSkipped string          `json:"redis_benchmark_skipped,omitempty"`
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

// Options say where bench measures and how much.
type Options struct {
	// Target is the Redis to measure, one standalone server that bench may write its own keys
	// to; with no address bench starts a redis-server of its own.
	Target  store.Target
	Events  int           // events per writer case
	Keys    int           // keys the sweep measures
	LoadFor time.Duration // how long to measure the console's load
	Log     io.Writer     // a line as each step starts
}

// Run measures everything bench measures, one case after another, and returns the figures.
func Run(ctx context.Context, opt Options) (*Report, error) {
	tg, own := opt.Target, len(opt.Target.Addrs) == 0
	if own {
		addr, stopServer, err := startServer()
		if err != nil {
			return nil, err
		}
		defer stopServer()
		fmt.Fprintf(opt.Log, "hourglass: bench on a redis-server of its own at %s\n", addr)
		tg = store.Target{Addrs: []string{addr}}
	}
	rdb := redis.NewClient(&redis.Options{Addr: tg.Addrs[0], Username: tg.Username, Password: tg.Password, DB: tg.DB,
		TLSConfig: tg.TLS, PoolSize: 64})
	defer rdb.Close()
	if store.IsClusterNode(ctx, rdb) {
		return nil, config.Usagef("bench measures one server, and %s is a cluster node", tg.Addrs[0])
	}
	b := &bencher{ctx: ctx, rdb: rdb, target: tg, own: own, log: opt.Log, loadFor: max(opt.LoadFor, time.Second)}
	rep, err := b.run(opt.Events, opt.Keys)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return rep, nil
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
// (store.BenchMatches), with SCAN and UNLINK a page at a time.
func (b *bencher) clean() error {
	if b.own {
		return b.rdb.FlushDB(b.ctx).Err()
	}
	for _, match := range store.BenchMatches() {
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

// run measures every case in turn: the writer, go-redis alone and redis-benchmark, the limiter,
// the delay queue, the console's load and the sweep.
func (b *bencher) run(events, keys int) (*Report, error) {
	rep := &Report{Events: events, SweepKeys: keys, RedisVersion: b.redisVersion(),
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())}
	st := store.New(b.rdb, store.Options{Location: time.UTC})
	if err := st.Init(b.ctx); err != nil {
		return nil, err
	}
	fam, err := store.NewFamily(store.FamilySpec{Name: "bench", Pattern: "{" + store.BenchKey("<ch>:<ad>") + "}:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 2 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 24 * time.Hour})
	if err != nil {
		return nil, err
	}
	if rep.Writer, err = b.writerCases(st, fam, events); err != nil {
		return nil, err
	}
	b.step("go-redis alone at redis-benchmark's shape")
	if rep.BareClient, err = b.bareClient(events, 1); err != nil {
		return nil, err
	}
	if rep.BareClient4, err = b.bareClient(events, 4); err != nil {
		return nil, err
	}
	b.step("redis-benchmark")
	b.compareRedisBenchmark(rep, events)
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
	if rep.Discover, err = b.discoverCase(keys); err != nil {
		return nil, err
	}
	if rep.Discover.Discover > 0 {
		rep.DiscoverVsSweep = rep.Discover.Sweep / rep.Discover.Discover
	}
	if !b.own {
		b.step("deleting the keys bench wrote")
		if err := b.clean(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// redisVersion is the server's redis_version from INFO, or "" when INFO fails.
func (b *bencher) redisVersion() string {
	version := ""
	if info, err := b.rdb.Info(b.ctx, "server").Result(); err == nil {
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
				version = v
			}
		}
	}
	return version
}

// writerCases measures the writer at each shape, from the same empty keyspace every time; the
// order is the one compareRedisBenchmark and the Zipf ratio read the cases in.
func (b *bencher) writerCases(st *store.Store, fam *store.Family, events int) ([]rate3, error) {
	var rates []rate3
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
		rates = append(rates, r)
	}
	return rates, nil
}

// compareRedisBenchmark runs redis-benchmark on one and four connections and sets the writer's
// and go-redis's ratios to it in rep; when it cannot run, rep says why instead.
func (b *bencher) compareRedisBenchmark(rep *Report, events int) {
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
}
