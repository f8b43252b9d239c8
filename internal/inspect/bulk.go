package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/internal/journal"
	"hourglass/scanner"
	"hourglass/store"
)

// The console's bulk actions on a queue's section (store/bulk.go): the dry run, the run, each
// chunk recorded in the journal before it runs and paced to the sweep's keys/s budget (and
// charged to it), and the undo of the last action on this target, which `hourglass undo` does
// too.

// SetJournal gives the drill-down the journal its bulk actions are recorded in, and the name of
// the target they are recorded under. Without one, bulk actions are refused.
func (in *Inspector) SetJournal(j *journal.Journal, target string) {
	in.journal, in.target = j, target
}

// OpenJournal records the bulk actions in the journal at its default path (journal.DefaultPath)
// under target; an error (no state directory) leaves them refused.
func (in *Inspector) OpenJournal(target string) error {
	j, err := journal.Open("", 0)
	if err == nil {
		in.SetJournal(j, target)
	}
	return err
}

// errNoJournal refuses a bulk action with nowhere to record what undoes it.
var errNoJournal = errors.New("inspect: no journal to record the bulk action in, so it could not be undone: refused")

// BulkCheck says whether ref's queue does a to every task of sec: nil, or store.ErrNotSupported
// with the reason. It reads nothing.
func (in *Inspector) BulkCheck(ref scanner.QueueRef, sec scanner.TaskSection, a scanner.TaskAction) error {
	if ref.Open() == nil {
		return errNoQueue
	}
	return store.BulkCheck(ref.Open(), sec, a)
}

// PlanBulk is the dry run of a on every task of sec: the tasks, their bytes and the time the
// sweep's budget makes it take. It writes nothing.
func (in *Inspector) PlanBulk(ctx context.Context, ref scanner.QueueRef, sec scanner.TaskSection, a scanner.TaskAction) (scanner.BulkPlan, error) {
	if ref.Open() == nil {
		return scanner.BulkPlan{}, errNoQueue
	}
	in.w.Charge(2)
	plan, err := store.PlanBulk(ctx, in.rdb, ref.Open(), sec, a, in.w.KeysPerSecond(), in.w.Now())
	return plan, in.refusal(err, ref.Where())
}

// PlanBulkMatching is PlanBulk of the tasks of sec match keeps (a filter's selection): the whole
// section is read to count them, each page charged to the sweep's budget.
func (in *Inspector) PlanBulkMatching(ctx context.Context, ref scanner.QueueRef, sec scanner.TaskSection, a scanner.TaskAction, match func(scanner.Task) bool) (scanner.BulkPlan, error) {
	if ref.Open() == nil {
		return scanner.BulkPlan{}, errNoQueue
	}
	in.w.Charge(2)
	plan, err := store.PlanBulkMatching(ctx, in.rdb, ref.Open(), sec, a, in.w.KeysPerSecond(), in.w.Now(), match)
	in.w.Charge(int(plan.Scanned))
	return plan, in.refusal(err, ref.Where())
}

// Bulk does a to the tasks of sec the dry run counted (plan.Tasks at most), chunk by chunk, each
// chunk's undo data recorded in the journal (fsynced) before it runs, paced to the sweep's
// budget. progress is called after each chunk. When ctx ends it stops between chunks; the
// journal then holds exactly what was done. It says what it did in one line.
func (in *Inspector) Bulk(ctx context.Context, ref scanner.QueueRef, sec scanner.TaskSection, a scanner.TaskAction, plan scanner.BulkPlan, progress func(scanner.BulkResult)) (string, error) {
	if ref.Open() == nil {
		return "", errNoQueue
	}
	if in.journal == nil {
		return "", errNoJournal
	}
	now, err := in.w.ServerTime(ctx)
	if err != nil {
		return "", err
	}
	entry, err := in.journal.Begin(journal.Action{Target: in.target, Queue: refName(ref), Section: string(sec),
		Action: string(a), At: now, Planned: plan.Tasks})
	if err != nil {
		return "", err
	}
	res, err := store.RunBulk(ctx, in.rdb, ref.Open(), sec, a, now, store.BulkOptions{
		Limit: plan.Tasks, Wait: pacer(in.w.KeysPerSecond(), in.w.Charge), Record: entry.Record, Progress: progress,
		Match: plan.Match, Newest: plan.Newest,
	})
	if eerr := entry.End(res); err == nil {
		err = eerr
	}
	return BulkLine(a, sec, refName(ref), res), in.refusal(err, ref.Where())
}

// refName names a queue in a bulk action's line and its journal record: its key or queue, or a
// library's shared sets by its entry's name.
func refName(ref scanner.QueueRef) string {
	if w := ref.Where(); w != "" {
		return w
	}
	return ref.Name + " (all queues)"
}

// BulkLine says what a bulk run did, in one line.
func BulkLine(a scanner.TaskAction, sec scanner.TaskSection, where string, res scanner.BulkResult) string {
	verb := map[scanner.TaskAction]string{scanner.ActionDelete: "deleted", scanner.ActionRunNow: "run now", scanner.ActionArchive: "archived"}[a]
	if a == scanner.ActionRunNow && (sec == scanner.SectionRetry || sec == scanner.SectionDead) {
		verb = "retried"
	}
	line := fmt.Sprintf("%d of %d %s tasks of %s %s", res.Done, res.Planned, sec, where, verb)
	if res.Gone > 0 {
		line += fmt.Sprintf(", %d gone already", res.Gone)
	}
	if res.Left > 0 {
		line += fmt.Sprintf(", %d left (%s)", res.Left, res.Refused)
	}
	if res.Stopped {
		line += "; stopped: the rest left as they are"
	}
	return line + "; z undoes it"
}

// UndoLast undoes the last bulk action on this target the journal holds (UndoLast), paced to the
// sweep's budget, and says what it restored.
func (in *Inspector) UndoLast(ctx context.Context) (string, error) {
	if in.journal == nil {
		return "", errNoJournal
	}
	return UndoLast(ctx, in.rdb, in.journal, in.target, in.w.KeysPerSecond(), in.w.Charge)
}

// UndoLast undoes the last bulk action the journal j holds on target: every chunk recorded, the
// last first, each task checked against what is there now (store.Undo), at keysPerSecond (0: no
// budget), charging each chunk to charge when not nil. Once done, the action is marked undone in
// the journal. It says what it restored in one line.
func UndoLast(ctx context.Context, rdb redis.UniversalClient, j *journal.Journal, target string, keysPerSecond int, charge func(int)) (string, error) {
	a, tasks, err := j.Last(target)
	if err != nil {
		return "", err
	}
	res, err := store.Undo(ctx, rdb, tasks, store.BulkChunkDefault, pacer(keysPerSecond, charge))
	if err != nil {
		return "", fmt.Errorf("undo of %s on %s's %s section: %w (undo again to finish: what is back is left as it is)", a.Action, a.Queue, a.Section, err)
	}
	if err := j.Undone(a.ID); err != nil {
		return "", err
	}
	line := fmt.Sprintf("undid %s of %d %s tasks of %s (%s): %d restored", a.Action, len(tasks), a.Section, a.Queue,
		a.At.Local().Format("2006-01-02 15:04:05"), res.Restored)
	for _, part := range []struct {
		n    int64
		what string
	}{{res.There, "there already"}, {res.Taken, "taken by a worker since (they ran), not put back"},
		{res.Conflict, "keys holding something else now, left"}, {res.Expired, "keys whose expiry has passed"}} {
		if part.n > 0 {
			line += fmt.Sprintf(", %d %s", part.n, part.what)
		}
	}
	return line, nil
}

// pacer holds calls to keysPerSecond (0: no budget): each call waits for the keys charged by
// the calls before it, then charges its own (to charge too, when not nil).
func pacer(keysPerSecond int, charge func(int)) func(ctx context.Context, keys int) error {
	var next time.Time
	return func(ctx context.Context, keys int) error {
		if charge != nil {
			charge(keys)
		}
		if keysPerSecond <= 0 {
			return ctx.Err()
		}
		now := time.Now()
		if next.Before(now) {
			next = now
		}
		wait := next.Sub(now)
		next = next.Add(time.Duration(float64(keys) / float64(keysPerSecond) * float64(time.Second)))
		return store.Sleep(ctx, wait)
	}
}
