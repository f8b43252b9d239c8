package watch

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// What the console's drill-down (internal/inspect) needs of a Watcher to read one structure's
// keys on demand: the client, the sweep's budget, the watched entries and the server's clock.
// None of these waits for a Poll under way, so a read on screen never waits for a sweep's slice.

// Watched are the entries a Watcher watches now: its counter families, its time zone and its
// structures (Claim adds to them).
type Watched struct {
	Families   []*store.Family
	Location   *time.Location // the config's time zone (nil: local time)
	Structures scanner.Structures
}

// Client is the Redis the watcher reads.
func (w *Watcher) Client() redis.UniversalClient { return w.rdb }

// Watched returns the entries watched now, read under the lock Claim writes them under.
func (w *Watcher) Watched() Watched {
	w.specMu.RLock()
	defer w.specMu.RUnlock()
	return Watched{Families: w.families, Location: w.opt.Location, Structures: w.opt.Structures}
}

// KeysPerSecond is the sweep's budget in keys read a second (0: no budget).
func (w *Watcher) KeysPerSecond() int {
	w.specMu.RLock()
	defer w.specMu.RUnlock()
	return w.opt.KeysPerSecond
}

// Charge counts n keys read on demand against the sweep's budget, so the sweep that follows waits
// for them as for its own.
func (w *Watcher) Charge(n int) {
	w.pace.Load().Spend(n) // nil before the first sweep: nothing to charge
}

// Pace holds work done beside the sweep (a bulk action, an undo) to the sweep's own keys/s
// budget: it waits until the budget the sweep and it share allows a step, then charges keys,
// so the two together stay within it. Before the first sweep it keeps the budget alone, until
// the sweep takes it over. It returns early with ctx's error when ctx ends.
func (w *Watcher) Pace(ctx context.Context, keys int) error {
	if w.pace.Load() == nil {
		w.pace.CompareAndSwap(nil, scanner.NewPacer(w.KeysPerSecond(), w.clock))
	}
	p := w.pace.Load()
	if err := p.Wait(ctx); err != nil {
		return err
	}
	p.Spend(keys)
	return ctx.Err()
}

// Now is the server's clock, as the Snapshot reads it (the machine's when the watcher has none).
func (w *Watcher) Now() time.Time {
	if w.opt.Now != nil {
		return w.opt.Now()
	}
	return time.Now()
}

// ServerTime is the server's clock an action is done at: the Snapshot's clock when the watcher
// has one, else the server's TIME. A refused TIME names its command and user.
func (w *Watcher) ServerTime(ctx context.Context) (time.Time, error) {
	if w.opt.Now != nil {
		return w.opt.Now(), nil
	}
	now, err := w.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, &store.CommandError{Command: "TIME", User: store.UserOf(w.rdb), Err: err}
	}
	return now, nil
}
