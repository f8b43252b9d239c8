package cli

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"time"

	"github.com/hourglass-dev/hourglass/internal/bench"
	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/console"
	"github.com/hourglass-dev/hourglass/store"
)

const benchUsage = `hourglass bench: measure hourglass's writers and sweep against a Redis, side by side with
redis-benchmark and a raw SCAN in the same run, in wall-clock rates and in Redis' own time.

With no --addr it starts a redis-server of its own (from PATH) on a free loopback port, with
persistence off, and stops it at the end. With --addr it uses that Redis (one standalone server;
its [redis] user, password and TLS settings apply) and writes to it: it needs --allow-writes, it
writes a few hundred thousand keys (a few million with --full) under "bench:" and "{bench:...}"
and deletes them again (its own keys only), and it loads the server to its limit while it runs.
Point it at a test server.

Redis' own time is taken from INFO commandstats before and after each case, for the commands the
case sent; its longest call from LATENCY HISTOGRAM, and for the sweep from SLOWLOG (on its own
server it logs every call of one more sweep, then puts the settings back; on a given server it
reads SLOWLOG only if the server already logs).

It measures, one after another:
  - the counter batch writer: events/s, key pairs/s, script calls/s and server µs a pair, with
    dims drawn uniformly from a million, as redis-benchmark -r 1000000 draws its keys; at
    redis-benchmark's shape (pipelines of 16 calls) on one connection and on four, with 1 and 32
    pairs a call; with its defaults; over 10,000 Zipf-drawn dims; and with 32 pairs a call on
    keys that are all there with their TTL ("steady"), beside the fresh keys of the others;
  - on the steady keys, the floors the writer is held to: a script that only INCRBYs 32 pairs a
    call, and one that also keeps each key's expiry (PEXPIREAT NX), on one connection and on four;
    the steady cases and their floors run in 5 rounds in turn, the least round's time counting;
  - go-redis alone sending redis-benchmark's calls on one connection and on four;
  - redis-benchmark calling the same script with one pair a call at the same depth (-c 1 and
    -c 4, -P 16), on fresh keys and on keys all there (skipped with a note when redis-benchmark
    is not installed);
  - the sliding limiter and the delay queue (enqueue, claim and acknowledge);
  - the Bloom filter's adds and checks (32 elements a call), beside raw SETBIT and GETBIT
    scripts of the same bit positions;
  - a sweep of --keys keys (TTL and value of each, its COUNT adapting to [scan] max_call), a raw
    SCAN and a read floor (SCAN, then the page's PTTLs and MGETs) at the sweep's mean COUNT, in
    turn, 3 passes each (5 with --full), with the min, median and max of each and of their
    ratios, each one's server time by command, and the longest call of the sweep and raw SCAN;
  - the share of the server's time a console and serve take at the default settings, on the
    sweep's keys;
  - discover: the same keys swept with a config that claims them and with none, the keys/s kept
    under a budget, and the heap per group at 10x the keys and 10x the groups.
Then it prints tables with the ratios and the goals, or with --json one object. While it runs,
one line on stderr says which step of how many it is on and the time so far.

By default it finishes in under 50 seconds on a 2-core machine; --full is the long run (1,000,000
events a writer case, 1,000,000 keys, 10s of console and of serve), a few minutes. No run at
scale is part of the default.

--scale runs instead the proof at scale, on servers of its own only (no --addr): 10,000,000 keys
(--scale-keys) on one redis-server, then 6,000,000 (--scale-cluster-keys, 0 skips it) on a
3-master cluster, each measured for a console's first figures and its Redis CPU at the defaults
(30s) and for the estimates of a sweep under way at 1%, 5% and 20% coverage against the exact
totals written, over 50 trial families, then for the console's live rate and this hour's total
while 5,000 counter events a second are written into pv's current-hour keys and 100 into each
trial family's (40s after 10s). It needs about 2 GB of memory and a few minutes. The console
runs at the shipped [scan] settings, or at those of --config when one is given (to see what
another max_redis_time buys).

Usage:
  hourglass bench [--addr ADDR --allow-writes] [--full] [--events N] [--keys N] [--json]
  hourglass bench --scale [--scale-keys N] [--scale-cluster-keys N] [--json]

Flags:
`

func cmdBench(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("bench", benchUsage, shipped, stdout)
	opt := bench.Options{Log: stderr, Terminal: console.IsTerminal(stderr), Defaults: config.Builtin(shipped)}
	asJSON := benchFlags(fs, &opt)
	scale := scaleFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fullSizes(fs, &opt)
	if scale.on {
		return runScale(ctx, tf, scale, opt, *asJSON, stdout)
	}
	if len(tf.addrs) > 0 {
		if len(tf.addrs) > 1 {
			return config.Usagef("bench measures one server; give one standalone address")
		}
		if !tf.allowWrites {
			return config.Usagef("bench writes test keys: give --allow-writes to use %s", store.RedactAddrs(tf.addrs))
		}
		cfg, err := tf.load(stderr) // the [redis] user, password and TLS settings apply
		if err != nil {
			return err
		}
		if opt.Target, err = cfg.Redis.Target(); err != nil {
			return err
		}
	}
	if err := parsed(ctx, tf.fs, nil); err != nil {
		return err
	}
	rep, err := bench.Run(ctx, opt)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	bench.WriteTable(stdout, rep)
	return nil
}

// benchFlags adds bench's own flags, which set opt, and returns --json.
func benchFlags(fs *flag.FlagSet, opt *bench.Options) *bool {
	numberVar(fs, &opt.Events, "events", 50_000, 1000, 100_000_000,
		"events per writer case, `N` from 1,000 to 100,000,000 (1,000,000 with --full)")
	numberVar(fs, &opt.Keys, "keys", 200_000, 1000, 10_000_000, "keys the sweep measures, `N` from 1,000 to 10,000,000 (1,000,000 with --full)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	numberVar(fs, &opt.LoadFor, "load-for", 3*time.Second, time.Second, time.Hour,
		"how long to measure the console's and serve's load on Redis, each, a `duration` from 1s to 1h (10s with --full)")
	fs.BoolVar(&opt.Full, "full", false, "the long run: the larger sizes above, and 5 sweep passes")
	return asJSON
}

// fullSizes sets --full's sizes on opt where no flag gave its own.
func fullSizes(fs *flag.FlagSet, opt *bench.Options) {
	if !opt.Full {
		return
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["events"] {
		opt.Events = 1_000_000
	}
	if !given["keys"] {
		opt.Keys = 1_000_000
	}
	if !given["load-for"] {
		opt.LoadFor = 10 * time.Second
	}
	opt.Passes = 5
}
