package jobs

// Pausing a queue: its tasks stay where they are and the library's workers take none of them
// until it is resumed. Only the libraries that offer it are paused, each as its own call does it:
//
//	BullMQ 5  Queue.pause() / resume(): its pause script, run as bullmq_pause.lua (wait renamed
//	          to paused and back, meta's "paused" field, the marker, a "paused" or "resumed"
//	          event); Queue.isPaused() reads HEXISTS meta paused
//	asynq     Inspector.PauseQueue / UnpauseQueue: SETNX asynq:{<queue>}:paused <Unix seconds>,
//	          and DEL of it; a server dequeues from no queue whose paused key exists
//
// Sidekiq pauses a queue only in its commercial editions (Sidekiq Pro's Queue#pause!), RQ and
// Celery keep no paused state for a queue, and hourglass's own queues are taken by the
// operator's code: each of those is refused with ErrNotSupported and the reason.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Pauser pauses and resumes one queue as its library does. PauserOf gives it for a Queue.
type Pauser interface {
	// Paused reads whether the queue is paused now, as the library's own call reads it.
	Paused(ctx context.Context, rdb redis.Cmdable) (bool, error)
	// Pause pauses the queue at now (the server's clock) and says so in one line; a queue
	// paused already is said to be.
	Pause(ctx context.Context, rdb redis.UniversalClient, now time.Time) (string, error)
	// Resume resumes the queue and says so in one line; a queue not paused is said to be.
	Resume(ctx context.Context, rdb redis.UniversalClient) (string, error)
}

var bullmqPause = luaScript("bullmq_pause")

// PauserOf is q's Pauser, or ErrNotSupported wrapped with why its library has no pause. It reads
// nothing.
func PauserOf(q Queue) (Pauser, error) {
	why := ""
	if jq, ok := q.(*jobQueue); ok {
		if p, ok := jq.r.(pauseReader); ok && !jq.shared {
			return p.pauser(jq.queue), nil
		}
		why = jq.lib.noPause
		if jq.shared && jq.lib.noPauseShared != "" {
			why = jq.lib.noPauseShared
		}
	}
	if why == "" {
		why = "hourglass's own queues are taken by your code, which keeps no paused state in Redis"
	}
	return nil, fmt.Errorf("store: no pause: %s: %w", why, ErrNotSupported)
}

// pauser is queue's pause, as Queue.pause() and resume() do it.
func (j bullmqJobs) pauser(queue string) Pauser { return bullmqPauser{j: j, queue: queue} }

// bullmqPauser is one BullMQ queue's pause.
type bullmqPauser struct {
	j     bullmqJobs
	queue string
}

func (p bullmqPauser) Paused(ctx context.Context, rdb redis.Cmdable) (bool, error) {
	key := p.j.queueKey(p.queue, "meta")
	paused, err := rdb.HExists(ctx, key, "paused").Result()
	if err != nil {
		return false, &store.CommandError{Command: "HEXISTS", Key: key, Err: err}
	}
	return paused, nil
}

func (p bullmqPauser) Pause(ctx context.Context, rdb redis.UniversalClient, _ time.Time) (string, error) {
	return p.run(ctx, rdb, true)
}

func (p bullmqPauser) Resume(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	return p.run(ctx, rdb, false)
}

// run is BullMQ's Scripts.pause(pause): its keys in its order.
func (p bullmqPauser) run(ctx context.Context, rdb redis.UniversalClient, pause bool) (string, error) {
	key := func(s string) string { return p.j.queueKey(p.queue, s) }
	src, dst, verb := "wait", "paused", "paused"
	if !pause {
		src, dst, verb = "paused", "wait", "resumed"
	}
	keys := []string{key(src), key(dst), key("meta"), key("prioritized"), key("events"), key("delayed"), key("marker")}
	reply, err := bullmqPause.Run(ctx, rdb, keys, verb).Text()
	name := fmt.Sprintf("BullMQ queue %s", store.QuoteName(p.queue))
	switch {
	case err != nil:
		return "", actFail(rdb, "BullMQ pause script (EVALSHA)", keys[2], err)
	case reply == "version":
		return "", fmt.Errorf("store: %s %s: %s: %w", verb, name, bullmqLeft["version"], ErrNotSupported)
	case reply == verb:
		return fmt.Sprintf("%s %s (as Queue.%s() does)", name, verb, map[bool]string{true: "pause", false: "resume"}[pause]), nil
	case reply == verb+":already":
		return fmt.Sprintf("%s was %s already (written again, as Queue.%s() does)", name, map[bool]string{true: "paused", false: "not paused"}[pause],
			map[bool]string{true: "pause", false: "resume"}[pause]), nil
	}
	return "", actFail(rdb, "BullMQ pause script (EVALSHA)", keys[2], fmt.Errorf("unexpected reply %q", reply))
}

// pauser is queue's pause, as Inspector.PauseQueue and UnpauseQueue do it.
func (j asynqJobs) pauser(queue string) Pauser { return asynqPauser{j: j, queue: queue} }

// asynqPauser is one asynq queue's pause.
type asynqPauser struct {
	j     asynqJobs
	queue string
}

func (p asynqPauser) Paused(ctx context.Context, rdb redis.Cmdable) (bool, error) {
	key := p.j.queueKey(p.queue, "paused")
	n, err := rdb.Exists(ctx, key).Result()
	if err != nil {
		return false, &store.CommandError{Command: "EXISTS", Key: key, Err: err}
	}
	return n > 0, nil
}

// Pause is asynq's RDB.Pause: SETNX of the paused key, its value the Unix time in seconds.
func (p asynqPauser) Pause(ctx context.Context, rdb redis.UniversalClient, now time.Time) (string, error) {
	key := p.j.queueKey(p.queue, "paused")
	if now.IsZero() {
		now = time.Now()
	}
	set, err := rdb.SetNX(ctx, key, now.Unix(), 0).Result()
	switch {
	case err != nil:
		return "", actFail(rdb, "SETNX", key, err)
	case !set:
		return fmt.Sprintf("asynq queue %s was paused already (%s exists)", store.QuoteName(p.queue), store.QuoteName(key)), nil
	}
	return fmt.Sprintf("asynq queue %s paused (as Inspector.PauseQueue does)", store.QuoteName(p.queue)), nil
}

// Resume is asynq's RDB.Unpause: DEL of the paused key.
func (p asynqPauser) Resume(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	key := p.j.queueKey(p.queue, "paused")
	n, err := rdb.Del(ctx, key).Result()
	switch {
	case err != nil:
		return "", actFail(rdb, "DEL", key, err)
	case n == 0:
		return fmt.Sprintf("asynq queue %s was not paused (no %s)", store.QuoteName(p.queue), store.QuoteName(key)), nil
	}
	return fmt.Sprintf("asynq queue %s resumed (as Inspector.UnpauseQueue does)", store.QuoteName(p.queue)), nil
}
