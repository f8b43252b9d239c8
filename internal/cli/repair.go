package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/report"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

const repairUsage = `hourglass repair: give family keys that have no TTL their window-aligned expiry.

One SCAN sweep at the [scan] budget, like snapshot's. Each key of a counter family that has no
TTL (a leak: written by INCRBY with the EXPIRE forgotten, or by INCR after its TTL ran out) gets
EXPIREAT its window's end plus the family's retention, the instant a sound writer gives it. A key
already past that instant is left alone, unless --delete-expired deletes it. Only what a counter
writer leaves is touched, a string holding a 64-bit integer: text and other types that fit a
family's pattern are left alone. Each key is checked again in the script that writes it, so one
rewritten, given a TTL or deleted since the sweep read it is left as it now is. Every action is
printed; then the keys left, by reason, with their counts and a few examples; then a summary.

A real Redis needs --allow-writes, except with --dry-run, which only lists what would be done.

Usage:
  hourglass repair [--family NAME] [--dry-run] [--delete-expired] [flags]

Flags:
`

func cmdRepair(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("repair", repairUsage, shipped, stdout)
	family := fs.String("family", "", "repair only this counter family (default: all)")
	dryRun := fs.Bool("dry-run", false, "list what would be done; write nothing")
	deleteExpired := fs.Bool("delete-expired", false, "delete keys with no TTL whose window is already past its retention")
	tf.withBudget(fs)
	tf.writes = func(*config.Config) bool { return !*dryRun }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var only *store.Family
	cfg, t, err := tf.open(ctx, stderr, func(cfg *config.Config) (err error) {
		if *family != "" {
			if only, err = cfg.Counter(*family); err != nil {
				return err
			}
		}
		if len(cfg.Counters) == 0 {
			return config.Usagef("the config declares no [[counter]] family")
		}
		if !*dryRun {
			return cfg.RequireWrites("repair")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer t.Close()
	if t.Embedded != nil {
		if _, err := traffic.WriteDemoHistory(ctx, t.Store, cfg.Counters, traffic.DemoRate); err != nil {
			return fmt.Errorf("repair: writing demo data: %w", err)
		}
		fmt.Fprintf(stderr, "hourglass: embedded Redis on %s with demo data, some of it leaking; give --addr to repair your Redis\n", t.Embedded.Addr())
	}

	log := report.NewRepairLog(stdout, *dryRun, cfg.Timezone, t.Store.Now)
	sweep := cfg.SweepOptions(false)
	sweep.Now = t.Store.Now
	sweep.Retry = retrying(stderr, "repair", t.Label) // reads wait out faults that pass; a failed write ends it
	n, err := scanner.Repair(ctx, t.RDB, cfg.Counters, sweep,
		scanner.RepairOptions{Only: only, DryRun: *dryRun, DeleteExpired: *deleteExpired}, log.Action)
	log.Finish(n)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("repair: interrupted; the summary above counts what was done")
	case errors.Is(err, scanner.ErrRestarted) || errors.Is(err, scanner.ErrMastersChanged):
		return fmt.Errorf("repair: %s: %v, so the sweep could not reach every key; the summary above counts what was done: run repair again", t.Label, err)
	case strings.HasPrefix(err.Error(), "repair: "):
		return err // a write Redis refused
	default:
		return fmt.Errorf("repair: sweeping %s: %w", t.Label, err)
	}
}
