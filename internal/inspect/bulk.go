package inspect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/journal"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// The console's bulk actions on a queue's section (store/jobs/bulk.go): the dry run, the run, each
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

// BulkCheck says whether ref's queue does a to every task of sec: nil, or jobs.ErrNotSupported
// with the reason. It reads nothing.
func (in *Inspector) BulkCheck(ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction) error {
	q := in.open(ref)
	if q == nil {
		return errNoQueue
	}
	return jobs.BulkCheck(q, sec, a)
}

// PlanBulk is the dry run of a on every task of sec: the tasks, their bytes and the time the
// sweep's budget makes it take. It writes nothing.
func (in *Inspector) PlanBulk(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction) (snapshot.BulkPlan, error) {
	q := in.open(ref)
	if q == nil {
		return snapshot.BulkPlan{}, errNoQueue
	}
	in.w.Charge(2)
	plan, err := jobs.PlanBulk(ctx, in.rdb, q, sec, a, in.w.KeysPerSecond(), in.w.Now())
	return plan, in.refusal(err, where(ref))
}

// PlanBulkMatching is PlanBulk of the tasks of sec match keeps (a filter's selection): the whole
// section is read to count them, page by page at the sweep's budget (and charged to it), progress
// told after each page; when ctx ends it stops.
func (in *Inspector) PlanBulkMatching(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction, match func(snapshot.Task) bool, progress func(snapshot.BulkResult)) (snapshot.BulkPlan, error) {
	q := in.open(ref)
	if q == nil {
		return snapshot.BulkPlan{}, errNoQueue
	}
	in.w.Charge(2)
	plan, err := jobs.PlanBulkMatching(ctx, in.rdb, q, sec, a, in.w.KeysPerSecond(), in.w.Now(), match,
		in.w.Pace, progress)
	return plan, in.refusal(err, where(ref))
}

// Bulk does a to the tasks of sec the dry run counted (plan.Tasks at most), chunk by chunk, each
// chunk's undo data recorded in the journal (fsynced) before it runs, paced to the sweep's
// budget. progress is called after each chunk. When ctx ends it stops between chunks; the
// journal then holds exactly what was done. It says what it did in one line.
func (in *Inspector) Bulk(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, a snapshot.TaskAction, plan snapshot.BulkPlan, progress func(snapshot.BulkResult)) (string, error) {
	q := in.open(ref)
	if q == nil {
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
	res, err := jobs.RunBulk(ctx, in.rdb, q, sec, a, now, jobs.BulkOptions{
		Limit: plan.Tasks, Wait: in.w.Pace, Record: entry.Record, Progress: progress,
		Match: plan.Match, Newest: plan.Newest, Lists: plan.Lists,
	})
	if eerr := entry.End(res); err == nil {
		err = eerr
	}
	return BulkLine(a, sec, refName(ref), res), in.refusal(err, where(ref))
}

// refName names a queue in a bulk action's line and its journal record: its key or queue, or a
// library's shared sets by its entry's name.
func refName(ref snapshot.QueueRef) string {
	if w := where(ref); w != "" {
		return w
	}
	return ref.Name + " (all queues)"
}

// BulkLine says what a bulk run did, in one line.
func BulkLine(a snapshot.TaskAction, sec snapshot.TaskSection, where string, res snapshot.BulkResult) string {
	verb := map[snapshot.TaskAction]string{snapshot.ActionDelete: "deleted", snapshot.ActionRunNow: "run now", snapshot.ActionArchive: "archived"}[a]
	if a == snapshot.ActionRunNow && (sec == snapshot.SectionRetry || sec == snapshot.SectionDead) {
		verb = "retried"
	}
	line := fmt.Sprintf("%d of %d %s tasks of %s %s", res.Done, res.Planned, sec, where, verb)
	if res.Gone > 0 {
		line += fmt.Sprintf(", %d gone already", res.Gone)
	}
	if res.Left > 0 {
		line += fmt.Sprintf(", %d left (%s)", res.Left, res.Refused)
	}
	if res.Resent > 0 {
		chunks := "chunks"
		if res.Resent == 1 {
			chunks = "chunk"
		}
		line += fmt.Sprintf(", %d %s sent again after a passing fault (a task done by a send whose reply was lost reads as gone)", res.Resent, chunks)
	}
	if res.Stopped {
		line += "; stopped: the rest left as they are"
	}
	return line + "; z undoes it"
}

// UndoLast undoes the newest bulk action on this target the journal holds not undone yet
// (UndoLast), paced to the sweep's budget, and says what it restored.
func (in *Inspector) UndoLast(ctx context.Context, progress func(snapshot.BulkResult)) (string, error) {
	if in.journal == nil {
		return "", errNoJournal
	}
	return UndoLast(ctx, in.rdb, in.journal, in.target, in.w.Pace, progress)
}

// UndoLast undoes the newest bulk action the journal j holds on target not undone yet: every
// chunk recorded, the last first, each task checked against what is there now (jobs.Undo),
// each chunk held to a budget by pace (Pacer, or the sweep's Pace). progress, when not
// nil, is told before each chunk how many of the undo records are done (Done of Planned). When
// ctx ends it stops between chunks, and undoing again finishes it. Once done, the action is
// marked undone in the journal. It says what it restored in one line.
func UndoLast(ctx context.Context, rdb redis.UniversalClient, j *journal.Journal, target string, pace func(ctx context.Context, keys int) error, progress func(snapshot.BulkResult)) (string, error) {
	a, tasks, err := j.Last(target)
	if err != nil {
		return "", err
	}
	// done counts the undo records done (by an undo stopped before this one too), as jobs.Undo
	// tells after each chunk; marked counts those the journal holds.
	total, done, marked := int64(len(tasks))+a.Resumed, a.Resumed, a.Resumed
	mark := func() error {
		if done == marked {
			return nil
		}
		marked = done
		return j.UndoProgress(a.ID, done)
	}
	var markErr error
	wait := func(ctx context.Context, n int) error {
		if err := mark(); err != nil {
			markErr = err
			return err
		}
		if progress != nil {
			progress(snapshot.BulkResult{Planned: total, Done: done})
		}
		return pace(ctx, n)
	}
	res, err := jobs.UndoWith(ctx, rdb, tasks, jobs.UndoOptions{Chunk: jobs.BulkChunkDefault, Wait: wait,
		Done: func(n int64) { done = a.Resumed + n }})
	if markErr != nil {
		return "", fmt.Errorf("undo of %s on %s's %s section: recording how far it went: %w", a.Action, a.Queue, a.Section, markErr)
	}
	if err != nil {
		what := fmt.Sprintf("undo of %s on %s's %s section", a.Action, a.Queue, a.Section)
		if merr := mark(); merr != nil {
			return "", fmt.Errorf("%s: %w; and recording how far it went: %w", what, err, merr)
		}
		if ctx.Err() != nil {
			return "", stopped{fmt.Sprintf("%s stopped: %d of %d records put back; undo again to go on from there", what, done, total), ctx.Err()}
		}
		return "", fmt.Errorf("%s: %w (undo again to go on: what is back is left as it is)", what, err)
	}
	if err := j.Undone(a.ID); err != nil {
		return "", err
	}
	return undoLine(a, res), nil
}

// stopped is an undo ended by its context between chunks: what it says, and the context's error
// (errors.Is finds it).
type stopped struct {
	say string
	ctx error
}

func (s stopped) Error() string { return s.say }
func (s stopped) Unwrap() error { return s.ctx }

// undoLine says what an undo restored, in one line: the action's own count of the tasks it did
// (from its end record; an action the process ended while it ran says so), then what came back.
func undoLine(a journal.Action, res jobs.UndoResult) string {
	did := "an action cut short (the process ended while it ran)"
	if a.Result != nil {
		did = fmt.Sprintf("%d %s tasks", a.Result.Done, a.Section)
	}
	line := fmt.Sprintf("undid %s of %s of %s (%s): %d tasks restored", a.Action, did, a.Queue,
		a.At.Local().Format("2006-01-02 15:04:05"), res.Restored)
	if a.Resumed > 0 {
		line += fmt.Sprintf(" (going on from an undo stopped after %d records)", a.Resumed)
	}
	for _, part := range []struct {
		n    int64
		what string
	}{{res.Keys, "keys restored with them"}, {res.There, "there already"}, {res.Taken, "taken by a worker since (they ran), not put back"},
		{res.Conflict, "keys holding something else now, left"}, {res.Expired, "keys whose expiry has passed"}} {
		if part.n == 1 {
			part.what = strings.Replace(part.what, "keys", "key", 1)
		}
		if part.n > 0 {
			line += fmt.Sprintf(", %d %s", part.n, part.what)
		}
	}
	return line
}

// Pacer holds calls to keysPerSecond (0: no budget) where no sweep keeps one (hourglass undo):
// each call waits for the keys charged by the calls before it, then charges its own (to charge
// too, when not nil).
func Pacer(keysPerSecond int, charge func(int)) func(ctx context.Context, keys int) error {
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
