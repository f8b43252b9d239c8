package jobs

// asynq's bulk actions (bulk.go), one queue's scheduled, retry or archived set at a time, each
// task as asynq's Inspector does it to a whole set (v0.26, internal/rdb/inspect.go), in chunks
// (asynq_bulk.lua):
//
//	run all        RunAllScheduledTasks, RunAllRetryTasks, RunAllArchivedTasks: the id LPUSHed
//	               onto pending, the hash's state pending
//	archive all    ArchiveAllScheduledTasks, ArchiveAllRetryTasks: the id into archived scored
//	               now (seconds), the hash's state archived, the archived set trimmed as asynq
//	               trims it (older than 90 days, beyond 10000 tasks)
//	delete all     DeleteAllScheduledTasks, DeleteAllRetryTasks, DeleteAllArchivedTasks: the
//	               unique lock deleted when it is still the task's, the hash deleted
//
// The tasks are taken in the set's order (ZRANGE), as the Inspector's scripts take them, so the
// pending list ends in the same order. The Inspector checks that asynq knows the queue
// (asynq:queues) first; so does each chunk. A task whose hash no longer says the set's state is
// left where it is, and counted. Each chunk records first
// the member with its score, and for a move the hash and both states (UndoToList, UndoToSet),
// for a delete the hash and the lock with their DUMP and expiry, and for an archive the members
// asynq's trim could take from the archived set. Every key is the queue's, hash-tagged
// ({<queue>}), so a chunk is atomic on a Redis Cluster too.
//
// The pending list is deleted or archived in bulk as a list (bulk_list.go: DeleteAllPendingTasks,
// ArchiveAllPendingTasks).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var asynqBulk = luaScript("asynq_bulk")

// asynq's archive bounds (internal/rdb: archivedExpirationInDays, maxArchiveSize).
const (
	asynqArchivedDays = 90
	asynqMaxArchive   = 10000
)

func (j asynqJobs) bulkOp(queue string, sec TaskSection, a TaskAction) (bulkOp, error) {
	state, ok := asynqSections[sec]
	switch {
	case sec == SectionWaiting && (a == ActionDelete || a == ActionArchive):
		return j.pendingOp(queue, a), nil
	case !ok || sec == SectionWaiting || sec == SectionInFlight:
		return bulkOp{}, bulkRefusal("asynq", sec, a, "hourglass acts in bulk on asynq's scheduled, retry and archived sets and deletes or archives all pending; a pending task is run already, and an active one is its worker's")
	case a == ActionArchive && state == "archived":
		return bulkOp{}, bulkRefusal("asynq", sec, a, "the tasks are archived already")
	case a != ActionRunNow && a != ActionDelete && a != ActionArchive:
		return bulkOp{}, bulkRefusal("asynq", sec, a, "asynq has no such action there")
	}
	op := bulkOp{key: j.queueKey(queue, state), keysEach: 3, what: "hash's state field", bySet: true}
	op.custom = func(ctx context.Context, rdb redis.UniversalClient, ids []string, scores []float64, now time.Time) (*chunkCall, error) {
		return j.bulkChunk(ctx, rdb, queue, state, a, ids, scores, now)
	}
	return op, nil
}

// pendingOp deletes or archives all of queue's pending list (bulk_list.go), each chunk after the
// check the Inspector makes that asynq knows the queue.
func (j asynqJobs) pendingOp(queue string, a TaskAction) bulkOp {
	l := &listOp{key: j.queueKey(queue, "pending"), keys: func(id string) []string { return []string{j.queueKey(queue, "t:"+id)} }}
	l.check = func(ctx context.Context, rdb redis.UniversalClient) error { return j.knows(ctx, rdb, queue) }
	if a == ActionArchive {
		l.archived = j.queueKey(queue, "archived")
	}
	return bulkOp{keysEach: 2, list: l}
}

// knows is nil when asynq knows queue (it is in asynq:queues), as its Inspector checks first.
func (j asynqJobs) knows(ctx context.Context, rdb redis.UniversalClient, queue string) error {
	registry := j.prefix + ":queues"
	known, err := rdb.SIsMember(ctx, registry, queue).Result()
	switch {
	case err != nil:
		return actFail(rdb, "SISMEMBER", registry, err)
	case !known:
		return fmt.Errorf("store: asynq has no queue %s (not in %s), as its Inspector would answer", store.QuoteName(queue), store.QuoteName(registry))
	}
	return nil
}

// bulkChunk builds one chunk's call to asynq_bulk.lua and what undoes it.
func (j asynqJobs) bulkChunk(ctx context.Context, rdb redis.UniversalClient, queue, state string, a TaskAction, ids []string, scores []float64, now time.Time) (*chunkCall, error) {
	if err := j.knows(ctx, rdb, queue); err != nil {
		return nil, err
	}
	var err error
	src := j.queueKey(queue, state)
	c := &chunkCall{script: asynqBulk, members: len(ids)}
	verb, dest, to, kind := "delete", src, "", UndoMember
	switch a {
	case ActionRunNow:
		verb, dest, to, kind = "run", j.queueKey(queue, "pending"), "pending", UndoToList
	case ActionArchive:
		verb, dest, to, kind = "archive", j.queueKey(queue, "archived"), "archived", UndoToSet
	}
	cutoff := now.AddDate(0, 0, -asynqArchivedDays).Unix()
	c.keys = []string{src, dest}
	c.args = []any{verb, state, now.Unix(), cutoff, asynqMaxArchive}
	hashes := make([]string, len(ids))
	for i, id := range ids {
		hashes[i] = j.queueKey(queue, "t:"+id)
		c.keys = append(c.keys, hashes[i])
		c.args = append(c.args, id)
	}
	switch a {
	case ActionArchive:
		if c.undo, err = setTrimmed(ctx, rdb, dest, strconv.FormatInt(cutoff, 10), len(ids), asynqMaxArchive); err != nil {
			return nil, err
		}
	case ActionDelete:
		if c.undo, err = asynqDumps(ctx, rdb, src, ids, hashes); err != nil {
			return nil, err
		}
	}
	for i, id := range ids {
		c.undo = append(c.undo, UndoTask{Kind: kind, Key: src, Member: id, Score: scores[i], List: dest, Hash: hashes[i], State: state, NewState: to})
	}
	return c, nil
}

// setTrimmed are the members of a set a trim after adding n could take (ZREMRANGEBYSCORE -inf
// cutoff, ZREMRANGEBYRANK 0 -largest: asynq's archive, Sidekiq's dead set), each recorded to be
// put back.
func setTrimmed(ctx context.Context, rdb redis.UniversalClient, archived string, cutoff string, n int, largest int64) ([]UndoTask, error) {
	// Read a page at a time (MaxTaskPage members, each read well under a millisecond): the old
	// members are as many as the library's bound lets the set hold.
	var old []redis.Z
	for offset := int64(0); ; offset += MaxTaskPage {
		page, err := rdb.ZRangeByScoreWithScores(ctx, archived, &redis.ZRangeBy{Min: "-inf", Max: cutoff, Offset: offset, Count: MaxTaskPage}).Result()
		if err != nil {
			return nil, actFail(rdb, "ZRANGEBYSCORE", archived, err)
		}
		if old = append(old, page...); len(page) < MaxTaskPage {
			break
		}
	}
	card, err := rdb.ZCard(ctx, archived).Result()
	if err != nil {
		return nil, actFail(rdb, "ZCARD", archived, err)
	}
	over := card + int64(n) - (largest - 1)
	for start := int64(0); start < over; start += MaxTaskPage {
		more, err := rdb.ZRangeWithScores(ctx, archived, start, min(start+MaxTaskPage, over)-1).Result()
		if err != nil {
			return nil, actFail(rdb, "ZRANGE", archived, err)
		}
		old = append(old, more...)
	}
	var out []UndoTask
	seen := map[string]bool{}
	for _, z := range old {
		m, _ := z.Member.(string)
		if !seen[m] {
			seen[m] = true
			out = append(out, UndoTask{Kind: UndoMember, Key: archived, Member: m, Score: z.Score})
		}
	}
	return out, nil
}

// asynqDumps are the DUMPs of the tasks' hashes and of their unique locks still held by them,
// which a delete removes.
func asynqDumps(ctx context.Context, rdb redis.UniversalClient, set string, ids, hashes []string) ([]UndoTask, error) {
	pipe := rdb.Pipeline()
	uniq := make([]*redis.StringCmd, len(hashes))
	for i, h := range hashes {
		uniq[i] = pipe.HGet(ctx, h, "unique_key")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, actFail(rdb, "HGET", hashes[0], err)
	}
	held := map[int]*redis.StringCmd{}
	for i, u := range uniq {
		if k := u.Val(); k != "" {
			held[i] = pipe.Get(ctx, k)
		}
	}
	if len(held) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, actFail(rdb, "GET", set, err)
		}
	}
	keys := slices.Clone(hashes)
	for i, g := range held {
		if g.Val() == ids[i] {
			keys = append(keys, uniq[i].Val())
		}
	}
	dumps, err := dumpUndoKeys(ctx, rdb, set, keys)
	if err != nil {
		return nil, err
	}
	var out []UndoTask
	for _, k := range keys {
		if d, ok := dumps[k]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}
