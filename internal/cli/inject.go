package cli

import (
	"context"
	"flag"
	"fmt"
	"hourglass/internal/config"
	"hourglass/internal/target"
	"hourglass/internal/traffic"
	"hourglass/store"
	"io"
	"math"
	"time"
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

func cmdInject(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := commandFlags("inject", injectUsage, stdout)
	family := fs.String("family", "", "counter family to write (default: the first in the config)")
	var opt traffic.InjectOptions
	fs.Int64Var(&opt.Events, "events", 0, "number of events to write, at least 1 (default 100000 when --duration is not given)")
	fs.DurationVar(&opt.Duration, "duration", 0, "write for this long, e.g. 30s")
	fs.Float64Var(&opt.Rate, "rate", 0, fmt.Sprintf("events per second, at most %d; 0 writes as fast as Redis takes them", int64(traffic.MaxRate)))
	fs.IntVar(&opt.Dims, "dims", 1000, fmt.Sprintf("distinct dims tuples, drawn Zipf-like (1 to %d)", traffic.MaxDims))
	profile := fs.String("profile", "", "run a [[profile]] from the config, or the built-in demo, for --duration (default 10s)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := checkInjectFlags(opt, given, *profile != ""); err != nil {
		return err
	}
	if *profile != "" {
		return injectProfile(ctx, common, *profile, opt, stdout, stderr)
	}
	if opt.Events == 0 && opt.Duration == 0 {
		opt.Events = 100000
	}
	var f *store.Family
	_, t, err := openInjectTarget(ctx, common, stderr, func(cfg *config.Config) (err error) {
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

// checkInjectFlags refuses numbers inject cannot honour, before anything connects: NaN, infinite,
// negative and absurd values, an explicit --events 0, and with --profile the flags that do not
// apply to it.
func checkInjectFlags(opt traffic.InjectOptions, given map[string]bool, profile bool) error {
	switch {
	case opt.Duration < 0:
		return config.Usagef("inject: --duration must not be negative, got %v", opt.Duration)
	case profile && (given["family"] || given["events"] || given["rate"] || given["dims"]):
		return config.Usagef("inject: --profile sets its own structures and rates; --family, --events, --rate and --dims do not apply")
	case profile:
		return nil
	case opt.Events < 0 || given["events"] && opt.Events == 0:
		return config.Usagef("inject: --events must be at least 1, got %d (leave it out for 100000, or give --duration alone)", opt.Events)
	case math.IsNaN(opt.Rate) || math.IsInf(opt.Rate, 0) || opt.Rate < 0:
		return config.Usagef("inject: --rate must be finite and not negative, got %v", opt.Rate)
	case opt.Rate > traffic.MaxRate:
		return config.Usagef("inject: --rate must be at most %d events a second (0 writes as fast as Redis takes them), got %g", int64(traffic.MaxRate), opt.Rate)
	case opt.Dims < 1 || opt.Dims > traffic.MaxDims:
		return config.Usagef("inject: --dims must be from 1 to %d, got %d", traffic.MaxDims, opt.Dims)
	}
	return nil
}

// injectProfile runs a profile for the duration.
func injectProfile(ctx context.Context, common *commonFlags, name string, opt traffic.InjectOptions, stdout, stderr io.Writer) error {
	if opt.Duration == 0 {
		opt.Duration = 10 * time.Second
	}
	var p *config.Profile
	cfg, t, err := openInjectTarget(ctx, common, stderr, func(cfg *config.Config) (err error) {
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

// openInjectTarget loads the config, lets pick find what inject writes (a family, a profile)
// before anything connects, and opens the target: a real Redis only with writes allowed, and the
// embedded one with a word that its data goes when inject ends.
func openInjectTarget(ctx context.Context, common *commonFlags, stderr io.Writer, pick func(*config.Config) error) (*config.Config, *target.Target, error) {
	cfg, t, err := common.open(ctx, stderr, func(cfg *config.Config) error {
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
