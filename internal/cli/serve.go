package cli

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/infer"
	"github.com/hourglass-dev/hourglass/internal/metrics"
	"github.com/hourglass-dev/hourglass/internal/watch"
)

const serveUsage = `hourglass serve: keep sweeping within the [scan] budget and export the Snapshot to Prometheus.

Until the first sweep completes it sweeps without a pause, at the full budget; after that, every
[ui] refresh it sweeps on for half the interval (as the console does) and reads INFO. When a sweep
completes, its Snapshot replaces the last. GET /metrics returns the latest as Prometheus text:
counter totals, rates and keys per family and granularity, keys by TTL state and by value,
reconciliation, queue tasks by state and lag, limiter keys by state, hits and decisions, uniques,
locks, and the last complete sweep with its age. A series whose keys are gone is exported at 0 for
one sweep, then dropped (docs/commands.md). It only reads, so a read-only ACL user is enough.

Usage:
  hourglass serve [--listen ADDR] [flags]

Flags:
`

func cmdServe(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("serve", serveUsage, shipped, stdout)
	listen := fs.String("listen", "127.0.0.1:9121", "address to serve /metrics on")
	cfg, t, err := tf.parseOpen(ctx, args, stderr, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	opt := cfg.SweepOptions(true)
	opt.Now, opt.Target, opt.Mode = t.Store.Now, t.Label, t.Mode
	if cfg.Inferred {
		opt.Infer = infer.New(cfg, t.Mode == "cluster")
		fmt.Fprintf(stderr, "hourglass: no config file: the entries are inferred from %s's keys as the sweeps find them (hourglass discover writes them as a config)\n", t.Label)
	}
	w := watch.New(t.RDB, cfg.Counters, opt)
	if t.Replicas != nil {
		w.ReadFrom(t.Replicas)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return config.Usagef("serve: --listen %s: %v", *listen, err)
	}
	fmt.Fprintf(stdout, "hourglass: serving metrics of %s on http://%s/metrics (ctrl+c stops)\n", t.Label, l.Addr())
	label := t.Label
	if t.Name != "" {
		label = t.Name
	}
	return metrics.Serve(ctx, l, w, metrics.Options{Target: label, Refresh: cfg.UI.Refresh, Now: t.Store.Now, Log: stderr})
}
