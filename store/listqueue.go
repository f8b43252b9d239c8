package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ListQueue is a list of tasks with a processing list beside it, in the same hash slot. Pop moves a
// task to the processing list in one step (BLMOVE). So a worker that dies holding a task leaves it
// there to be seen and requeued; with a plain BRPOP it would be lost.
type ListQueue struct {
	s          *Store
	Key        string
	Processing string
}

// ListQueue returns the list queue at key.
func (s *Store) ListQueue(key string) *ListQueue {
	return &ListQueue{s: s, Key: key, Processing: ProcessingKey(key)}
}

// Push adds tasks at the head; Pop takes from the tail, so the queue is first in, first out.
func (q *ListQueue) Push(ctx context.Context, tasks ...string) error {
	if len(tasks) == 0 {
		return nil
	}
	vals := make([]any, len(tasks))
	for i, t := range tasks {
		vals[i] = t
	}
	if err := q.s.rdb.LPush(ctx, q.Key, vals...).Err(); err != nil {
		return fmt.Errorf("store: push %s: %w", q.Key, err)
	}
	return nil
}

// Pop waits up to timeout for a task and moves it to the processing list; ok is false when none
// came.
//
// Redis blocks in whole seconds' steps at best, so a timeout under a second does not block: it
// takes a task if one is there (LMOVE).
func (q *ListQueue) Pop(ctx context.Context, timeout time.Duration) (task string, ok bool, err error) {
	if timeout < time.Second {
		task, err = q.s.rdb.LMove(ctx, q.Key, q.Processing, "RIGHT", "LEFT").Result()
	} else {
		task, err = q.s.rdb.BLMove(ctx, q.Key, q.Processing, "RIGHT", "LEFT", timeout).Result()
	}
	switch {
	case err == redis.Nil:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("store: pop %s: %w", q.Key, err)
	}
	return task, true, nil
}

// Ack removes a finished task from the processing list.
func (q *ListQueue) Ack(ctx context.Context, task string) error {
	if err := q.s.rdb.LRem(ctx, q.Processing, 1, task).Err(); err != nil {
		return fmt.Errorf("store: ack on %s: %w", q.Key, err)
	}
	return nil
}

// ListQueueStats is what a list queue holds now.
type ListQueueStats struct {
	Length, Processing int64
	// Missing is set when the list does not exist: a configured queue that is not there is not an
	// empty, healthy queue.
	Missing bool
	// Latency is how long the oldest task has waited, from its payload's time (latency.go); -1
	// when it is not known, with LatencyNote saying why. ListQueueStatsOf does not read it
	// (-1): the queue's Stats and ListLatency do.
	Latency     time.Duration
	LatencyNote string
}

// ListQueueStatsOf reads a list queue's length and the tasks in its processing key, in one
// pipeline. processing is "" for none. It may be of any type: another library's may be a set or a
// hash. A processing key that is not a list costs a second round trip.
func ListQueueStatsOf(ctx context.Context, rdb redis.Cmdable, key, processing string) (ListQueueStats, error) {
	return listQueueStats(ctx, rdb, key, processing, -1)
}

// ListQueueStatsOfLength is ListQueueStatsOf for a list whose length the caller has read, such as a
// sweep's LLEN of the keys a pattern finds. It does not ask for the length again. Only the
// processing key is read, and a queue without one costs no read at all. An empty list does not
// exist, so a length of 0 is a missing queue.
func ListQueueStatsOfLength(ctx context.Context, rdb redis.Cmdable, key, processing string, length int64) (ListQueueStats, error) {
	return listQueueStats(ctx, rdb, key, processing, max(length, 0))
}

// listQueueStats reads the list queue; known is its length as the caller read it, or -1 to read
// it.
func listQueueStats(ctx context.Context, rdb redis.Cmdable, key, processing string, known int64) (ListQueueStats, error) {
	if known >= 0 {
		st := ListQueueStats{Length: known, Missing: known == 0, Latency: -1, LatencyNote: "not read"}
		if processing == "" {
			return st, nil
		}
		typ, err := rdb.Type(ctx, processing).Result()
		if err != nil {
			return st, fmt.Errorf("store: list queue %s: %w", key, err)
		}
		if st.Processing, err = CountOf(ctx, rdb, processing, typ); err != nil {
			return st, fmt.Errorf("store: processing %s: %w", processing, err)
		}
		return st, nil
	}
	pipe := rdb.Pipeline()
	exists, l := pipe.Exists(ctx, key), pipe.LLen(ctx, key)
	var typ *redis.StatusCmd
	if processing != "" {
		typ = pipe.Type(ctx, processing)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return ListQueueStats{}, fmt.Errorf("store: list queue %s: %w", key, err)
	}
	st := ListQueueStats{Length: l.Val(), Missing: exists.Val() == 0, Latency: -1, LatencyNote: "not read"}
	if typ != nil {
		n, err := CountOf(ctx, rdb, processing, typ.Val())
		if err != nil {
			return st, fmt.Errorf("store: processing %s: %w", processing, err)
		}
		st.Processing = n
	}
	return st, nil
}
