package jobs

// Sidekiq's layout (6.x, as its client, its processes and Sidekiq::Stats use it). Every key is
// under "<namespace>:" when the app uses redis-namespace (Prefix), and bare otherwise:
//
//	queues                    set     the queue names (Client.push SADDs the queue's name)
//	queue:<name>              list    jobs waiting: LPUSHed by the client, BRPOPed by a process
//	schedule                  zset    jobs due later, scored by due time in float seconds; a
//	                                  process's poller moves the due ones to their queue
//	retry                     zset    failed jobs to run again, scored by retry time (float s)
//	dead                      zset    jobs failed for good, scored by when they died (float s)
//	processes                 set     identities ("<host>:<pid>:<12 hex>") of running processes
//	<identity>                hash    a process's heartbeat (every 5 s, expires in 60 s): busy
//	                                  (jobs running), beat, info (JSON), quiet, rss, rtt_us
//	<identity>:workers        hash    thread id -> JSON {queue, payload, run_at} of a running job
//	<identity>-signals        list    signals sent to the process from the Web UI
//	stat:processed, stat:failed      string counters since the beginning, and
//	stat:<processed|failed>:<date>   the same per UTC day
//
// The process identities in "processes" are not namespaced (they are members, not keys); their
// hashes are. Which number is which, as Sidekiq::Stats names them:
//
//	enqueued        sum of LLEN queue:<q> over the queues set      -> Waiting (shared)
//	<queue> size    LLEN queue:<name>                             -> Waiting (the queue's)
//	scheduled_size  ZCARD schedule                                -> Scheduled (shared)
//	retry_size      ZCARD retry                                   -> Retry (shared)
//	dead_size       ZCARD dead                                    -> Dead (shared)
//	workers_size    sum of HGET <identity> busy over processes    -> Active (shared)
//	processes_size  SCARD processes (stale ones too, as Stats counts them)
//	processed, failed  the stat: counters (counters, not kept jobs: Completed is Absent)
//
// The schedule, retry and dead sets hold the jobs of all queues together (each member's JSON
// names its queue, but counting by queue would read every job), and busy is kept per process,
// not per queue: a queue's own stats have only Waiting, and the rest is Absent there and in the
// Shared stats instead. Sidekiq (without Pro) cannot pause a queue.

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sidekiq is the layout of Sidekiq's keys (sidekiq.go).
const Sidekiq Layout = "sidekiq"

type sidekiqJobs struct {
	ns string
	// deadMax and deadTimeout bound the dead set a kill trims (Source); 0: Sidekiq's defaults.
	deadMax     int64
	deadTimeout time.Duration
}

// key is a Sidekiq key as redis-namespace spells it.
func (j sidekiqJobs) key(k string) string {
	if j.ns == "" {
		return k
	}
	return j.ns + ":" + k
}

// sidekiqProcess matches a process identity and the keys named after it; the identity is
// "<hostname>:<pid>:<SecureRandom.hex(6)>".
var sidekiqProcess = regexp.MustCompile(`^[^:]+:[0-9]+:[0-9a-f]{12}(:workers|-signals)?$`)

// sidekiqShared are the keys that belong to no one queue.
var sidekiqShared = map[string]bool{"schedule": true, "retry": true, "dead": true, "processes": true}

func (j sidekiqJobs) classify(key string) (Key, bool) {
	k := key
	if j.ns != "" {
		var ok bool
		if k, ok = strings.CutPrefix(key, j.ns+":"); !ok {
			return Key{}, false
		}
	}
	switch {
	case k == "queues":
		return Key{Registry: true}, true
	case strings.HasPrefix(k, "queue:") && len(k) > len("queue:"):
		return Key{Queue: k[len("queue:"):]}, true
	case sidekiqShared[k], k == "stat:processed", k == "stat:failed",
		strings.HasPrefix(k, "stat:processed:"), strings.HasPrefix(k, "stat:failed:"),
		strings.Count(k, ":") >= 2 && sidekiqProcess.MatchString(k): // the count spares most keys the regexp
		return Key{}, true
	}
	return Key{}, false
}

func (j sidekiqJobs) registries() []string { return []string{j.key("queues")} }

func (j sidekiqJobs) registered(ctx context.Context, rdb redis.Cmdable, registry string) ([]string, error) {
	return rdb.SMembers(ctx, registry).Result()
}

// stats is one queue's waiting jobs: the rest of what Sidekiq keeps is in shared.
func (j sidekiqJobs) stats(ctx context.Context, rdb redis.Cmdable, queue string, _ time.Time) (Stats, error) {
	n, err := rdb.LLen(ctx, j.key("queue:"+queue)).Result()
	if err != nil {
		return Stats{}, err
	}
	st := absentStats(map[string]int64{"size": n})
	st.Waiting = n
	return st, nil
}

// shared reads what Sidekiq::Stats reads, in two pipelines (the second needs the queue and
// process names the first found), and the schedule set as a delay queue.
func (j sidekiqJobs) shared(ctx context.Context, rdb redis.Cmdable, now time.Time) (*Stats, error) {
	pipe := rdb.Pipeline()
	processed, failed := pipe.Get(ctx, j.key("stat:processed")), pipe.Get(ctx, j.key("stat:failed"))
	scheduled, retry, dead := pipe.ZCard(ctx, j.key("schedule")), pipe.ZCard(ctx, j.key("retry")), pipe.ZCard(ctx, j.key("dead"))
	procs, queues := pipe.SMembers(ctx, j.key("processes")), pipe.SMembers(ctx, j.key("queues"))
	if err := execReads(ctx, pipe); err != nil {
		return nil, err
	}
	pipe = rdb.Pipeline()
	busy := make([]*redis.StringCmd, len(procs.Val()))
	for i, p := range procs.Val() {
		busy[i] = pipe.HGet(ctx, j.key(p), "busy")
	}
	lengths := make([]*redis.IntCmd, len(queues.Val()))
	for i, q := range queues.Val() {
		lengths[i] = pipe.LLen(ctx, j.key("queue:"+q))
	}
	if err := execReads(ctx, pipe); err != nil {
		return nil, err
	}
	var workers, enqueued int64
	for _, b := range busy {
		workers += atoiOrZero(b.Val()) // a process whose heartbeat expired counts 0, as in Ruby's to_i
	}
	for _, l := range lengths {
		enqueued += l.Val()
	}
	sched, err := scheduleOf(ctx, rdb, j.key("schedule"), now)
	if err != nil {
		return nil, err
	}
	st := &Stats{
		Waiting: enqueued, Active: workers, Scheduled: scheduled.Val(), Retry: retry.Val(), Dead: dead.Val(),
		Completed: Absent, Schedule: sched,
		States: map[string]int64{
			"enqueued": enqueued, "scheduled_size": scheduled.Val(), "retry_size": retry.Val(),
			"dead_size": dead.Val(), "processes_size": int64(len(procs.Val())), "workers_size": workers,
			"processed": atoiOrZero(processed.Val()), "failed": atoiOrZero(failed.Val()),
		},
	}
	return st, nil
}

func (j sidekiqJobs) notes() []string {
	return []string{
		"Sidekiq keeps its scheduled, retry and dead sets for all queues together: they are in the shared stats, not a queue's.",
		"Busy jobs are counted per process from its last heartbeat (every 5 s), for all queues together.",
		"processed and failed are counters; Sidekiq keeps no finished jobs.",
	}
}

// throughput reads Sidekiq's stat:processed and stat:failed, and stat:<stat>:<date> as
// Stats::History does, for all queues together.
func (j sidekiqJobs) throughput(ctx context.Context, rdb redis.Cmdable, _ []string, days int, now time.Time) ([]Throughput, error) {
	c := counters{
		processed: func(d string) string { return j.key(dated("stat:processed", d)) },
		failed:    func(d string) string { return j.key(dated("stat:failed", d)) },
	}
	ds := utcDays(now, days)
	pipe := rdb.Pipeline()
	cmds := c.queue(pipe, ctx, ds)
	if _, err := pipe.Exec(ctx); execErr(err) != nil {
		return nil, err
	}
	t := Throughput{}
	if err := c.read(&t, cmds, ds); err != nil && !unreadable(&t, err) {
		return nil, err
	}
	return []Throughput{t}, nil
}
