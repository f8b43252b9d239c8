package scanner

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// RepairOptions say what a repair does.
type RepairOptions struct {
	// Now reads the server clock (time.Now when nil).
	Now func() time.Time
	// Only limits the repair to one family (nil: all). Keys are still judged by the first family
	// they fit, as in a Snapshot.
	Only *store.Family
	// DryRun reports what would be done and writes nothing.
	DryRun bool
	// DeleteExpired deletes keys with no TTL whose window is already past its retention; without
	// it they are reported and left.
	DeleteExpired bool
}

// RepairAction is what a repair did, or would do, to one key.
type RepairAction struct {
	Key      string // escaped for display
	Family   string
	Kind     RepairKind
	ExpireAt time.Time // the window's end plus retention
}

// RepairKind says what became of a key.
type RepairKind int

// What a repair does to a key without a TTL.
const (
	RepairExpire        RepairKind = iota // given EXPIREAT its window end plus retention
	RepairDelete                          // past that instant, deleted (DeleteExpired)
	RepairSkipExpired                     // past that instant, left (no DeleteExpired)
	RepairSkipWrongType                   // not a string, so not a counter: left
)

// RepairCounts add up a repair.
type RepairCounts struct {
	KeysSeen, NoTTL, Expired, Deleted, SkippedPastExpiry, SkippedWrongType, Gone int64
}

// Repair sweeps rdb (budgeted as opt says) and gives every family key that has no TTL its
// window-aligned expiry, one pipeline per page; report, when not nil, hears of each key acted on
// (or, in a dry run, that would be). A write Redis refuses stops the repair with that error; the
// counts say what was done before it.
func Repair(ctx context.Context, rdb redis.UniversalClient, families []*store.Family, sweep Options, opt RepairOptions, report func(RepairAction)) (RepairCounts, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if report == nil {
		report = func(RepairAction) {}
	}
	r := &repairer{rdb: rdb, opt: opt, report: report}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	err := New(rdb, families, sweep).Run(rctx, func(p Page) {
		if err := r.apply(rctx, p); err != nil {
			cancel(err)
		}
	})
	switch cause := context.Cause(rctx); {
	case ctx.Err() != nil:
		return r.n, ctx.Err()
	case cause != nil: // a write Redis refused
		return r.n, cause
	case err != nil:
		return r.n, err
	}
	return r.n, nil
}

type repairer struct {
	rdb    redis.UniversalClient
	opt    RepairOptions
	report func(RepairAction)
	n      RepairCounts
}

// apply repairs one page's keys with one pipeline.
func (r *repairer) apply(ctx context.Context, p Page) error {
	r.n.KeysSeen += int64(p.Seen)
	now := r.opt.Now()
	var acts []RepairAction
	var names []string
	for _, k := range p.Keys {
		if k.Gone || k.TTL != NoTTL || k.kind != kindCounter || (r.opt.Only != nil && k.Family != r.opt.Only) {
			continue // repair knows counter windows only: a structure's keys have no window to expire by
		}
		r.n.NoTTL++
		a := RepairAction{Key: Escape(k.Name), Family: k.Family.Name(), ExpireAt: k.Family.ExpireAt(k.Window)}
		switch {
		case k.WrongType:
			a.Kind = RepairSkipWrongType
			r.n.SkippedWrongType++
			r.report(a)
			continue
		case a.ExpireAt.After(now):
			a.Kind = RepairExpire
		case r.opt.DeleteExpired:
			a.Kind = RepairDelete
		default:
			a.Kind = RepairSkipExpired
			r.n.SkippedPastExpiry++
			r.report(a)
			continue
		}
		acts = append(acts, a)
		names = append(names, k.Name)
	}
	if len(acts) == 0 {
		return nil
	}
	if r.opt.DryRun {
		for _, a := range acts {
			r.count(a)
		}
		return nil
	}
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(acts))
	for i, a := range acts {
		if a.Kind == RepairDelete {
			cmds[i] = pipe.Del(ctx, names[i])
		} else {
			// EXPIREAT in whole seconds, read as a number: 1 set, 0 the key is gone.
			c := redis.NewIntCmd(ctx, "expireat", names[i], a.ExpireAt.Unix())
			_ = pipe.Process(ctx, c)
			cmds[i] = c
		}
	}
	_, _ = pipe.Exec(ctx) // each command's reply is read below
	for i, a := range acts {
		n, err := cmds[i].Result()
		if err != nil {
			verb := "EXPIREAT"
			if a.Kind == RepairDelete {
				verb = "DEL"
			}
			return fmt.Errorf("repair: %s %s: %w", verb, a.Key, err)
		}
		if n == 0 {
			r.n.Gone++ // expired or deleted since the sweep read it
			continue
		}
		r.count(a)
	}
	return nil
}

func (r *repairer) count(a RepairAction) {
	if a.Kind == RepairDelete {
		r.n.Deleted++
	} else {
		r.n.Expired++
	}
	r.report(a)
}
