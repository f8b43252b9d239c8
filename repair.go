package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/scanner"
	"hourglass/store"
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

// repairCounts is what a repair did (or, in a dry run, would do).
type repairCounts struct {
	seen, noTTL, set, deleted, pastExpiry, wrongType, gone int64
}

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

	r := &repairer{rdb: t.rdb, now: t.store.Now, loc: cfg.UI.Timezone, only: only,
		dryRun: *dryRun, deleteExpired: *deleteExpired, out: stdout}
	// Every family is swept, so a key is judged by the first family it fits, as snapshot does.
	sweep := scanner.New(t.rdb, cfg.Counters, scanner.Options{Count: cfg.Scan.Count, KeysPerSecond: cfg.Scan.KeysPerSecond, Location: r.loc})
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	err = sweep.Run(rctx, func(p scanner.Page) {
		if err := r.apply(rctx, p); err != nil {
			cancel(err)
		}
	})
	fmt.Fprintln(stdout, r.summary())
	switch cause := context.Cause(rctx); {
	case ctx.Err() != nil:
		return fmt.Errorf("repair: interrupted; the summary above counts what was done")
	case cause != nil: // a write Redis refused
		return cause
	case err != nil:
		return fmt.Errorf("repair: sweeping %s: %w", t.label, err)
	}
	return nil
}

type repairer struct {
	rdb                   redis.UniversalClient
	now                   func() time.Time
	loc                   *time.Location
	only                  *store.Family
	dryRun, deleteExpired bool
	out                   io.Writer
	n                     repairCounts
}

// action is one write a repair makes.
type action struct {
	key      scanner.Key
	expireAt time.Time
	del      bool
}

// apply repairs one page's keys with one pipeline.
func (r *repairer) apply(ctx context.Context, p scanner.Page) error {
	r.n.seen += int64(p.Seen)
	now := r.now()
	var acts []action
	for _, k := range p.Keys {
		if k.Gone || k.TTL != scanner.NoTTL || (r.only != nil && k.Family != r.only) {
			continue
		}
		r.n.noTTL++
		name := scanner.Escape(k.Name)
		if k.WrongType {
			r.n.wrongType++
			fmt.Fprintf(r.out, "skip  %s  (not a string, so not a counter)\n", name)
			continue
		}
		at := k.Family.ExpireAt(k.Window)
		switch {
		case at.After(now):
			acts = append(acts, action{key: k, expireAt: at})
		case r.deleteExpired:
			acts = append(acts, action{key: k, expireAt: at, del: true})
		default:
			r.n.pastExpiry++
			fmt.Fprintf(r.out, "skip  %s  (past its expiry %s, %s ago; --delete-expired deletes it)\n",
				name, at.In(r.loc).Format("2006-01-02 15:04"), age(now.Sub(at)))
		}
	}
	if len(acts) == 0 {
		return nil
	}
	if r.dryRun {
		for _, a := range acts {
			r.report(a, now, true)
		}
		return nil
	}
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(acts))
	for i, a := range acts {
		if a.del {
			cmds[i] = pipe.Del(ctx, a.key.Name)
		} else {
			// EXPIREAT in whole seconds, read as a number: 1 set, 0 the key is gone.
			c := redis.NewIntCmd(ctx, "expireat", a.key.Name, a.expireAt.Unix())
			_ = pipe.Process(ctx, c)
			cmds[i] = c
		}
	}
	_, _ = pipe.Exec(ctx) // each command's reply is read below
	for i, a := range acts {
		n, err := cmds[i].Result()
		if err != nil {
			verb := "EXPIREAT"
			if a.del {
				verb = "DEL"
			}
			return fmt.Errorf("repair: %s %s: %w", verb, scanner.Escape(a.key.Name), err)
		}
		if n == 0 {
			r.n.gone++ // expired or deleted since the sweep read it
			continue
		}
		r.report(a, now, false)
	}
	return nil
}

// report prints one action and counts it.
func (r *repairer) report(a action, now time.Time, dry bool) {
	name := scanner.Escape(a.key.Name)
	would := ""
	if dry {
		would = "would "
	}
	due := a.expireAt.In(r.loc).Format("2006-01-02 15:04")
	if a.del {
		r.n.deleted++
		fmt.Fprintf(r.out, "%sdelete  %s  (past its expiry %s, %s ago)\n", would, name, due, age(now.Sub(a.expireAt)))
		return
	}
	r.n.set++
	fmt.Fprintf(r.out, "%sexpire  %s  at %s (in %s)\n", would, name, due, age(a.expireAt.Sub(now)))
}

func (r *repairer) summary() string {
	n := r.n
	prefix := "repair"
	if r.dryRun {
		prefix = "repair (dry run: nothing written)"
	}
	return fmt.Sprintf("%s: keys_seen=%d no_ttl=%d expiry_set=%d deleted=%d skipped_past_expiry=%d skipped_wrong_type=%d gone=%d",
		prefix, n.seen, n.noTTL, n.set, n.deleted, n.pastExpiry, n.wrongType, n.gone)
}
