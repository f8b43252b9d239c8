package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"hourglass/scanner"
	"hourglass/store"
	"hourglass/tui"
)

const repairUsage = `hourglass repair: give family keys that have no TTL their window-aligned expiry.

One SCAN sweep at the [scan] budget, like snapshot's. Each key of a counter family that has no
TTL (a leak: written by INCRBY with the EXPIRE forgotten, or by INCR after its TTL ran out) gets
EXPIREAT its window's end plus the family's retention, the instant a sound writer gives it. A key
already past that instant is left alone and listed, unless --delete-expired deletes it. Keys that
are not strings are listed and left alone. Every action is printed, then a summary.

A real Redis needs --allow-writes, except with --dry-run, which only lists what would be done.

Usage:
  hourglass repair [--family NAME] [--dry-run] [--delete-expired] [flags]

Flags:
`

func cmdRepair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("repair", repairUsage, stdout)
	var common commonFlags
	common.register(fs)
	family := fs.String("family", "", "repair only this counter family (default: all)")
	dryRun := fs.Bool("dry-run", false, "list what would be done; write nothing")
	deleteExpired := fs.Bool("delete-expired", false, "delete keys with no TTL whose window is already past its retention")
	kps := fs.Int("keys-per-second", -1, "sweep budget in keys per second, 0 for none (default: [scan] keys_per_second)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *kps < -1 {
		return usagef("repair: --keys-per-second must not be negative")
	}
	cfg, err := common.load()
	if err != nil {
		return err
	}
	if *kps >= 0 {
		cfg.Scan.KeysPerSecond = *kps
	}
	var only *store.Family
	if *family != "" {
		if only, err = pickFamily(cfg, *family); err != nil {
			return err
		}
	}
	if len(cfg.Counters) == 0 {
		return usagef("the config declares no [[counter]] family")
	}
	if !*dryRun {
		if err := requireWrites(cfg, "repair"); err != nil {
			return err
		}
	}
	t, err := openTarget(ctx, cfg)
	if err != nil {
		return err
	}
	defer t.Close()
	if t.emb != nil {
		if _, err := writeDemoHistory(ctx, t.store, cfg.Counters); err != nil {
			return fmt.Errorf("repair: writing demo data: %w", err)
		}
		fmt.Fprintf(stderr, "hourglass: embedded Redis on %s with demo data, some of it leaking; give --addr to repair your Redis\n", t.emb.Addr())
	}

	loc := cfg.UI.Timezone
	now := t.store.Now
	report := func(a scanner.RepairAction) {
		due := a.ExpireAt.In(loc).Format("2006-01-02 15:04")
		would := ""
		if *dryRun {
			would = "would "
		}
		switch a.Kind {
		case scanner.RepairExpire:
			fmt.Fprintf(stdout, "%sexpire  %s  at %s (in %s)\n", would, a.Key, due, tui.Age(a.ExpireAt.Sub(now())))
		case scanner.RepairDelete:
			fmt.Fprintf(stdout, "%sdelete  %s  (past its expiry %s, %s ago)\n", would, a.Key, due, tui.Age(now().Sub(a.ExpireAt)))
		case scanner.RepairSkipExpired:
			fmt.Fprintf(stdout, "skip  %s  (past its expiry %s, %s ago; --delete-expired deletes it)\n", a.Key, due, tui.Age(now().Sub(a.ExpireAt)))
		case scanner.RepairSkipWrongType:
			fmt.Fprintf(stdout, "skip  %s  (not a string, so not a counter)\n", a.Key)
		}
	}
	n, err := scanner.Repair(ctx, t.rdb, cfg.Counters,
		cfg.sweepOptions(false),
		scanner.RepairOptions{Now: now, Only: only, DryRun: *dryRun, DeleteExpired: *deleteExpired}, report)
	fmt.Fprintln(stdout, repairSummary(n, *dryRun))
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("repair: interrupted; the summary above counts what was done")
	case strings.HasPrefix(err.Error(), "repair: "):
		return err // a write Redis refused
	default:
		return fmt.Errorf("repair: sweeping %s: %w", t.label, err)
	}
}

// repairSummary is repair's last line.
func repairSummary(n scanner.RepairCounts, dryRun bool) string {
	prefix := "repair"
	if dryRun {
		prefix = "repair (dry run: nothing written)"
	}
	return fmt.Sprintf("%s: keys_seen=%d no_ttl=%d expiry_set=%d deleted=%d skipped_past_expiry=%d skipped_wrong_type=%d gone=%d",
		prefix, n.KeysSeen, n.NoTTL, n.Expired, n.Deleted, n.SkippedPastExpiry, n.SkippedWrongType, n.Gone)
}
