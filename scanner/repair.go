package scanner

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// RepairOptions say what a repair does.
type RepairOptions struct {
	// Only limits the repair to one family (nil: all). Keys are still judged by the first family
	// they fit, as in a Snapshot.
	Only *store.Family
	// DryRun reports what would be done and writes nothing.
	DryRun bool
	// DeleteExpired deletes keys with no TTL whose window is already past its retention; without
	// it they are reported and left.
	DeleteExpired bool
}

// Repair sweeps rdb (budgeted, and judged by the server clock, as sweep says) and gives every
// family key that has no TTL its window-aligned expiry, one pipeline per page; report, when not
// nil, hears of each key acted on (or, in a dry run, that would be) and of each key left, with
// why. A write Redis refuses stops
// the repair with that error; the counts say what was done before it.
//
// Repair touches only what a counter writer of the family would have written: a string holding a
// 64-bit integer. Text, a number past the int64 range and other types are left. Each key is
// checked again in the script that writes it (store.RepairKeys), so one rewritten, given a TTL or
// deleted since the sweep read it is left as it now is.
func Repair(ctx context.Context, rdb redis.UniversalClient, families []*store.Family, sweep Options, opt RepairOptions, report func(snapshot.RepairAction)) (snapshot.RepairCounts, error) {
	if report == nil {
		report = func(snapshot.RepairAction) {}
	}
	now := sweep.Now
	if now == nil {
		now = time.Now
	}
	r := &repairer{rdb: rdb, opt: opt, now: now, report: report}
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
	now    func() time.Time // the server clock (the sweep's Options.Now)
	report func(snapshot.RepairAction)
	n      snapshot.RepairCounts
}

// apply repairs one page's keys with one pipeline.
func (r *repairer) apply(ctx context.Context, p Page) error {
	r.n.KeysSeen += int64(p.Seen)
	acts, todo := r.plan(p)
	if len(acts) == 0 {
		return nil
	}
	if r.opt.DryRun {
		for _, a := range acts {
			r.count(a)
		}
		return nil
	}
	outcomes, err := store.RepairKeys(ctx, r.rdb, todo)
	for i, a := range acts {
		switch o := outcomes[i]; o {
		case "": // the call failed: err says so
		case store.RepairExpired, store.RepairDeleted:
			r.count(a)
		case store.RepairGone:
			r.n.Gone++ // expired or deleted since the sweep read it
		default:
			a.Kind, a.Changed = snapshot.RepairSkipChanged, o
			r.n.SkippedChanged++
			r.report(a)
		}
	}
	if err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	return nil
}

// plan decides, from what the sweep read, what to do to each of the page's keys with no TTL:
// the actions, and the keys to hand the repair script. Keys left are counted and reported here.
// The clock is read once, when the page has a key to judge by it.
func (r *repairer) plan(p Page) ([]snapshot.RepairAction, []store.RepairKey) {
	var acts []snapshot.RepairAction
	var todo []store.RepairKey
	var now time.Time
	for _, k := range p.Keys {
		if k.Gone || k.TTL != NoTTL || k.kind != kindCounter || (r.opt.Only != nil && k.Family != r.opt.Only) {
			continue // repair knows counter windows only: a structure's keys have no window to expire by
		}
		r.n.NoTTL++
		a := snapshot.RepairAction{Key: format.Escape(k.Name), Family: k.Family.Name(), ExpireAt: k.Family.ExpireAt(k.Window)}
		_, isInt := ParseInteger(k.Value)
		if now.IsZero() {
			now = r.now()
		}
		switch {
		case k.WrongType:
			a.Kind = snapshot.RepairSkipWrongType
			r.n.SkippedWrongType++
		case !isInt:
			a.Kind, a.Value = snapshot.RepairSkipNotInteger, format.Escape(k.Value)
			r.n.SkippedNotInteger++
		case a.ExpireAt.After(now):
			a.Kind = snapshot.RepairExpire
		case r.opt.DeleteExpired:
			a.Kind = snapshot.RepairDelete
		default:
			a.Kind = snapshot.RepairSkipExpired
			r.n.SkippedPastExpiry++
		}
		if a.Kind != snapshot.RepairExpire && a.Kind != snapshot.RepairDelete {
			r.report(a)
			continue
		}
		acts = append(acts, a)
		todo = append(todo, store.RepairKey{Key: k.Name, ExpireAt: a.ExpireAt, Delete: a.Kind == snapshot.RepairDelete})
	}
	return acts, todo
}

func (r *repairer) count(a snapshot.RepairAction) {
	if a.Kind == snapshot.RepairDelete {
		r.n.Deleted++
	} else {
		r.n.Expired++
	}
	r.report(a)
}
