package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The console's actions on one task of hourglass's own queues (delayqueue.go, listqueue.go), and
// on one lock. Each write is one script that checks the task (or lock) is still what the page
// showed, so a task claimed, acknowledged, moved or deleted since is left as it is and the
// action says so (ErrTaskGone) instead of acting on what is there now. Each touches only the one
// task or key it is given.

var (
	dqRunNow         = luaScript("dq_run_now")
	dqReturn         = luaScript("dq_return")
	lqReturn         = luaScript("lq_return")
	lockReleaseStale = luaScript("lock_release_stale")
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
func delayRunNow(ctx context.Context, rdb redis.UniversalClient, key string, unit ScoreUnit, t Task, now time.Time) (string, error) {
	if unit == AutoUnit {
		score, err := rdb.ZScore(ctx, key, t.Member).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return "", actGone("run", t, key)
		case err != nil:
			return "", actFail(rdb, "ZSCORE", key, err)
		}
		var ok bool
		if unit, ok = GuessUnit(score, now); !ok {
			return "", fmt.Errorf("store: run %s now in %s: its score %s is not a due time in any unit (s, ms, us, bullmq) within ten years of now: set score_unit",
				actName(t), actQuote(key), fmtScore(score))
		}
	}
	reply, err := dqRunNow.Run(ctx, rdb, []string{key}, t.Member, unit.score(now), unit.Bound(now)).Text()
	switch {
	case err != nil:
		return "", actFail(rdb, "delay queue run-now script (EVALSHA)", key, err)
	case reply == "gone":
		return "", actGone("run", t, key)
	case reply == "due":
		return "", fmt.Errorf("store: run %s now in %s: it is due already: %w", actName(t), actQuote(key), ErrTaskGone)
	case reply != "moved":
		return "", actFail(rdb, "delay queue run-now script (EVALSHA)", key, fmt.Errorf("unexpected reply %q", reply))
	}
	return fmt.Sprintf("task %s is due now in %s", actName(t), actQuote(key)), nil
}

// delayReturn returns one in-flight entry's task to its queue, due now.
func delayReturn(ctx context.Context, rdb redis.UniversalClient, key, inFlight string, unit ScoreUnit, t Task, now time.Time) (string, error) {
	if unit == AutoUnit {
		var err error
		if unit, err = actQueueUnit(ctx, rdb, key, now); err != nil {
			return "", err
		}
	}
	n, err := dqReturn.Run(ctx, rdb, []string{key, inFlight}, t.Member, unit.score(now)).Int64()
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
	return fmt.Sprintf("task %s is back in %s, due now", actQuote(task), actQuote(key)), nil
}

// actQueueUnit is the unit an AutoUnit queue's oldest score is a due time in; an empty queue takes
// the unit hourglass's own writer gives such a queue (milliseconds), as its reaper does.
func actQueueUnit(ctx context.Context, rdb redis.UniversalClient, key string, now time.Time) (ScoreUnit, error) {
	zs, err := rdb.ZRangeWithScores(ctx, key, 0, 0).Result()
	switch {
	case err != nil:
		return AutoUnit, actFail(rdb, "ZRANGE", key, err)
	case len(zs) == 0:
		return AutoUnit.writeUnit(), nil
	}
	u, ok := GuessUnit(zs[0].Score, now)
	if !ok {
		return AutoUnit, fmt.Errorf("store: the scores of %s are not due times in any unit (s, ms, us, bullmq) within ten years of now (%s): set score_unit",
			actQuote(key), fmtScore(zs[0].Score))
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
		return fmt.Sprintf("task %s deleted from %s", actName(t), actQuote(from)), nil
	case a == ActionReturn && sec == SectionInFlight:
		n, err := lqReturn.Run(ctx, rdb, []string{key, processing}, t.Member).Int64()
		switch {
		case err != nil:
			return "", actFail(rdb, "list queue return script (EVALSHA)", processing, err)
		case n == 0:
			return "", actGone("return", t, processing)
		}
		return fmt.Sprintf("task %s is back in %s, next to be taken", actName(t), actQuote(key)), nil
	case a == ActionRunNow:
		return "", actRefusal("a list queue", sec, a, "a list keeps no due time: its tasks are taken in order")
	}
	return "", actRefusal("a list queue", sec, a, "only a processing task can be returned")
}

// Why ReleaseStaleLock left a lock as it is.
var (
	// ErrLockGone: the key is gone (released or expired) since it was read.
	ErrLockGone = errors.New("the lock is gone")
	// ErrLockHasTTL: the lock has a TTL now, so it expires by itself (and its holder may be alive).
	ErrLockHasTTL = errors.New("the lock has a TTL now")
	// ErrLockNewHolder: another holder has the lock now.
	ErrLockNewHolder = errors.New("another holder has the lock now")
)

// ReleaseStaleLock deletes the lock at key only if it is still held by holder and has no TTL
// (PTTL -1: a lock whose TTL is gone is held until someone deletes it), in one script. true: it
// was released. false comes with an error: ErrLockGone, ErrLockHasTTL or ErrLockNewHolder
// (errors.Is) when the lock was left because it changed since it was read, or a *CommandError
// when Redis refused.
func ReleaseStaleLock(ctx context.Context, rdb redis.UniversalClient, key, holder string) (bool, error) {
	reply, err := lockReleaseStale.Run(ctx, rdb, []string{key}, holder).Text()
	if err != nil {
		return false, actFail(rdb, "lock release script (EVALSHA)", key, err)
	}
	why := map[string]error{"gone": ErrLockGone, "has_ttl": ErrLockHasTTL, "other_holder": ErrLockNewHolder}[reply]
	switch {
	case reply == "released":
		return true, nil
	case why != nil:
		return false, fmt.Errorf("store: lock %s left as it is: %w", actQuote(key), why)
	}
	return false, actFail(rdb, "lock release script (EVALSHA)", key, fmt.Errorf("unexpected reply %q", reply))
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
	return fmt.Sprintf("task %s deleted from %s", actName(t), actQuote(key)), nil
}

// actFail names the command, the key and the cause of a failed action.
func actFail(rdb redis.UniversalClient, command, key string, err error) error {
	return &CommandError{Command: command, Key: key, User: UserOf(rdb), Err: err}
}

// actGone is ErrTaskGone for task t, which was not in key.
func actGone(verb string, t Task, key string) error {
	return fmt.Errorf("store: %s %s: not in %s: %w", verb, actName(t), actQuote(key), ErrTaskGone)
}

// actRefusal is ErrNotSupported for action a on a section, with why.
func actRefusal(what string, sec TaskSection, a TaskAction, why string) error {
	return fmt.Errorf("store: %s on a task of %s's %s section: %s: %w", a, what, sec, why, ErrNotSupported)
}

// actName names task t in an action's line: its job id, or its entry.
func actName(t Task) string {
	if t.ID != "" {
		return actQuote(t.ID)
	}
	return actQuote(t.Member)
}

// actQuoteMax is the most of a name (a key, a task) an action's line quotes.
const actQuoteMax = 64

// actQuote quotes s for an action's line, Go-escaped (control and format characters and bytes
// that are not UTF-8 written as escapes), cut to actQuoteMax bytes with its length said.
func actQuote(s string) string {
	if len(s) <= actQuoteMax {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:actQuoteMax]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
