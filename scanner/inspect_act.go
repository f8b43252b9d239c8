package scanner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"hourglass/store"
)

// The console's per-key actions: one task of a queue, one counter key's TTL, one lock. Each acts
// only on the one task or key it is given, only where the watched entries cover it, and goes
// through the store's scripts, which check again that the task or key is still what the page
// showed. Whether writes are allowed at all is the console's to decide before it calls these.

// ActOnTask does a to one task of section sec of the queue ref names, as the page showed it, and
// says what it did in one line: a delay or list queue of hourglass's layout through
// store.DelayQueueAct and store.ListQueueAct, a job library's as the library itself does it
// (store.JobSource.Act), due times against the server's clock. store.ErrTaskGone: the task was
// no longer there and nothing was written; store.ErrNotSupported: the queue offers no such
// action there (the error says why). A refusal names its command, key and user.
func (w *Watcher) ActOnTask(ctx context.Context, ref QueueRef, sec TaskSection, t Task, a TaskAction) (string, error) {
	target, err := w.resolveQueue(ref)
	if err != nil {
		return "", err
	}
	if ref.Kind == QueueList {
		line, err := store.ListQueueAct(ctx, w.rdb, ref.Key, target.companion, sec, t, a)
		return line, w.inspectRefusal(err, ref.Key)
	}
	now, err := w.actNow(ctx)
	if err != nil {
		return "", err
	}
	switch ref.Kind {
	case QueueDelay:
		line, err := store.DelayQueueAct(ctx, w.rdb, ref.Key, target.companion, target.unit, sec, t, a, now)
		return line, w.inspectRefusal(err, ref.Key)
	case QueueJob:
		line, err := target.source.Act(ctx, w.rdb, ref.Queue, sec, t, a, now)
		return line, w.inspectRefusal(err, ref.Queue)
	}
	return "", fmt.Errorf("scanner: no queue kind %q", ref.Kind)
}

// actNow is the server's clock an action is done at: the Snapshot's clock when the watcher has
// one, else the server's TIME.
func (w *Watcher) actNow(ctx context.Context) (time.Time, error) {
	if w.opt.Now != nil {
		return w.opt.Now(), nil
	}
	now, err := w.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, &store.CommandError{Command: "TIME", User: store.UserOf(w.rdb), Err: err}
	}
	return now, nil
}

// RepairKey gives one key of the counter family named family its window-aligned expiry (its
// window's end plus the family's retention), or deletes it when that instant has passed, as
// repair does (store.RepairKeys: the key checked again where it is written, so only a string
// holding a 64-bit integer with no TTL is touched), and says the outcome in one line. The key
// must be one the sweep classifies as the family's. A key left as it is (gone, given a TTL,
// another type, not an integer) is an error that says which.
func (w *Watcher) RepairKey(ctx context.Context, family, key string) (string, error) {
	w.specMu.RLock()
	families, loc := w.families, w.opt.Location
	w.specMu.RUnlock()
	c, ok := store.Classify(families, key, loc)
	if !ok || c.Family.Name() != family {
		return "", fmt.Errorf("scanner: %s is not a key of the counter family %q", Escape(key), family)
	}
	now, err := w.actNow(ctx)
	if err != nil {
		return "", err
	}
	at := c.Family.ExpireAt(c.Window)
	rk := store.RepairKey{Key: key, ExpireAt: at, Delete: !at.After(now)}
	outcomes, err := store.RepairKeys(ctx, w.rdb, []store.RepairKey{rk})
	if err != nil {
		return "", err
	}
	when := at.Format("2006-01-02 15:04:05 MST")
	switch outcomes[0] {
	case store.RepairExpired:
		return fmt.Sprintf("%s expires at %s (its %s window's end plus retention)", Escape(key), when, c.Window.Granularity), nil
	case store.RepairDeleted:
		return fmt.Sprintf("%s deleted: its %s window's retention ended at %s", Escape(key), c.Window.Granularity, when), nil
	}
	why := map[store.RepairOutcome]string{
		store.RepairGone:       "it is gone (expired or deleted since it was read)",
		store.RepairHasTTL:     "it has a TTL now",
		store.RepairWrongType:  "it holds another type now, not a counter",
		store.RepairNotInteger: "it holds a value that is not a 64-bit integer, not a counter",
	}[outcomes[0]]
	return "", fmt.Errorf("scanner: %s left as it is: %s", Escape(key), why)
}

// ReleaseLock deletes one key of the lock named lock whose TTL is gone (held until someone
// deletes it), only if holder still holds it and it still has no TTL (store.ReleaseStaleLock),
// and says so in one line. The key must be one the lock's pattern covers. A lock left as it is
// (gone, given a TTL, taken by another) is an error that says which (store.ErrLockGone,
// ErrLockHasTTL, ErrLockNewHolder).
func (w *Watcher) ReleaseLock(ctx context.Context, lock, key, holder string) (string, error) {
	w.specMu.RLock()
	specs := w.opt.Structures.Locks
	w.specMu.RUnlock()
	found := false
	for _, l := range specs {
		found = found || l.Name == lock && keyCovered(l.Pattern, l.Exclude, key)
	}
	if !found {
		return "", fmt.Errorf("scanner: no lock %q covers %s", lock, Escape(key))
	}
	if _, err := store.ReleaseStaleLock(ctx, w.rdb, key, holder); err != nil {
		var ce *store.CommandError
		if errors.As(err, &ce) {
			return "", err
		}
		return "", fmt.Errorf("scanner: lock %s not released: %w", Escape(key), errors.Unwrap(err))
	}
	return fmt.Sprintf("lock %s released (held by %s with no TTL)", Escape(key), Escape(holder)), nil
}
