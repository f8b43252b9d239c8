package jobs

// RQ's actions on one job, as RQ 1.x itself does them, each in one script:
//
//	run a scheduled job now   what RQ's scheduler does with a due job (rq_enqueue.lua, schedule):
//	                          queue.enqueue_job, at the front when the job was enqueued so
//	run a failed job now      FailedJobRegistry.requeue, as `rq requeue` does (rq_enqueue.lua,
//	                          requeue): started_at, ended_at and exc_info cleared, enqueued at
//	                          the back
//	return a started job      StartedJobRegistry.requeue, the same requeue: the job is queued
//	                          again, and the worker running it is not told (RQ's own requeue
//	                          works so), so it may run twice
//	delete a job              Job.delete (rq_delete.lua): out of its queue and the registry of
//	                          its status, its hash and dependents and dependencies sets deleted
//
// A queued job is run already. RQ's deferred, finished and canceled registries are not sections
// the console lists. A job whose hash is gone is not enqueued (RQ cannot fetch it); deleting one
// only removes its id from where the page showed it.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var (
	rqEnqueue = luaScript("rq_enqueue")
	rqDelete  = luaScript("rq_delete")
)

// rqDefaultTimeout is the timeout, in seconds, RQ's Queue gives a job without one (its
// DEFAULT_JOB_TIMEOUT, when the queue was made without a default_timeout).
const rqDefaultTimeout = "180"

// rqSections are the keys of a queue's sections: the queue list and its registries.
var rqSections = map[TaskSection]string{SectionWaiting: "queue", SectionLater: "scheduled", SectionInFlight: "wip", SectionDead: "failed"}

// rqRegistries are the registries Job.delete removes a job from by its status, in rq_delete.lua's
// order.
var rqRegistries = []string{"finished", "deferred", "wip", "scheduled", "failed", "canceled"}

func (j rqJobs) act(ctx context.Context, rdb redis.UniversalClient, queue string, sec TaskSection, t Task, a TaskAction, now time.Time) (string, error) {
	kind, ok := rqSections[sec]
	if !ok {
		return "", actRefusal("RQ", sec, a, "RQ keeps no such registry")
	}
	id := t.Member // the list's or registry's entry: the job's id
	from := j.key(kind, queue)
	switch {
	case a == ActionDelete:
		return j.actDelete(ctx, rdb, queue, from, kind == "queue", id, t)
	case a == ActionRunNow && sec == SectionLater:
		return j.actEnqueue(ctx, rdb, queue, from, "schedule", id, t, now)
	case a == ActionRunNow && sec == SectionDead, a == ActionReturn && sec == SectionInFlight:
		return j.actEnqueue(ctx, rdb, queue, from, "requeue", id, t, now)
	case sec == SectionWaiting:
		return "", actRefusal("RQ", sec, a, "the job is queued already: the next worker takes it")
	}
	return "", actRefusal("RQ", sec, a, "RQ has no such action there (run a scheduled or failed job now, return a started one)")
}

// rqJobKeys are a job's hash, its dependents set and its dependencies set.
func (j rqJobs) rqJobKeys(id string) []string {
	return []string{j.key("job", id), j.key("job", id, "dependents"), j.prefix + ":job::" + id + ":dependencies"}
}

// actEnqueue puts a job of the registry at from on its queue, as the scheduler (mode "schedule")
// or a registry's requeue ("requeue") does (rq_enqueue.lua, for this one job).
func (j rqJobs) actEnqueue(ctx context.Context, rdb redis.UniversalClient, queue, from, mode, id string, t Task, now time.Time) (string, error) {
	queueKey := j.key("queue", queue)
	keys := append([]string{from, j.key("queues"), queueKey}, j.rqJobKeys(id)...)
	at := now.UTC().Format("2006-01-02T15:04:05.000000Z")
	flags, err := rqEnqueue.Run(ctx, rdb, keys, queueKey, queue, at, rqDefaultTimeout, mode, id).Int64Slice()
	switch {
	case err != nil:
		return "", actFail(rdb, "RQ enqueue script (EVALSHA)", from, err)
	case len(flags) != 1:
		return "", actFail(rdb, "RQ enqueue script (EVALSHA)", from, fmt.Errorf("unexpected reply %v", flags))
	case flags[0] == 0:
		return "", actGone("run", t, from)
	case flags[0] == 2:
		return "", fmt.Errorf("store: run RQ job %s: its hash %s is gone, and RQ enqueues no job it cannot fetch; left in %s",
			store.QuoteName(id), store.QuoteName(j.key("job", id)), store.QuoteName(from))
	}
	return fmt.Sprintf("job %s is queued in %s now", store.QuoteName(id), store.QuoteName(queueKey)), nil
}

// actDelete deletes a job as Job.delete does, checking it is still in the list or registry at from.
func (j rqJobs) actDelete(ctx context.Context, rdb redis.UniversalClient, queue, from string, isList bool, id string, t Task) (string, error) {
	keys := append([]string{from, j.key("queue", queue)}, j.rqJobKeys(id)...)
	for _, r := range rqRegistries {
		keys = append(keys, j.key(r, queue))
	}
	kind := "zset"
	if isList {
		kind = "list"
	}
	reply, err := rqDelete.Run(ctx, rdb, keys, id, kind).Text()
	switch {
	case err != nil:
		return "", actFail(rdb, "RQ delete script (EVALSHA)", from, err)
	case reply == "gone":
		return "", actGone("delete", t, from)
	case reply == "orphan":
		return fmt.Sprintf("job %s removed from %s (its hash was gone already)", store.QuoteName(id), store.QuoteName(from)), nil
	case reply != "deleted":
		return "", actFail(rdb, "RQ delete script (EVALSHA)", from, fmt.Errorf("unexpected reply %q", reply))
	}
	return fmt.Sprintf("job %s deleted (from %s)", store.QuoteName(id), store.QuoteName(from)), nil
}
