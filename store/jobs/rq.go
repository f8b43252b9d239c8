package jobs

// RQ's layout (1.x, as its Queue, its registries and its workers use it). RQ fixes its keys under
// "rq:" (a subclass of Queue, Job or a registry could change it; Prefix "" means "rq"):
//
//	rq:queues                 set     "rq:queue:<name>" of every queue
//	rq:queue:<name>           list    ids of the jobs waiting: RPUSHed, LPOPed by a worker
//	                                  (rq:queue:_compact:<uuid> is a list RQ compacts through)
//	rq:scheduled:<name>       zset    ids of jobs due later, scored by due time in whole seconds
//	                                  (RQ truncates the fraction); retries with an interval wait
//	                                  here too, no different from scheduled jobs
//	rq:deferred:<name>        zset    ids of jobs waiting for a job they depend on
//	rq:wip:<name>             zset    ids of jobs a worker runs (StartedJobRegistry), scored by
//	                                  when the worker's claim expires (seconds)
//	rq:finished:<name>        zset    ids of finished jobs, scored by when their result expires
//	rq:failed:<name>          zset    ids of failed jobs, scored by when the failure expires
//	rq:canceled:<name>        zset    ids of canceled jobs
//	rq:clean_registries:<name>, rq:scheduler-lock:<name>   strings: locks of a queue's upkeep
//	rq:job:<id>               hash    the job (function, args, status, origin queue, ...), with
//	rq:job:<id>:dependents, rq:job::<id>:dependencies sets and rq:results:<id> (a stream)
//	rq:workers                set     keys of the live workers; rq:workers:<name> those of a queue
//	rq:worker:<name>          hash    a worker (its queues, current job, last heartbeat)
//	rq:suspended              string  set while `rq suspend` holds every worker
//
// Which number is which (RQ's own names in States):
//
//	queued     LLEN rq:queue:<name> (Queue.count)                         -> Waiting
//	started    StartedJobRegistry.count                                   -> Active
//	scheduled  ScheduledJobRegistry.count (ZCARD)                         -> Scheduled, Schedule
//	deferred   DeferredJobRegistry.count (ZCARD)                          -> Scheduled as well
//	failed     FailedJobRegistry.count                                    -> Dead
//	finished   FinishedJobRegistry.count                                  -> Completed
//	canceled   CanceledJobRegistry.count (ZCARD)
//
// The started, finished and failed registries' count first cleans up the entries expired by
// then (score from 0 to now, in whole seconds) — and a started job's expiry moves it to failed
// or back to its queue. hourglass writes nothing: it counts what count would give, ZCARD less
// ZCOUNT 0..now, and leaves the moving to RQ. Retry is Absent: a retry waits in the queue or the
// scheduled registry like any job. RQ cannot pause one queue; the workers and rq:suspended (all
// workers paused) are in the Shared stats.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RQ is the layout of RQ's keys (rq.go).
const RQ Layout = "rq"

type rqJobs struct{ prefix string }

func (j rqJobs) key(parts ...string) string { return j.prefix + ":" + strings.Join(parts, ":") }

// rqQueueKeys are the kinds of key RQ names after a queue, "<prefix>:<kind>:<queue>".
var rqQueueKeys = []string{"queue", "scheduled", "deferred", "wip", "finished", "failed", "canceled",
	"registry", "clean_registries", "scheduler-lock", "workers"}

// rqOtherKeys are RQ's keys of no one queue: exact names, and prefixes ending in ":".
var rqOtherKeys = []string{"workers", "suspended", "job:", "results:", "worker:", "scheduler:"}

func (j rqJobs) classify(key string) (Key, bool) {
	k, ok := strings.CutPrefix(key, j.prefix+":")
	if !ok {
		return Key{}, false
	}
	if k == "queues" {
		return Key{Registry: true}, true
	}
	for _, other := range rqOtherKeys {
		if k == other || strings.HasSuffix(other, ":") && strings.HasPrefix(k, other) {
			return Key{}, true
		}
	}
	for _, kind := range rqQueueKeys {
		if q, ok := strings.CutPrefix(k, kind+":"); ok && q != "" {
			if kind == "queue" && strings.HasPrefix(q, "_compact:") {
				return Key{}, true // a list RQ compacts a queue through, for a moment
			}
			return Key{Queue: q}, true
		}
	}
	return Key{}, false
}

func (j rqJobs) registries() []string { return []string{j.key("queues")} }

// registered names the queues of rq:queues, whose members are the queues' keys.
func (j rqJobs) registered(ctx context.Context, rdb redis.Cmdable, registry string) ([]string, error) {
	keys, err := rdb.SMembers(ctx, registry).Result()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		if q, ok := strings.CutPrefix(k, j.key("queue", "")); ok && q != "" {
			names = append(names, q)
		}
	}
	return names, nil
}

// rqExpiring are the registries whose count cleans up expired entries first.
var rqExpiring = []string{"started", "finished", "failed"}

func (j rqJobs) stats(ctx context.Context, rdb redis.Cmdable, queue string, now time.Time) (Stats, error) {
	keyOf := map[string]string{
		"started": j.key("wip", queue), "finished": j.key("finished", queue), "failed": j.key("failed", queue),
		"scheduled": j.key("scheduled", queue), "deferred": j.key("deferred", queue), "canceled": j.key("canceled", queue),
	}
	// RQ's current_timestamp(): whole seconds, and its cleanup takes the score now itself.
	expiredBy := strconv.FormatInt(now.Unix(), 10)
	pipe := rdb.Pipeline()
	queued := pipe.LLen(ctx, j.key("queue", queue))
	cards := map[string]*redis.IntCmd{}
	for state, k := range keyOf {
		cards[state] = pipe.ZCard(ctx, k)
	}
	expired := map[string]*redis.IntCmd{}
	for _, state := range rqExpiring {
		expired[state] = pipe.ZCount(ctx, keyOf[state], "0", expiredBy)
	}
	if err := execReads(ctx, pipe); err != nil {
		return Stats{}, err
	}
	states := map[string]int64{"queued": queued.Val()}
	for state, c := range cards {
		states[state] = c.Val()
		if e := expired[state]; e != nil {
			states[state] -= e.Val()
		}
	}
	sched, err := scheduleOf(ctx, rdb, keyOf["scheduled"], now)
	if err != nil {
		return Stats{}, err
	}
	return Stats{
		Waiting: states["queued"], Active: states["started"], Scheduled: states["scheduled"] + states["deferred"],
		Retry: Absent, Dead: states["failed"], Completed: states["finished"], Schedule: sched, States: states,
	}, nil
}

// shared is RQ's workers and whether they are suspended; its jobs are all kept by queue.
func (j rqJobs) shared(ctx context.Context, rdb redis.Cmdable, _ time.Time) (*Stats, error) {
	pipe := rdb.Pipeline()
	workers := pipe.SCard(ctx, j.key("workers"))
	suspended := pipe.Exists(ctx, j.key("suspended"))
	if err := execReads(ctx, pipe); err != nil {
		return nil, err
	}
	st := absentStats(map[string]int64{"workers": workers.Val()})
	st.Paused = suspended.Val() > 0
	return &st, nil
}

func (j rqJobs) notes() []string {
	return []string{
		"RQ's started, finished and failed counts drop the entries expired by now, as RQ's own count does before it counts; hourglass does not move them (RQ moves an expired started job to failed or back to its queue when it next cleans up).",
		"RQ schedules to the whole second, and a retry with an interval waits among the scheduled jobs: Retry is not kept apart.",
		"Scheduled counts the deferred jobs too (waiting for a job they depend on); the schedule's depth is the scheduled ones alone.",
	}
}

// throughput sums RQ's live workers' successful_job_count and failed_job_count, for all queues
// together: RQ keeps no other count of the jobs it ran.
func (j rqJobs) throughput(ctx context.Context, rdb redis.Cmdable, _ []string, _ int, _ time.Time) ([]Throughput, error) {
	t := Throughput{}
	var cursor uint64
	for {
		names, next, err := rdb.SScan(ctx, j.key("workers"), cursor, "", 200).Result()
		if err != nil {
			return nil, err
		}
		pipe := rdb.Pipeline()
		cmds := make([]*redis.SliceCmd, len(names))
		for i, n := range names {
			cmds[i] = pipe.HMGet(ctx, n, "successful_job_count", "failed_job_count")
		}
		if len(names) > 0 {
			if _, err := pipe.Exec(ctx); execErr(err) != nil {
				return nil, err
			}
		}
		for i, c := range cmds {
			if err := cmdKeyError(names[i], c.Err()); err != nil {
				return nil, err
			}
			v := c.Val()
			ok, fail := hashCount(v[0]), hashCount(v[1])
			t.Processed += ok + fail
			t.Failed += fail
		}
		if cursor = next; cursor == 0 {
			return []Throughput{t}, nil
		}
	}
}
