package jobs

// asynq's layout (github.com/hibiken/asynq, checked against v0.26.0: store/jobs/asynq_test.go
// writes it with asynq's own Client, Server and Inspector).
//
// The prefix is always "asynq". A queue's keys are asynq:{<queue>}:<suffix>, the braces a hash
// tag that keeps a queue on one cluster slot:
//
//	pending          list  task ids ready to run (LLEN)
//	active           list  task ids a worker holds; lease zset: their lease expiry, in seconds
//	scheduled        zset  tasks due later, scored by due time in Unix seconds (integers): the
//	                       server's forwarder moves a due one to pending every few seconds, and
//	                       only for the queues that server serves, so Schedule.Due counts those
//	                       it has not moved yet
//	retry            zset  failed tasks to run again, scored by when (Unix seconds)
//	archived         zset  tasks failed for good (retries used up, or SkipRetry), by when archived
//	completed        zset  succeeded tasks kept for their Retention, scored by when they expire
//	groups           set   names of the queue's groups; g:<group> zset: tasks waiting to be
//	                       aggregated (the "aggregating" state); g:<group>:<set> zset and
//	                       aggregation_sets zset: sets an aggregator has taken
//	paused           string present while the queue is paused
//	t:<id>           hash  a task (msg, state, pending_since, ...)
//	unique:<type>:…  string the lock of a unique task
//	processed, failed            string totals since the queue began
//	processed:<date>, failed:<date> string the counts of one UTC day (yyyy-mm-dd)
//
// Outside any queue: asynq:queues (set, the registered queue names), asynq:servers,
// asynq:workers, asynq:schedulers (zsets) and asynq:servers:{…}, asynq:workers:{…},
// asynq:schedulers:{…}, asynq:scheduler_history:<entry>.
//
// States are what Inspector.GetQueueInfo counts, under asynq's task state names: pending, active
// (LLEN), scheduled, retry, archived, completed (ZCARD), and aggregating (the ZCARD of every group
// in groups); QueueInfo.Size is their sum. Waiting is pending, Dead archived; aggregating is in no
// normalized field: those tasks wait for their group, not for a worker. The processed and failed
// counters are not task states and are not read. A queue not in asynq:queues is Missing (asynq's
// inspector answers "queue not found" for it).

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Asynq is the layout of Asynq's keys (asynq.go).
const Asynq Layout = "asynq"

type asynqJobs struct{ prefix string }

// asynqStates are GetQueueInfo's task states kept in one key each, and their keys' suffixes.
var asynqStates = []struct {
	name string
	list bool
}{
	{"pending", true}, {"active", true}, {"scheduled", false}, {"retry", false}, {"archived", false}, {"completed", false},
}

// asynqQueueKeys are the suffixes of a queue's keys that stand alone; asynqQueueTags those
// followed by an id, a date or a group name.
var (
	asynqQueueKeys = map[string]bool{
		"pending": true, "active": true, "scheduled": true, "retry": true, "archived": true, "completed": true,
		"lease": true, "paused": true, "processed": true, "failed": true, "groups": true, "aggregation_sets": true,
	}
	asynqQueueTags = []string{"t:", "g:", "unique:", "processed:", "failed:"}
)

func (j asynqJobs) classify(key string) (Key, bool) {
	rest, ok := strings.CutPrefix(key, j.prefix+":")
	if !ok {
		return Key{}, false
	}
	if rest == "queues" {
		return Key{Registry: true}, true
	}
	if inner, ok := strings.CutPrefix(rest, "{"); ok {
		// A queue's name may hold "}:": try each, and keep the first that leaves a known suffix.
		for i := 0; ; {
			k := strings.Index(inner[i:], "}:")
			if k < 0 {
				return Key{}, false
			}
			i += k
			if asynqQueueSuffix(inner[i+2:]) {
				return Key{Queue: inner[:i]}, true
			}
			i++
		}
	}
	switch rest {
	case "servers", "workers", "schedulers":
		return Key{}, true
	}
	for _, p := range []string{"servers:{", "workers:{", "schedulers:{", "scheduler_history:"} {
		if strings.HasPrefix(rest, p) {
			return Key{}, true
		}
	}
	return Key{}, false
}

// queueKey is one of queue's keys, asynq:{<queue>}:<suffix>; a task's hash is queueKey(queue, "t:"+id).
func (j asynqJobs) queueKey(queue, suffix string) string {
	return j.prefix + ":{" + queue + "}:" + suffix
}

func asynqQueueSuffix(s string) bool {
	if asynqQueueKeys[s] {
		return true
	}
	for _, tag := range asynqQueueTags {
		if len(s) > len(tag) && strings.HasPrefix(s, tag) {
			return true
		}
	}
	return false
}

func (j asynqJobs) registries() []string { return []string{j.prefix + ":queues"} }

func (j asynqJobs) registered(ctx context.Context, rdb redis.Cmdable, registry string) ([]string, error) {
	names, err := rdb.SMembers(ctx, registry).Result()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

func (j asynqJobs) stats(ctx context.Context, rdb redis.Cmdable, queue string, now time.Time) (Stats, error) {
	key := func(suffix string) string { return j.queueKey(queue, suffix) }
	pipe := rdb.Pipeline()
	counts := make([]*redis.IntCmd, len(asynqStates))
	for i, s := range asynqStates {
		if s.list {
			counts[i] = pipe.LLen(ctx, key(s.name))
		} else {
			counts[i] = pipe.ZCard(ctx, key(s.name))
		}
	}
	paused := pipe.Exists(ctx, key("paused"))
	groups := pipe.SMembers(ctx, key("groups"))
	known := pipe.SIsMember(ctx, j.prefix+":queues", queue)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return Stats{}, err
	}
	st := Stats{States: make(map[string]int64, len(asynqStates)+1), Paused: paused.Val() > 0}
	for i, s := range asynqStates {
		st.States[s.name] = counts[i].Val()
	}
	aggregating, err := j.aggregating(ctx, rdb, queue, groups.Val())
	if err != nil {
		return st, err
	}
	st.States["aggregating"] = aggregating
	c := st.States
	st.Waiting, st.Active, st.Scheduled = c["pending"], c["active"], c["scheduled"]
	st.Retry, st.Dead, st.Completed = c["retry"], c["archived"], c["completed"]
	sched, err := store.DelayQueueStatsOf(ctx, rdb, key("scheduled"), "", store.Seconds, now)
	if err != nil {
		return st, err
	}
	// An empty scheduled set does not exist in Redis; the queue is missing when asynq does not
	// know it.
	sched.Missing = !known.Val()
	st.Schedule = &sched
	return st, nil
}

// aggregating counts the tasks waiting in the queue's groups, a second round trip only when the
// queue has groups (they are named in its groups set, read in the first).
func (j asynqJobs) aggregating(ctx context.Context, rdb redis.Cmdable, queue string, groups []string) (int64, error) {
	if len(groups) == 0 {
		return 0, nil
	}
	pipe := rdb.Pipeline()
	cards := make([]*redis.IntCmd, len(groups))
	for i, g := range groups {
		cards[i] = pipe.ZCard(ctx, j.queueKey(queue, "g:"+g))
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, err
	}
	var n int64
	for _, c := range cards {
		n += c.Val()
	}
	return n, nil
}

func (j asynqJobs) shared(context.Context, redis.Cmdable, time.Time) (*Stats, error) {
	return nil, nil
}

func (j asynqJobs) notes() []string { return nil }

// throughput reads asynq's asynq:{<q>}:processed and :failed, and their :<date> keys as
// Inspector.History does, per queue.
func (j asynqJobs) throughput(ctx context.Context, rdb redis.Cmdable, queues []string, days int, now time.Time) ([]Throughput, error) {
	ds := utcDays(now, days)
	pipe := rdb.Pipeline()
	all := make([][]*redis.StringCmd, len(queues))
	cs := make([]counters, len(queues))
	for i, q := range queues {
		cs[i] = counters{
			processed: func(d string) string { return j.queueKey(q, dated("processed", d)) },
			failed:    func(d string) string { return j.queueKey(q, dated("failed", d)) },
		}
		all[i] = cs[i].queue(pipe, ctx, ds)
	}
	if len(queues) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); execErr(err) != nil {
		return nil, err
	}
	out := make([]Throughput, len(queues))
	for i, q := range queues {
		out[i].Queue = q
		if err := cs[i].read(&out[i], all[i], ds); err != nil {
			if !unreadable(&out[i], err) {
				return nil, err
			}
		}
	}
	return out, nil
}
