package jobs

// asynq's actions on one task, as its Inspector does them (v0.26: RunTask and DeleteTask, whose
// scripts hourglass's asynq_run.lua and asynq_delete.lua make the same moves with):
//
//	run a scheduled, retry or   RunTask: the id leaves its state's set, is LPUSHed onto pending,
//	  archived task now         and the task's hash says pending
//	delete a pending, scheduled, DeleteTask: the id leaves its list or set, the task's unique
//	  retry or archived task    lock is released when it is still the task's, the hash deleted
//
// Each first checks, as the Inspector does, that asynq knows the queue (asynq:queues), and then,
// in the script, that the task's hash still says the state the page showed: a task that ran,
// was forwarded or retried since is left as it is (ErrTaskGone).
//
// An active task is not deleted (asynq's DeleteTask refuses it: its worker is told to cancel it
// through Inspector.CancelProcessing, which is no write to the queue) and not returned (asynq's
// own recoverer moves a task whose lease expired to retry). A pending task is run already.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var (
	asynqRun    = luaScript("asynq_run")
	asynqDelete = luaScript("asynq_delete")
)

// asynqSections are the states asynq keeps a task in, by the section the task is listed in.
var asynqSections = map[TaskSection]string{
	SectionWaiting: "pending", SectionLater: "scheduled", SectionRetry: "retry", SectionDead: "archived", SectionInFlight: "active",
}

func (j asynqJobs) act(ctx context.Context, rdb redis.UniversalClient, queue string, sec TaskSection, t Task, a TaskAction, _ time.Time) (string, error) {
	state, ok := asynqSections[sec]
	switch {
	case !ok:
		return "", actRefusal("asynq", sec, a, "asynq keeps no such state")
	case sec == SectionInFlight:
		return "", actRefusal("asynq", sec, a, "asynq neither deletes nor returns an active task: Inspector.CancelProcessing tells its worker to cancel it, and a task whose lease expires goes to retry by itself")
	case a == ActionRunNow && sec == SectionWaiting:
		return "", actRefusal("asynq", sec, a, "the task is pending already: the next worker takes it")
	case a != ActionRunNow && a != ActionDelete:
		return "", actRefusal("asynq", sec, a, "asynq returns no task that is not active")
	}
	id := t.Member // the list's or set's entry: the task's id
	registry := j.prefix + ":queues"
	known, err := rdb.SIsMember(ctx, registry, queue).Result()
	switch {
	case err != nil:
		return "", actFail(rdb, "SISMEMBER", registry, err)
	case !known:
		return "", fmt.Errorf("store: asynq has no queue %s (not in %s), as its Inspector would answer", store.QuoteName(queue), store.QuoteName(registry))
	}
	key := func(suffix string) string { return j.prefix + ":{" + queue + "}:" + suffix }
	script, command, verb := asynqDelete, "asynq delete script (EVALSHA)", "delete"
	keys := []string{key("t:" + id), key(state)}
	if a == ActionRunNow {
		script, command, verb = asynqRun, "asynq run script (EVALSHA)", "run"
		keys = []string{key("t:" + id), key("pending"), key(state)}
	}
	reply, err := script.Run(ctx, rdb, keys, id, state).Text()
	switch reply {
	case "pending":
		return fmt.Sprintf("task %s of asynq queue %s is pending now (was %s)", store.QuoteName(id), store.QuoteName(queue), state), nil
	case "deleted":
		return fmt.Sprintf("task %s deleted from asynq queue %s (was %s)", store.QuoteName(id), store.QuoteName(queue), state), nil
	case "gone", "moved":
		return "", actGone(verb, t, key(state))
	case "not_in_set":
		return "", fmt.Errorf("store: %s asynq task %s: its hash says %s but %s does not hold it; left as it is",
			verb, store.QuoteName(id), state, store.QuoteName(key(state)))
	}
	if err == nil {
		err = fmt.Errorf("unexpected reply %q", reply)
	}
	return "", actFail(rdb, command, keys[0], err)
}
