package cli

import (
	"context"
	"encoding/json"
	"hourglass/internal/bench"
	"hourglass/internal/config"
	"hourglass/store"
	"io"
	"time"
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
  - discover: the same keys swept with a config that claims them and with none (every key then
    grouped by name and a few of each group sampled), the time ratio discover_vs_sweep, the
    keys/s kept under a budget, and the heap per group at 10x the keys and 10x the groups;
  - the console's own load: Redis' CPU while a console polls it at the default refresh.
Then it prints a table with the ratios, or with --json one object.

Usage:
  hourglass bench [--addr ADDR --allow-writes] [--events N] [--keys N] [--json]

Flags:
`

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := commandFlags("bench", benchUsage, stdout)
	opt := bench.Options{Log: stderr}
	numberVar(fs, &opt.Events, "events", 1_000_000, 1000, 100_000_000, "events per writer case, `N` from 1,000 to 100,000,000")
	numberVar(fs, &opt.Keys, "keys", 1_000_000, 1000, 10_000_000, "keys the sweep measures, `N` from 1,000 to 10,000,000")
	asJSON := fs.Bool("json", false, "print one JSON object")
	numberVar(fs, &opt.LoadFor, "load-for", 10*time.Second, time.Second, time.Hour,
		"how long to measure the console's load on Redis, a `duration` from 1s to 1h")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(common.addrs) > 0 {
		if len(common.addrs) > 1 {
			return config.Usagef("bench measures one server; give one standalone address")
		}
		if !common.allowWrites {
			return config.Usagef("bench writes test keys: give --allow-writes to use %s", store.RedactAddrs(common.addrs))
		}
		cfg, err := common.load(stderr) // the [redis] user, password and TLS settings apply
		if err != nil {
			return err
		}
		if opt.Target, err = cfg.Redis.Target(); err != nil {
			return err
		}
	}
	if err := parsed(ctx, common.fs, nil); err != nil {
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
