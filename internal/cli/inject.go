package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/store"
)

const injectUsage = `hourglass inject: write counter test traffic through the batch writer.

Events are drawn over --dims distinct dims tuples, Zipf-like (a few hot, a long tail), each
adding 1 to its hour and day windows at the Redis server's time; the writer pre-aggregates them
and flushes pipelines of script calls. A real Redis needs --allow-writes.

--profile NAME mixes every kind instead: a [[profile]] of the config sets each structure's events
a second (counters, delay and list queues, limiters, uniques, bitmaps, locks), and the built-in
"demo" runs the embedded console's traffic. It prints one line per structure.

Usage:
  hourglass inject [--family NAME] [--events N | --duration D] [--rate R] [--dims K] [flags]
  hourglass inject --profile NAME [--duration D] [flags]

Flags:
`

func cmdInject(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("inject", injectUsage, shipped, stdout)
	family := fs.String("family", "", "counter family to write (default: the first in the config)")
	var opt traffic.InjectOptions
	numberVar(fs, &opt.Events, "events", 100000, 1, math.MaxInt64, "`N` events to write, at least 1 (no limit with --duration alone)")
	numberVar(fs, &opt.Duration, "duration", 0, 0, math.MaxInt64, "write for `D`, e.g. 30s (0: no time limit)")
	numberVar(fs, &opt.Rate, "rate", 0, 0, traffic.MaxRate, "`R` events per second, from 0 to 100,000,000; 0 writes as fast as Redis takes them")
	numberVar(fs, &opt.Dims, "dims", 1000, 1, traffic.MaxDims, "`K` distinct dims tuples, drawn Zipf-like, from 1 to 1,000,000")
	profile := fs.String("profile", "", "run a [[profile]] from the config, or the built-in demo, for --duration (default 10s)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := checkInjectFlags(given, *profile != ""); err != nil {
		return err
	}
	if *profile != "" {
		return injectProfile(ctx, tf, *profile, opt, stdout, stderr)
	}
	if opt.Duration > 0 && !given["events"] {
		opt.Events = 0 // the duration alone ends it
	}
	var f *store.Family
	_, t, err := openInjectTarget(ctx, tf, stderr, func(cfg *config.Config) (err error) {
		f, err = cfg.Counter(*family)
		return err
	})
	if err != nil {
		return err
	}
	defer t.Close()
	res := traffic.Inject(ctx, t.Store, f, opt)
	fmt.Fprintln(stdout, res.Summary(f.Name()))
	if err := res.Problem(); err != nil {
		return fmt.Errorf("inject: %w", err)
	}
	return nil
}

// checkInjectFlags refuses, with --profile, the flags that do not apply to it. Each number was
// held to its range as it was parsed (numberVar): NaN, infinities, negatives, an explicit
// --events 0 and absurd sizes never get this far.
func checkInjectFlags(given map[string]bool, profile bool) error {
	if profile && (given["family"] || given["events"] || given["rate"] || given["dims"]) {
		return config.Usagef("inject: --profile sets its own structures and rates; --family, --events, --rate and --dims do not apply")
	}
	return nil
}

// injectProfile runs a profile for the duration.
func injectProfile(ctx context.Context, tf *targetFlags, name string, opt traffic.InjectOptions, stdout, stderr io.Writer) error {
	if opt.Duration == 0 {
		opt.Duration = 10 * time.Second
	}
	var p *config.Profile
	cfg, t, err := openInjectTarget(ctx, tf, stderr, func(cfg *config.Config) (err error) {
		p, err = cfg.ProfileNamed(name)
		return err
	})
	if err != nil {
		return err
	}
	defer t.Close()
	if p == nil {
		return traffic.RunDemoProfile(ctx, t.Store, cfg, 300, opt.Duration, t.Embedded != nil, stdout)
	}
	return traffic.RunProfile(ctx, t.Store, cfg, *p, opt.Duration, t.Embedded != nil, stdout)
}

// openInjectTarget loads the config and lets pick find what inject writes (a family, a profile)
// before anything connects. Then it opens the target: a real Redis only with writes allowed. The
// embedded one comes with a word that its data goes when inject ends.
func openInjectTarget(ctx context.Context, tf *targetFlags, stderr io.Writer, pick func(*config.Config) error) (*config.Config, *target.Target, error) {
	cfg, t, err := tf.open(ctx, stderr, func(cfg *config.Config) error {
		if err := pick(cfg); err != nil {
			return err
		}
		return cfg.RequireWrites("inject")
	})
	if err != nil {
		return nil, nil, err
	}
	if t.Embedded != nil {
		fmt.Fprintf(stderr, "hourglass: writing to an embedded Redis on %s; it stops when inject ends (give --addr to keep the data)\n", t.Embedded.Addr())
	}
	return cfg, t, nil
}
