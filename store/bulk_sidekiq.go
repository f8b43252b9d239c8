package store

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sidekiq 6.4's kill bounds (Sidekiq.options: dead_max_jobs, dead_timeout_in_seconds).
const (
	sidekiqDeadMax     = 10_000
	sidekiqDeadTimeout = 180 * 24 * time.Hour
)

// killAll is RetrySet#kill_all: SortedEntry#kill on each job, which takes it out of the retry
// set and hands it unchanged to DeadSet#kill: ZADD dead <now> <job>, then the dead set trimmed,
// ZREMRANGEBYSCORE -inf <now - 6 months> and ZREMRANGEBYRANK 0 -10000. Sidekiq's death
// handlers, which run in the Ruby process that kills, are not called (as kill with
// notify_failure: false). Each chunk records first each job with its retry score, and the dead
// set's members the trim could take. Sidekiq 6.4's ScheduledSet has no kill_all.
func (j sidekiqJobs) killAll() bulkOp {
	retry, dead := j.key("retry"), j.key("dead")
	op := bulkOp{key: retry, keysEach: 2, spans: "Sidekiq's keys"}
	op.custom = func(ctx context.Context, rdb redis.UniversalClient, jobs []string, scores []float64, now time.Time) (*chunkCall, error) {
		at := float64(now.UnixMicro()) / 1e6
		cutoff := strconv.FormatFloat(at-sidekiqDeadTimeout.Seconds(), 'f', -1, 64)
		trimmed, err := setTrimmed(ctx, rdb, dead, cutoff, len(jobs), sidekiqDeadMax)
		if err != nil {
			return nil, err
		}
		c := &chunkCall{script: bulkApply, keys: []string{retry, dead}, members: len(jobs), undo: trimmed,
			args: []any{"to_set", strconv.FormatFloat(at, 'f', -1, 64), cutoff, sidekiqDeadMax}}
		for i, job := range jobs {
			c.args = append(c.args, job)
			c.undo = append(c.undo, UndoTask{Kind: UndoToSet, Key: retry, Member: job, Score: scores[i], List: dead})
		}
		return c, nil
	}
	return op
}
