package jobs

// BullMQ's layout (bullmq 5.x, checked against 5.81.5: store/testdata/node/bullmq.mjs writes it).
//
// Every key of a queue is <prefix>:<queue>:<suffix>; the prefix is "bull" unless the Queue was
// given another. BullMQ 5 refuses ':' in a queue name, older versions did not, so the queue is
// everything between the prefix and a suffix this reader knows.
//
//	wait              list  job ids ready to run (LLEN; a last element "0:<n>" is a v4 marker, not a job)
//	paused            list  the waiting job ids while the queue is paused (pause renames wait to paused)
//	active            list  job ids a worker holds; <id>:lock is the worker's lock on each
//	prioritized       zset  jobs ready to run by priority: score priority × 2^32 + a counter (pc)
//	delayed           zset  jobs due later: score due ms × 4096 + a 12-bit counter (the order of
//	                        jobs due in one ms). A due job stays here until a worker or promote
//	                        moves it to wait: Schedule.Due counts those.
//	completed, failed zset  finished jobs kept, scored by finish time in ms
//	waiting-children  zset  parents of a flow waiting for their children
//	meta              hash  "paused" field present while paused; opts.maxLenEvents, version
//	events            stream, id string (the last job id), pc string (priority counter),
//	marker            zset  (wakes blocked workers), stalled set, stalled-check string, limiter
//	                        string, repeat zset, metrics:completed|failed[:data], de:<id>
//	                        (deduplication), repeat:<key> (job schedulers): none counted
//	<id>              hash  a job (name, data, opts, timestamp, delay, ...); <id>:logs list,
//	                        <id>:lock string, <id>:dependencies set, <id>:processed hash,
//	                        <id>:failed hash, <id>:unsuccessful zset
//
// States are what Queue.getJobCounts() returns, under its names: waiting (LLEN wait), paused
// (LLEN paused), active (LLEN active), and ZCARD of prioritized, delayed, completed, failed and
// waiting-children. Waiting is waiting + paused + prioritized (all ready to run), Scheduled is
// delayed, Dead is failed; Retry is Absent: BullMQ retries a failed attempt by moving the job back
// to wait or, with backoff, to delayed, and keeps no set of its own for it. waiting-children is in
// no normalized field: those jobs are neither ready nor scheduled. Paused is HEXISTS meta paused,
// as BullMQ's isQueuePaused reads it. A queue without its meta hash is Missing: BullMQ writes meta
// with the first job, while an empty delayed set simply does not exist.

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// BullMQ is the layout of BullMQ's keys (bullmq.go).
const BullMQ Layout = "bullmq"

type bullmqJobs struct{ prefix string }

// bullmqStates are getJobCounts' states in its order, with the key each is counted from.
var bullmqStates = []struct {
	name, suffix string
	list         bool
}{
	{"active", "active", true},
	{"completed", "completed", false},
	{"delayed", "delayed", false},
	{"failed", "failed", false},
	{"paused", "paused", true},
	{"prioritized", "prioritized", false},
	{"waiting", "wait", true},
	{"waiting-children", "waiting-children", false},
}

// bullmqQueueKeys are the suffixes of a queue's own keys, longest first so that
// "metrics:failed" is not taken for a queue "…:metrics" and its "failed" set.
var bullmqQueueKeys = []string{
	"metrics:completed:data", "metrics:failed:data", "metrics:completed", "metrics:failed",
	"waiting-children", "stalled-check", "prioritized", "completed", "delayed", "limiter",
	"stalled", "active", "events", "failed", "marker", "paused", "repeat", "meta", "wait", "id", "pc",
}

// bullmqJobKeys are the keys a job keeps beside its hash, <id>:<suffix>.
var bullmqJobKeys = map[string]bool{
	"logs": true, "lock": true, "dependencies": true, "processed": true, "failed": true, "unsuccessful": true,
}

func (j bullmqJobs) classify(key string) (Key, bool) {
	rest, ok := strings.CutPrefix(key, j.prefix+":")
	if !ok {
		return Key{}, false
	}
	// A deduplication key or job scheduler carries an id of its own, which may hold ':'.
	for _, tag := range []string{":de:", ":repeat:"} {
		if i := strings.Index(rest, tag); i > 0 && len(rest) > i+len(tag) {
			return Key{Queue: rest[:i]}, true
		}
	}
	for _, s := range bullmqQueueKeys {
		q, ok := strings.CutSuffix(rest, ":"+s)
		if !ok || q == "" {
			continue
		}
		// <id>:failed is a parent job's failed children; an auto id is an integer, which a
		// custom id may not be, so a queue name ending in an integer segment is taken for a job,
		// and one ending in another is left for the sweep to tell (Key.Else).
		i := strings.LastIndexByte(q, ':')
		switch {
		case s == "failed" && i > 0 && isDigits(q[i+1:]):
			return Key{Queue: q[:i]}, true
		case s == "failed" && i > 0:
			return Key{Queue: q, Else: q[:i]}, true
		}
		return Key{Queue: q}, true
	}
	// A job's hash <queue>:<id>, or a key beside it, <queue>:<id>:<suffix>; ids hold no ':'.
	segs := strings.Split(rest, ":")
	if n := len(segs); n >= 3 && bullmqJobKeys[segs[n-1]] {
		segs = segs[:n-1]
	}
	if len(segs) < 2 || segs[len(segs)-1] == "" {
		return Key{}, false
	}
	q := strings.Join(segs[:len(segs)-1], ":")
	return Key{Queue: q}, q != ""
}

// queueKey is one of queue's keys, <prefix>:<queue>:<suffix>; a job's hash is queueKey(queue, id).
func (j bullmqJobs) queueKey(queue, suffix string) string {
	return j.prefix + ":" + queue + ":" + suffix
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// registries is empty: BullMQ registers its queues nowhere, the sweep finds them by their keys.
func (j bullmqJobs) registries() []string { return nil }

func (j bullmqJobs) registered(context.Context, redis.Cmdable, string) ([]string, error) {
	return nil, nil
}

func (j bullmqJobs) stats(ctx context.Context, rdb redis.Cmdable, queue string, now time.Time) (Stats, error) {
	key := func(suffix string) string { return j.queueKey(queue, suffix) }
	pipe := rdb.Pipeline()
	counts := make([]*redis.IntCmd, len(bullmqStates))
	lasts := make([]*redis.StringCmd, len(bullmqStates))
	for i, s := range bullmqStates {
		if s.list {
			counts[i] = pipe.LLen(ctx, key(s.suffix))
			lasts[i] = pipe.LIndex(ctx, key(s.suffix), -1)
		} else {
			counts[i] = pipe.ZCard(ctx, key(s.suffix))
		}
	}
	paused := pipe.HExists(ctx, key("meta"), "paused")
	meta := pipe.Exists(ctx, key("meta"))
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return Stats{}, err
	}
	st := Stats{States: make(map[string]int64, len(bullmqStates)), Retry: Absent, Paused: paused.Val()}
	for i, s := range bullmqStates {
		n := counts[i].Val()
		// BullMQ 4 pushed a "0:<delay>" marker onto wait (or paused); getCounts leaves it out
		// (and pops it, a write this reader does not make).
		if lasts[i] != nil && strings.HasPrefix(lasts[i].Val(), "0:") {
			n = max(n-1, 0)
		}
		st.States[s.name] = n
	}
	c := st.States
	st.Waiting = c["waiting"] + c["paused"] + c["prioritized"]
	st.Active, st.Scheduled, st.Dead, st.Completed = c["active"], c["delayed"], c["failed"], c["completed"]
	sched, err := store.DelayQueueStatsOf(ctx, rdb, key("delayed"), "", store.BullMQScore, now)
	if err != nil {
		return st, err
	}
	sched.Missing = meta.Val() == 0
	st.Schedule = &sched
	return st, nil
}

func (j bullmqJobs) shared(context.Context, redis.Cmdable, time.Time) (*Stats, error) {
	return nil, nil
}

func (j bullmqJobs) notes() []string { return nil }
