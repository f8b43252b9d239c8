package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// benchKeyspace is how many dims tuples the writer cases draw from, and redis-benchmark's -r.
const benchKeyspace = 1_000_000

// Options say where bench measures and how much.
type Options struct {
	// Target is the Redis to measure, one standalone server that bench may write its own keys
	// to; with no address bench starts a redis-server of its own.
	Target  store.Target
	Events  int           // events per writer case
	Keys    int           // keys the sweep measures
	LoadFor time.Duration // how long to measure the console's and serve's load, each
	Passes  int           // sweep passes and raw SCAN passes, taken in turn (3 when zero)
	Full    bool          // the long run (--full): recorded in the report
	// Defaults is the built-in config, whose [scan] count and keys_per_second and [ui] refresh
	// the console's and serve's cases run at.
	Defaults *config.Config
	// Log gets the progress line; Terminal says it is a terminal, where the line is rewritten
	// in place.
	Log      io.Writer
	Terminal bool
}

// Run measures everything bench measures, one case after another, and returns the figures.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Defaults == nil {
		return nil, errors.New("bench: no built-in config to take the console's defaults from")
	}
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
	client := func(pool int) *redis.Client {
		return redis.NewClient(&redis.Options{Addr: tg.Addrs[0], Username: tg.Username, Password: tg.Password, DB: tg.DB,
			TLSConfig: tg.TLS, PoolSize: pool})
	}
	rdb, stats := client(64), client(2)
	defer rdb.Close()
	defer stats.Close()
	if store.IsClusterNode(ctx, rdb) {
		return nil, config.Usagef("bench measures one server, and %s is a cluster node", tg.Addrs[0])
	}
	sent := newSentCommands()
	rdb.AddHook(sent)
	passes := opt.Passes
	if passes <= 0 {
		passes = 3
	}
	b := &bencher{ctx: ctx, rdb: rdb, target: tg, own: own, defaults: opt.Defaults, loadFor: max(opt.LoadFor, time.Second), passes: passes,
		meter: &meter{stats: stats, sent: sent}, server: map[string]*ServerTime{},
		prog: newProgress(opt.Log, opt.Terminal, steps(own, passes))}
	rep, err := b.run(opt.Events, opt.Keys)
	b.prog.end(err == nil)
	if err != nil && ctx.Err() != nil { // ctrl+c: whatever the step under way said of it
		return nil, fmt.Errorf("bench: stopped in step %d of %d: %w", b.prog.n, b.prog.total, ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	rep.Full = opt.Full
	return rep, nil
}

type bencher struct {
	ctx    context.Context
	rdb    *redis.Client // every case's commands go through it, and its hook counts them
	target store.Target
	own    bool // the server is bench's own: it may empty it
	// defaults is the built-in config, whose settings the console's and serve's cases use.
	defaults *config.Config
	loadFor  time.Duration
	passes   int
	dims     [][]string // the writer cases' dims tuples, made once
	meter    *meter
	server   map[string]*ServerTime // by case
	prog     *progress
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

// step starts the next step of the progress line.
func (b *bencher) step(format string, args ...any) {
	b.prog.next(fmt.Sprintf(format, args...))
}

// measure runs a case between two readings of the server's counters and files its server time
// under id, over units of unit. It returns the time (nil when the server's counters could not
// be read).
func (b *bencher) measure(id string, units float64, unit string, run func() error) (*ServerTime, error) {
	mk := b.meter.start(b.ctx)
	if err := run(); err != nil {
		return nil, err
	}
	st := b.meter.since(b.ctx, mk, units, unit, nil)
	b.server[id] = st
	return st, nil
}

// run measures every case in turn: the writer, go-redis alone and redis-benchmark, the limiter,
// the delay queue, the sweep beside raw SCAN, the console's and serve's load, and discover.
func (b *bencher) run(events, keys int) (*Report, error) {
	begun := time.Now()
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
	for _, stage := range []func() error{
		func() error { return b.writerCases(rep, st, fam, events) },
		func() error { return b.bareClients(rep, events) },
		func() error { b.compareRedisBenchmark(rep, events); return b.ctx.Err() },
		func() error { return b.structures(rep, st, events) },
		func() error { return b.sweepCase(rep, keys) },
		func() error { return b.loadCases(rep) },
		func() error { return b.discoverStage(rep, keys) },
	} {
		if err := stage(); err != nil {
			return nil, err
		}
	}
	if !b.own {
		b.step("deleting the keys bench wrote")
		if err := b.clean(); err != nil {
			return nil, err
		}
	}
	rep.ServerTime, rep.ServerTimeUnknown = b.server, b.meter.why
	rep.settle()
	rep.Seconds = time.Since(begun).Seconds()
	return rep, nil
}

// discoverStage measures discover, and its time beside a configured sweep.
func (b *bencher) discoverStage(rep *Report, keys int) error {
	var err error
	if rep.Discover, err = b.discoverCase(keys); err != nil {
		return err
	}
	if rep.Discover.Discover > 0 {
		rep.DiscoverVsSweep = rep.Discover.Sweep / rep.Discover.Discover
	}
	return nil
}

// redisVersion is the server's redis_version from INFO, or "" when INFO fails.
func (b *bencher) redisVersion() string {
	version := ""
	if info, err := b.meter.stats.Info(b.ctx, "server").Result(); err == nil {
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
				version = v
			}
		}
	}
	return version
}
