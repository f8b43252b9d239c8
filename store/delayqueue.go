package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	dqClaim = luaScript("dq_claim")
	dqReap  = luaScript("dq_reap")
)

// DelayQueue is a sorted set of tasks scored by due time, with an in-flight set beside it (same
// hash slot) holding claimed tasks until they are acknowledged. A task is delivered at least
// once: a worker that dies holding tasks loses none, since the reaper returns them after their
// visibility deadline, and an acknowledged task is gone for good.
type DelayQueue struct {
	s        *Store
	Key      string // the queue's sorted set
	InFlight string // the in-flight sorted set, score = visibility deadline in ms
	Unit     ScoreUnit
}

// DelayQueue returns the delay queue at key, scored in unit.
func (s *Store) DelayQueue(key string, unit ScoreUnit) *DelayQueue {
	return &DelayQueue{s: s, Key: key, InFlight: InFlightKey(key), Unit: unit.WriteUnit()}
}

// Enqueue adds tasks due at due (the server's now when zero). A task already queued takes the
// new due time: a task is its own identity, as in a plain ZADD-based queue.
func (q *DelayQueue) Enqueue(ctx context.Context, due time.Time, tasks ...string) error {
	if len(tasks) == 0 {
		return nil
	}
	if due.IsZero() {
		due = q.s.serverNow(ctx)
	}
	z := make([]redis.Z, len(tasks))
	for i, t := range tasks {
		z[i] = redis.Z{Score: q.Unit.Score(due), Member: t}
	}
	if err := q.s.rdb.ZAdd(ctx, q.Key, z...).Err(); err != nil {
		return fmt.Errorf("store: enqueue %s: %w", q.Key, err)
	}
	return nil
}

// Claim is a batch of tasks one worker took, with the id that acknowledges them.
type Claim struct {
	ID    string
	Tasks []string
}

// Claim takes up to n due tasks, oldest due first, into the in-flight set with a deadline
// visibility from now. Acknowledge them with Ack once done; a task not acknowledged by its
// deadline goes back to the queue when Reap runs, and its late Ack then does nothing.
func (q *DelayQueue) Claim(ctx context.Context, n int, visibility time.Duration) (Claim, error) {
	if n < 1 {
		return Claim{}, nil
	}
	now := q.s.serverNow(ctx)
	var id [8]byte
	_, _ = rand.Read(id[:])
	c := Claim{ID: hex.EncodeToString(id[:])}
	res, err := dqClaim.Run(ctx, q.s.rdb, []string{q.Key, q.InFlight},
		q.Unit.Bound(now), n, now.Add(visibility).UnixMilli(), c.ID).StringSlice()
	if err != nil {
		return Claim{}, fmt.Errorf("store: claim from %s: %w", q.Key, err)
	}
	c.Tasks = res
	return c, nil
}

// Ack removes finished tasks of claim c (all of them when none are named) from the in-flight set
// and returns how many were still there: a task whose deadline passed was reaped, and another
// worker may run it again.
func (q *DelayQueue) Ack(ctx context.Context, c Claim, tasks ...string) (int64, error) {
	if len(tasks) == 0 {
		tasks = c.Tasks
	}
	if len(tasks) == 0 {
		return 0, nil
	}
	members := make([]any, len(tasks))
	for i, t := range tasks {
		members[i] = c.ID + "|" + t
	}
	n, err := q.s.rdb.ZRem(ctx, q.InFlight, members...).Result()
	if err != nil {
		return 0, fmt.Errorf("store: ack on %s: %w", q.Key, err)
	}
	return n, nil
}

// Reap returns up to max in-flight tasks whose deadline has passed to the queue, due now, and
// says how many it returned.
func (q *DelayQueue) Reap(ctx context.Context, max int) (int64, error) {
	now := q.s.serverNow(ctx)
	n, err := dqReap.Run(ctx, q.s.rdb, []string{q.Key, q.InFlight}, now.UnixMilli(), max, q.Unit.Score(now)).Int64()
	if err != nil {
		return 0, fmt.Errorf("store: reap %s: %w", q.Key, err)
	}
	return n, nil
}
