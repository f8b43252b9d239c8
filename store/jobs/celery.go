package jobs

// Celery's layout on Redis is kombu's redis transport (kombu 5.x, the one Celery 5 uses). Every
// key is under kombu's global_keyprefix (the broker transport option; Prefix, "" by default),
// written straight before the key's name with no separator of its own:
//
//	_kombu.binding.<exchange>  set     one member per queue bound to the exchange:
//	                                   "<routing key>\x06\x16<pattern>\x06\x16<queue>"
//	<queue>                    list    the queue's messages of priority 0: LPUSHed by a producer,
//	                                   BRPOPed by a worker
//	<queue>\x06\x16<n>         list    those of priority step n (steps 0, 3, 6, 9 by default, the
//	                                   priority_steps option): a message of priority p (0..9)
//	                                   goes to the largest step <= p
//	unacked                    hash    delivery tag -> JSON [message, exchange, routing key] of a
//	                                   message a worker took and has not acknowledged
//	unacked_index              zset    delivery tag -> when it was taken (float seconds); a worker
//	                                   puts back the ones older than visibility_timeout (1 h)
//	unacked_mutex              string  the lock of that putting back
//
// Celery's own exchanges celeryev (events) and celery.pidbox (remote control) are fanout: their
// bindings name queues that receive over PUBLISH and never have a list, and the reply queues
// "<id>.reply.celery.pidbox" are short-lived; none of them is a task queue. A result backend on
// Redis keeps "celery-task-meta-<id>", "celery-taskset-meta-<id>" and "chord-unlock-<id>"
// (without the broker's prefix).
//
// Which number is which: a queue's Waiting is the sum of its lists, what kombu's message_count
// (queue_declare) reports, read for every step 0..9 so that any priority_steps is covered. Active
// is HLEN unacked, for all queues together: a message there names its exchange and routing key,
// not its queue, and counting by queue would read every message. The rest is Absent: Celery
// keeps ETA and countdown tasks in a worker's memory (in unacked while it holds them), retries
// are re-sent with a countdown, and finished tasks are only in a result backend, by task id. A
// queue's list is named after the queue alone, so Classify knows a queue's list by its name only
// for the default queue "celery" and for the priority lists; the others are found through the
// bindings. kombu's separator (the sep option) is read as its default, "\x06\x16".

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Celery is the layout of Celery's keys (celery.go).
const Celery Layout = "celery"

type celeryJobs struct{ prefix string }

const (
	kombuSep      = "\x06\x16"
	kombuBinding  = "_kombu.binding."
	celeryDefault = "celery" // the queue, exchange and routing key Celery sends to unless told
)

// celeryNotTaskExchanges are Celery's exchanges whose queues hold no tasks in Redis lists.
var celeryNotTaskExchanges = map[string]bool{"celeryev": true, "celery.pidbox": true, "reply.celery.pidbox": true}

// celeryResultKeys start the keys of Celery's Redis result backend.
var celeryResultKeys = []string{"celery-task-meta-", "celery-taskset-meta-", "chord-unlock-"}

func (j celeryJobs) classify(key string) (Key, bool) {
	for _, p := range celeryResultKeys {
		if strings.HasPrefix(key, p) {
			return Key{}, true
		}
	}
	k, ok := strings.CutPrefix(key, j.prefix)
	if !ok {
		return Key{}, false
	}
	if ex, ok := strings.CutPrefix(k, kombuBinding); ok && ex != "" {
		return Key{Registry: !celeryNotTaskExchanges[ex]}, true
	}
	switch {
	case k == "unacked", k == "unacked_index", k == "unacked_mutex", strings.HasSuffix(k, ".reply.celery.pidbox"):
		return Key{}, true
	case k == celeryDefault:
		return Key{Queue: celeryDefault}, true
	}
	if q, step, ok := strings.Cut(k, kombuSep); ok && q != "" && len(step) == 1 && step[0] >= '1' && step[0] <= '9' {
		return Key{Queue: q}, true
	}
	return Key{}, false
}

// registries is the default exchange's bindings, where the default queue is; the others are
// found by the sweep.
func (j celeryJobs) registries() []string { return []string{j.prefix + kombuBinding + celeryDefault} }

// registered names the queues bound to an exchange, each once.
func (j celeryJobs) registered(ctx context.Context, rdb redis.Cmdable, registry string) ([]string, error) {
	members, err := rdb.SMembers(ctx, registry).Result()
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, m := range members {
		parts := strings.Split(m, kombuSep)
		if len(parts) != 3 || parts[2] == "" || seen[parts[2]] {
			continue
		}
		seen[parts[2]] = true
		names = append(names, parts[2])
	}
	return names, nil
}

// celeryListNames are a queue's list and its priority lists for every step kombu could use.
func (j celeryJobs) celeryListNames(queue string) []string {
	names := []string{j.prefix + queue}
	for n := 1; n <= 9; n++ {
		names = append(names, j.prefix+queue+kombuSep+strconv.Itoa(n))
	}
	return names
}

// unackedKey is the hash of the messages delivered and not acknowledged, of all queues;
// unackedIndexKey the sorted set of when each was delivered.
func (j celeryJobs) unackedKey() string      { return j.prefix + "unacked" }
func (j celeryJobs) unackedIndexKey() string { return j.prefix + "unacked_index" }

func (j celeryJobs) stats(ctx context.Context, rdb redis.Cmdable, queue string, _ time.Time) (Stats, error) {
	pipe := rdb.Pipeline()
	var lens []*redis.IntCmd
	for _, k := range j.celeryListNames(queue) {
		lens = append(lens, pipe.LLen(ctx, k))
	}
	if err := execReads(ctx, pipe); err != nil {
		return Stats{}, err
	}
	var n int64
	for _, l := range lens {
		n += l.Val()
	}
	st := absentStats(map[string]int64{"message_count": n})
	st.Waiting = n
	return st, nil
}

// shared is the messages delivered and not acknowledged, of all queues together.
func (j celeryJobs) shared(ctx context.Context, rdb redis.Cmdable, _ time.Time) (*Stats, error) {
	pipe := rdb.Pipeline()
	unacked := pipe.HLen(ctx, j.unackedKey())
	index := pipe.ZCard(ctx, j.unackedIndexKey())
	if err := execReads(ctx, pipe); err != nil {
		return nil, err
	}
	return &Stats{
		Waiting: Absent, Active: unacked.Val(), Scheduled: Absent, Retry: Absent, Dead: Absent, Completed: Absent,
		States: map[string]int64{"unacked": unacked.Val(), "unacked_index": index.Val()},
	}, nil
}

// queueKeys are the priority lists classify claims of queue: its list named after it.
func (j celeryJobs) queueKeys(queue string) []string { return j.celeryListNames(queue)[:1] }

// namedQueue is the queue named as the task exchange whose bindings registry holds under j's
// prefix: Celery declares its queues so.
func (j celeryJobs) namedQueue(registry string) (string, bool) {
	p, ex, task, ok := CeleryBindingOf(registry)
	return ex, ok && task && p == j.prefix
}

func (j celeryJobs) notes() []string {
	return []string{
		"Celery keeps ETA and countdown tasks (and retries, re-sent with a countdown) in the worker's memory, not in Redis: a worker takes such a task from its queue at once and holds it until it is due, so it shows as waiting until a worker takes it and then as active (unacked), never as scheduled.",
		"Active is the unacked messages of all queues together (delivered to a worker and not acknowledged: prefetched and ETA tasks, and running ones only with task_acks_late): kombu records each with its exchange and routing key, not its queue.",
		"Celery keeps finished tasks only in a result backend (celery-task-meta-<id>), not by queue.",
	}
}
