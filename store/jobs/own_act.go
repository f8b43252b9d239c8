package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// The console's actions on one task of hourglass's own queues (delayqueue.go, listqueue.go), and
// on one lock. Each write is one script that checks the task (or lock) is still what the page
// showed, so a task claimed, acknowledged, moved or deleted since is left as it is and the
// action says so (ErrTaskGone) instead of acting on what is there now. Each touches only the one
// task or key it is given.

var (
	dqRunNow = luaScript("dq_run_now")
	dqReturn = luaScript("dq_return")
	lqReturn = luaScript("lq_return")
)

// Act does a to one task of a delay queue's section, as the page at now (the server's clock)
// showed it, and says what it did:
//
//   - ActionRunNow on a later task: its due time becomes now, if it is still in the queue and
//     still later.
//   - ActionReturn on an in-flight entry ("<claim id>|<task>"): the entry leaves the in-flight
//     set and the task goes back to the queue, due now, as the reaper returns a task whose
//     deadline passed.
//   - ActionDelete: the member leaves the section's key (the queue, or the in-flight set).
//
// unit is the queue's; an AutoUnit queue's is read from the task's own score (run now) or the
// queue's oldest (return; an empty queue takes hourglass's own, milliseconds). ErrTaskGone: the
// task was not where the page showed it, and nothing was written.
func (q *ownDelayQueue) Act(ctx context.Context, rdb redis.UniversalClient, sec TaskSection, t Task, a TaskAction, now time.Time) (string, error) {
	key, inFlight, unit := q.key, q.inFlight, q.unit
	switch {
	case a == ActionDelete && (sec == SectionDue || sec == SectionLater):
		return actZRem(ctx, rdb, key, t)
	case a == ActionDelete && sec == SectionInFlight && inFlight != "":
		return actZRem(ctx, rdb, inFlight, t)
	case a == ActionRunNow && sec == SectionLater:
		return delayRunNow(ctx, rdb, key, unit, t, now)
	case a == ActionReturn && sec == SectionInFlight && inFlight != "":
		return delayReturn(ctx, rdb, key, inFlight, unit, t, now)
	}
	return "", actRefusal("a delay queue", sec, a, delayWhyNot(sec, a, inFlight))
}

// delayWhyNot says why a delay queue offers no such action there.
func delayWhyNot(sec TaskSection, a TaskAction, inFlight string) string {
	switch {
	case sec == SectionInFlight && inFlight == "":
		return "the queue keeps no in-flight set"
	case sec != SectionDue && sec != SectionLater && sec != SectionInFlight:
		return "a delay queue has no such section"
	case a == ActionRunNow && sec == SectionDue:
		return "the task is due already: the next claim takes it"
	case a == ActionRunNow:
		return "an in-flight task is returned to the queue, not run now"
	case a == ActionReturn:
		return "only an in-flight task can be returned"
	}
	return "no such action"
}

// delayRunNow makes a later task due now.
func delayRunNow(ctx context.Context, rdb redis.UniversalClient, key string, unit store.ScoreUnit, t Task, now time.Time) (string, error) {
	if unit == store.AutoUnit {
		score, err := rdb.ZScore(ctx, key, t.Member).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return "", actGone("run", t, key)
		case err != nil:
			return "", actFail(rdb, "ZSCORE", key, err)
		}
		var ok bool
		if unit, ok = store.GuessUnit(score, now); !ok {
			return "", fmt.Errorf("store: run %s now in %s: its score %s is not a due time in any unit (s, ms, us, bullmq) within ten years of now: set score_unit",
				actName(t), store.QuoteName(key), store.FormatScore(score))
		}
	}
	reply, err := dqRunNow.Run(ctx, rdb, []string{key}, t.Member, unit.Score(now), unit.Bound(now)).Text()
	switch {
	case err != nil:
		return "", actFail(rdb, "delay queue run-now script (EVALSHA)", key, err)
	case reply == "gone":
		return "", actGone("run", t, key)
	case reply == "due":
		return "", fmt.Errorf("store: run %s now in %s: it is due already: %w", actName(t), store.QuoteName(key), ErrTaskGone)
	case reply != "moved":
		return "", actFail(rdb, "delay queue run-now script (EVALSHA)", key, fmt.Errorf("unexpected reply %q", reply))
	}
	return fmt.Sprintf("task %s is due now in %s", actName(t), store.QuoteName(key)), nil
}

// delayReturn returns one in-flight entry's task to its queue, due now.
func delayReturn(ctx context.Context, rdb redis.UniversalClient, key, inFlight string, unit store.ScoreUnit, t Task, now time.Time) (string, error) {
	if unit == store.AutoUnit {
		var err error
		if unit, err = actQueueUnit(ctx, rdb, key, now); err != nil {
			return "", err
		}
	}
	n, err := dqReturn.Run(ctx, rdb, []string{key, inFlight}, t.Member, unit.Score(now)).Int64()
	switch {
	case err != nil:
		return "", actFail(rdb, "delay queue return script (EVALSHA)", inFlight, err)
	case n == 0:
		return "", actGone("return", t, inFlight)
	}
	task := t.Member
	if _, rest, ok := strings.Cut(task, "|"); ok {
		task = rest
	}
	return fmt.Sprintf("task %s is back in %s, due now", store.QuoteName(task), store.QuoteName(key)), nil
}

// actQueueUnit is the unit an AutoUnit queue's oldest score is a due time in; an empty queue takes
// the unit hourglass's own writer gives such a queue (milliseconds), as its reaper does.
func actQueueUnit(ctx context.Context, rdb redis.UniversalClient, key string, now time.Time) (store.ScoreUnit, error) {
	zs, err := rdb.ZRangeWithScores(ctx, key, 0, 0).Result()
	switch {
	case err != nil:
		return store.AutoUnit, actFail(rdb, "ZRANGE", key, err)
	case len(zs) == 0:
		return store.AutoUnit.WriteUnit(), nil
	}
	u, ok := store.GuessUnit(zs[0].Score, now)
	if !ok {
		return store.AutoUnit, fmt.Errorf("store: the scores of %s are not due times in any unit (s, ms, us, bullmq) within ten years of now (%s): set score_unit",
			store.QuoteName(key), store.FormatScore(zs[0].Score))
	}
	return u, nil
}

// Act does a to one task of a list queue's section (SectionWaiting: the list; SectionInFlight:
// the processing list, refused when the queue keeps none) and says what it did:
//
//   - ActionReturn on a processing task: it leaves the processing list and goes to the queue's
//     tail, where the next pop takes it.
//   - ActionDelete: one occurrence of the task leaves the section's list.
//
// A list keeps no due time, so ActionRunNow is not supported and now is unused. ErrTaskGone: the
// task was not there, and nothing was written.
func (q *ownListQueue) Act(ctx context.Context, rdb redis.UniversalClient, sec TaskSection, t Task, a TaskAction, _ time.Time) (string, error) {
	key, processing := q.key, q.processing
	from := map[TaskSection]string{SectionWaiting: key, SectionInFlight: processing}[sec]
	switch {
	case from == "" && sec == SectionInFlight:
		return "", actRefusal("a list queue", sec, a, "the queue keeps no processing list")
	case from == "":
		return "", actRefusal("a list queue", sec, a, "a list queue has no such section")
	case a == ActionDelete:
		n, err := rdb.LRem(ctx, from, 1, t.Member).Result()
		switch {
		case err != nil:
			return "", actFail(rdb, "LREM", from, err)
		case n == 0:
			return "", actGone("delete", t, from)
		}
		return fmt.Sprintf("task %s deleted from %s", actName(t), store.QuoteName(from)), nil
	case a == ActionReturn && sec == SectionInFlight:
		n, err := lqReturn.Run(ctx, rdb, []string{key, processing}, t.Member).Int64()
		switch {
		case err != nil:
			return "", actFail(rdb, "list queue return script (EVALSHA)", processing, err)
		case n == 0:
			return "", actGone("return", t, processing)
		}
		return fmt.Sprintf("task %s is back in %s, next to be taken", actName(t), store.QuoteName(key)), nil
	case a == ActionRunNow:
		return "", actRefusal("a list queue", sec, a, "a list keeps no due time: its tasks are taken in order")
	}
	return "", actRefusal("a list queue", sec, a, "only a processing task can be returned")
}

// actZRem deletes one member of a sorted set.
func actZRem(ctx context.Context, rdb redis.UniversalClient, key string, t Task) (string, error) {
	n, err := rdb.ZRem(ctx, key, t.Member).Result()
	switch {
	case err != nil:
		return "", actFail(rdb, "ZREM", key, err)
	case n == 0:
		return "", actGone("delete", t, key)
	}
	return fmt.Sprintf("task %s deleted from %s", actName(t), store.QuoteName(key)), nil
}

// actFail names the command, the key and the cause of a failed action.
func actFail(rdb redis.UniversalClient, command, key string, err error) error {
	return &store.CommandError{Command: command, Key: key, User: store.UserOf(rdb), Err: err}
}

// actGone is ErrTaskGone for task t, which was not in key.
func actGone(verb string, t Task, key string) error {
	return fmt.Errorf("store: %s %s: not in %s: %w", verb, actName(t), store.QuoteName(key), ErrTaskGone)
}

// actRefusal is ErrNotSupported for action a on a section, with why.
func actRefusal(what string, sec TaskSection, a TaskAction, why string) error {
	return fmt.Errorf("store: %s on a task of %s's %s section: %s: %w", a, what, sec, why, ErrNotSupported)
}

// actName names task t in an action's line: its job id, or its entry.
func actName(t Task) string {
	if t.ID != "" {
		return store.QuoteName(t.ID)
	}
	return store.QuoteName(t.Member)
}
