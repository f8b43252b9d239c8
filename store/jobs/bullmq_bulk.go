package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var bullmqBulkWait = luaScript("bullmq_bulk_wait")

// bulkOp: BullMQ 5's Queue.retryJobs({state: 'failed'}) of the dead section and
// Queue.promoteJobs() of the later one, each a chunk at a time as its moveJobsToWait script
// moves them (bullmq_bulk_wait.lua): in the set's order, to wait (or paused), a "waiting" event
// each, the marker when a worker may take them. Each chunk records first each job's id with its
// score and its hash's DUMP (UndoQueued): undone, a job still in the list leaves it and returns
// to its set with its hash as it was. The "waiting" events stay in the stream (its history), and
// so does the marker (a worker woken by it finds nothing and waits again). Delete all of the
// dead, later and waiting sections is Queue.clean (bullmq_bulk_clean.go).
func (j bullmqJobs) bulkOp(queue string, sec TaskSection, a TaskAction) (bulkOp, error) {
	state := map[TaskSection]string{SectionDead: "failed", SectionLater: "delayed"}[sec]
	switch {
	case a == ActionDelete && bullmqCleanStates[sec] != nil:
		return j.cleanAll(queue, sec), nil
	case a != ActionRunNow || state == "":
		return bulkOp{}, bulkRefusal("BullMQ", sec, a, "hourglass retries BullMQ's failed jobs, promotes its delayed ones and deletes its failed, delayed and waiting ones in bulk, and acts on the others one at a time")
	}
	key := func(s string) string { return j.queueKey(queue, s) }
	op := bulkOp{key: key(state), keysEach: 4, bySet: true}
	op.custom = func(ctx context.Context, rdb redis.UniversalClient, ids []string, scores []float64, _ time.Time) (*chunkCall, error) {
		version, err := rdb.HGet(ctx, key("meta"), "version").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, actFail(rdb, "HGET", key("meta"), err)
		}
		if !strings.HasPrefix(version, "bullmq:5.") {
			return nil, fmt.Errorf("store: BullMQ queue %s: %s: %w", store.QuoteName(queue), bullmqLeft["version"], ErrNotSupported)
		}
		target := key("wait")
		switch _, err := rdb.HGet(ctx, key("meta"), "paused").Result(); {
		case err == nil:
			target = key("paused")
		case !errors.Is(err, redis.Nil):
			return nil, actFail(rdb, "HGET", key("meta"), err)
		}
		hashes := make([]string, len(ids))
		for i, id := range ids {
			hashes[i] = key(id)
		}
		dumps, err := dumpUndoKeys(ctx, rdb, op.key, hashes)
		if err != nil {
			return nil, err
		}
		c := &chunkCall{script: bullmqBulkWait, members: len(ids), args: []any{state},
			keys: []string{key(state), key("events"), key("wait"), key("paused"), key("meta"), key("active"), key("marker")}}
		for i, id := range ids {
			d, ok := dumps[hashes[i]]
			if !ok {
				d = UndoTask{Kind: UndoKey, Key: hashes[i]}
			}
			c.keys = append(c.keys, hashes[i])
			c.args = append(c.args, id)
			c.undo = append(c.undo, UndoTask{Kind: UndoQueued, Key: key(state), Member: id, Score: scores[i], List: target, Keys: []UndoTask{d}})
		}
		return c, nil
	}
	if !hashTagged(j.queueKey(queue, "")) {
		op.spans = "BullMQ's keys without a hash-tagged prefix"
	}
	return op, nil
}

// hashTagged says whether every key starting with prefix is hashed by a tag in it (the first
// "{", and a "}" after it with something between), so they share one hash slot.
func hashTagged(prefix string) bool {
	open := strings.IndexByte(prefix, '{')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(prefix[open+1:], '}')
	return end > 0
}
