package inspect

import (
	"context"
	"errors"
	"fmt"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// The console's per-key actions: one task of a queue, one counter key's TTL, one lock. Each acts
// only on the one task or key it is given, only where the watched entries cover it, and goes
// through the store's scripts, which check again that the task or key is still what the page
// showed. Whether writes are allowed at all is the console's to decide before it calls these.

// ActOnTask does a to one task of section sec of ref's queue, as the page showed it, and says
// what it did in one line: a delay or list queue of hourglass's layout as its scripts do, a job
// library's as the library itself does (jobs.Queue.Act), due times against the server's clock.
// jobs.ErrTaskGone: the task was no longer there and nothing was written;
// jobs.ErrNotSupported: the queue offers no such action there (the error says why). A ref no
// Snapshot made is refused. A refusal names its command, key and user.
func (in *Inspector) ActOnTask(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, t snapshot.Task, a snapshot.TaskAction) (string, error) {
	q := in.open(ref)
	if q == nil {
		return "", errNoQueue
	}
	now, err := in.w.ServerTime(ctx)
	if err != nil {
		return "", err
	}
	line, err := q.Act(ctx, in.rdb, sec, t, a, now)
	return line, in.refusal(err, where(ref))
}

// RepairKey gives one key of the counter family named family its window-aligned expiry (its
// window's end plus the family's retention), or deletes it when that instant has passed, as
// repair does (store.RepairKeys: the key checked again where it is written, so only a string
// holding a 64-bit integer with no TTL is touched), and says the outcome in one line. The key
// must be one the sweep classifies as the family's. A key left as it is (gone, given a TTL,
// another type, not an integer) is an error that says which.
func (in *Inspector) RepairKey(ctx context.Context, family, key string) (string, error) {
	watched := in.w.Watched()
	families, loc := watched.Families, watched.Location
	c, ok := store.Classify(families, key, loc)
	if !ok || c.Family.Name() != family {
		return "", fmt.Errorf("inspect: %s is not a key of the counter family %q", format.Escape(key), family)
	}
	now, err := in.w.ServerTime(ctx)
	if err != nil {
		return "", err
	}
	at := c.Family.ExpireAt(c.Window)
	rk := store.RepairKey{Key: key, ExpireAt: at, Delete: !at.After(now)}
	outcomes, err := store.RepairKeys(ctx, in.rdb, []store.RepairKey{rk})
	if err != nil {
		return "", err
	}
	when := at.Format("2006-01-02 15:04:05 MST")
	switch outcomes[0] {
	case store.RepairExpired:
		return fmt.Sprintf("%s expires at %s (its %s window's end plus retention)", format.Escape(key), when, c.Window.Granularity), nil
	case store.RepairDeleted:
		return fmt.Sprintf("%s deleted: its %s window's retention ended at %s", format.Escape(key), c.Window.Granularity, when), nil
	}
	why := map[store.RepairOutcome]string{
		store.RepairGone:       "it is gone (expired or deleted since it was read)",
		store.RepairHasTTL:     "it has a TTL now",
		store.RepairWrongType:  "it holds another type now, not a counter",
		store.RepairNotInteger: "it holds a value that is not a 64-bit integer, not a counter",
	}[outcomes[0]]
	return "", fmt.Errorf("inspect: %s left as it is: %s", format.Escape(key), why)
}

// ReleaseLock deletes one key of the lock named lock whose TTL is gone (held until someone
// deletes it), only if holder still holds it and it still has no TTL (store.ReleaseStaleLock),
// and says so in one line. The key must be one the lock's pattern covers. A lock left as it is
// (gone, given a TTL, taken by another) is an error that says which (store.ErrLockGone,
// ErrLockHasTTL, ErrLockNewHolder).
func (in *Inspector) ReleaseLock(ctx context.Context, lock, key, holder string) (string, error) {
	specs := in.w.Watched().Structures.Locks
	found := false
	for _, l := range specs {
		found = found || l.Name == lock && keyCovered(l.Pattern, l.Exclude, key)
	}
	if !found {
		return "", fmt.Errorf("inspect: no lock %q covers %s", lock, format.Escape(key))
	}
	if _, err := store.ReleaseStaleLock(ctx, in.rdb, key, holder); err != nil {
		var ce *store.CommandError
		if errors.As(err, &ce) {
			return "", err
		}
		return "", fmt.Errorf("inspect: lock %s not released: %w", format.Escape(key), errors.Unwrap(err))
	}
	return fmt.Sprintf("lock %s released (held by %s with no TTL)", format.Escape(key), format.Escape(holder)), nil
}
