package jobs

// BullMQ 5's delete all: Queue.clean(0, 0, state) of the section's states (bullmq_bulk_clean.lua
// has the moves, checked against bullmq 5.81.5), a chunk at a time:
//
//	dead     Queue.clean(0, 0, 'failed'): the failed set in its order (oldest first)
//	later    Queue.clean(0, 0, 'delayed')
//	waiting  Queue.clean(0, 0, 'wait'), then 'paused', then 'prioritized', as the section lists
//	         them. Not Queue.drain(), which removes them in one unbounded script and
//	         adds no event: clean's "cleaned" event is how BullMQ tells its listeners.
//
// Each job goes with its keys (the hash and its logs, dependencies, processed, failed and
// unsuccessful keys, its deduplication keys when they name it), and each chunk adds one "cleaned"
// event a state, as each of BullMQ's calls does. Before a chunk runs, each job is recorded with
// its score (or, in a list, its place counted from the tail, where workers take jobs) and the
// DUMP and expiry of every key deleted with it (UndoCleaned): undone, a job whose keys are all
// still absent gets them back byte for byte, and its place. Left, as Queue.clean(0) leaves them:
// a job scheduler's next job, a job stamped after now (the clocks of BullMQ's client and Redis
// differ); and, unlike clean, the last pending child of a flow's parent, which BullMQ moves on
// with it (to its queue's wait, or deleted in the same queue): remove those with BullMQ's API. A
// pending child that is not the last leaves its parent's dependencies, as with BullMQ, and the set
// is recorded first (UndoDependency).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var bullmqBulkClean = luaScript("bullmq_bulk_clean")

// UndoCleaned is a BullMQ job cleaned: Key is its set or list (List is Key for a list), Member
// its id, Score its score in the set or its place from the list's tail, Keys its keys as they
// were (UndoKey each); put back only when none of its keys is there.
const UndoCleaned = "c"

// UndoDependency is a pending child's key (Member) taken out of its flow's parent's dependencies
// set (Key) by a clean: its DUMP and expiry as read before the chunk (Dump, ExpireAt), and its
// size then (Score). The member goes back, and once the set is that size again, the DUMP.
const UndoDependency = "p"

// bullmqCleanStates are the states a section's delete all cleans, in the section's order.
var bullmqCleanStates = map[TaskSection][]string{
	SectionDead: {"failed"}, SectionLater: {"delayed"}, SectionWaiting: {"wait", "paused", "prioritized"},
}

// bullmqCleanLeft says why the clean script left a job, by its code.
var bullmqCleanLeft = map[int64]string{
	3: bullmqLeft["scheduler"],
	4: "it is stamped after now by Redis' clock (its client's clock is ahead): Queue.clean(0) leaves it too",
	5: "it is the last pending child of a flow's parent, which BullMQ moves on or deletes with it: use Job.remove() or Queue.clean()",
	6: "its keys changed between the chunk's read and its script; left as it is",
	7: "it is a pending child of a flow's parent whose keys are in another hash slot: use Job.remove() or Queue.clean()",
}

// bullmqJobSuffixes are the keys removeJob deletes with a job's hash.
var bullmqJobSuffixes = []string{"", ":logs", ":dependencies", ":processed", ":failed", ":unsuccessful"}

func (j bullmqJobs) cleanAll(queue string, sec TaskSection) bulkOp {
	states := bullmqCleanStates[sec]
	op := bulkOp{key: j.queueKey(queue, states[0]), keysEach: 8, bySet: sec != SectionWaiting,
		listed: sec == SectionWaiting, leftWhy: bullmqCleanLeft}
	op.custom = func(ctx context.Context, rdb redis.UniversalClient, ids []string, scores []float64, now time.Time) (*chunkCall, error) {
		if err := j.checkVersion(ctx, rdb, queue); err != nil {
			return nil, err
		}
		jobs, err := j.locate(ctx, rdb, queue, states, ids, scores)
		if err != nil {
			return nil, err
		}
		return j.cleanChunk(ctx, rdb, queue, jobs, now)
	}
	if !hashTagged(j.queueKey(queue, "")) {
		op.spans = "BullMQ's keys without a hash-tagged prefix"
	}
	return op
}

// checkVersion refuses a queue whose meta names no BullMQ 5.
func (j bullmqJobs) checkVersion(ctx context.Context, rdb redis.UniversalClient, queue string) error {
	meta := j.queueKey(queue, "meta")
	version, err := rdb.HGet(ctx, meta, "version").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return actFail(rdb, "HGET", meta, err)
	}
	if !strings.HasPrefix(version, "bullmq:5.") {
		return fmt.Errorf("store: BullMQ queue %s: %s: %w", store.QuoteName(queue), bullmqLeft["version"], ErrNotSupported)
	}
	return nil
}

// cleanJob is one job of a clean chunk as read before it: where it is, and what the script will
// likely do.
type cleanJob struct {
	id, state, at string // at: its set or list
	list          bool
	score         float64    // its score, or its place from the list's tail as read
	gone, stays   bool       // not found; to be left, by the read
	deps          *UndoTask  // a pending child's parent's dependencies as read (UndoDependency)
	far           bool       // they are in another hash slot, on a cluster
	keys          []UndoTask // the keys its removal deletes, as read (UndoKey each)
}

// locate finds each job: in a set section, the set with the score read; in the waiting section,
// prioritized when it is there, else the first of wait and paused that holds it, searched from
// the tail (where the section's pages start, so a search is as long as the jobs before it).
func (j bullmqJobs) locate(ctx context.Context, rdb redis.UniversalClient, queue string, states, ids []string, scores []float64) ([]cleanJob, error) {
	jobs := make([]cleanJob, len(ids))
	if len(states) == 1 {
		for i, id := range ids {
			jobs[i] = cleanJob{id: id, state: states[0], at: j.queueKey(queue, states[0]), score: scores[i]}
		}
		return jobs, nil
	}
	prio := j.queueKey(queue, "prioritized")
	pipe := rdb.Pipeline()
	found := make([]*redis.FloatCmd, len(ids))
	for i, id := range ids {
		found[i] = pipe.ZScore(ctx, prio, id)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, actFail(rdb, "ZSCORE", prio, err)
	}
	var rest []int // the jobs not prioritized, by index
	for i, id := range ids {
		jobs[i] = cleanJob{id: id, state: "prioritized", at: prio, score: found[i].Val(), gone: found[i].Err() != nil}
		if jobs[i].gone {
			rest = append(rest, i)
		}
	}
	for _, s := range []string{"wait", "paused"} {
		if len(rest) == 0 {
			break
		}
		list := j.queueKey(queue, s)
		pipe := rdb.Pipeline()
		n := pipe.LLen(ctx, list)
		pos := make([]*redis.IntCmd, len(rest))
		for k, i := range rest {
			pos[k] = pipe.LPos(ctx, list, ids[i], redis.LPosArgs{Rank: -1})
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, actFail(rdb, "LPOS", list, err)
		}
		var still []int
		for k, i := range rest {
			if pos[k].Err() != nil {
				still = append(still, i)
				continue
			}
			jobs[i] = cleanJob{id: ids[i], state: s, at: list, list: true, score: float64(n.Val() - 1 - pos[k].Val())}
		}
		rest = still
	}
	return jobs, nil
}

// cleanChunk reads what each job's removal would delete and whether the script will leave it,
// and builds the chunk's call with the records that undo it.
func (j bullmqJobs) cleanChunk(ctx context.Context, rdb redis.UniversalClient, queue string, jobs []cleanJob, now time.Time) (*chunkCall, error) {
	if err := j.readClean(ctx, rdb, queue, jobs, now); err != nil {
		return nil, err
	}
	key := func(s string) string { return j.queueKey(queue, s) }
	c := &chunkCall{script: bullmqBulkClean, keys: []string{key("meta"), key("events"), key("repeat")},
		args: []any{key(""), now.UnixMilli()}}
	index := map[string]int{}
	at := func(k string) int {
		if index[k] == 0 {
			c.keys = append(c.keys, k)
			index[k] = len(c.keys)
		}
		return index[k]
	}
	removed := map[string][]float64{} // a list's places, as read, of the jobs the chunk removes before
	for _, jb := range jobs {
		u := UndoTask{Kind: UndoCleaned, Key: jb.at, Member: jb.id, Score: jb.score}
		if jb.list {
			u.List = jb.at
			for _, p := range removed[jb.at] {
				if p < jb.score {
					u.Score-- // one removed nearer the tail before it: its place is one less then
				}
			}
			if !jb.stays {
				removed[jb.at] = append(removed[jb.at], jb.score)
			}
		}
		list := 0
		switch {
		case jb.gone:
			list = 2 // the script counts it gone without looking
		case jb.list:
			list = 1
		}
		deps := 0
		switch {
		case jb.far:
			deps = -1
		case jb.deps != nil:
			deps = at(jb.deps.Key)
		}
		c.args = append(c.args, jb.state, at(jb.at), list, jb.id, deps, len(jb.keys))
		for _, k := range jb.keys {
			c.args = append(c.args, at(k.Key))
		}
		u.Keys = jb.keys
		if !jb.gone { // in no state the section lists: the script finds it gone, and nothing to undo
			c.undo = append(c.undo, u)
		}
		if deps > 0 {
			c.undo = append(c.undo, *jb.deps)
		}
		c.members++
	}
	return c, nil
}

// bullmqStamps are the hash fields cleanJobsInSet reads a job's time from, the first set one,
// by state; a failed job's is its score.
var bullmqStamps = map[string][]string{
	"delayed": {"processedOn", "timestamp"}, "prioritized": {"timestamp"},
	"wait": {"finishedOn", "processedOn", "timestamp"}, "paused": {"finishedOn", "processedOn", "timestamp"},
}

// cleanChecks are a job's fields (parentKey, deid, rjk, finishedOn, processedOn, timestamp) and
// the reads they call for: its parent there (EXISTS), it pending there (SISMEMBER) and the
// parent's pending children (SCARD), its deduplication key (GET), its scheduler (ZSCORE).
type cleanChecks struct {
	fields                            []any
	parent, child, card, dedup, sched redis.Cmder
}

func (c cleanChecks) str(f int) string { s, _ := c.fields[f].(string); return s }

// readChecks reads each job's cleanChecks, in two pipelines.
func (j bullmqJobs) readChecks(ctx context.Context, rdb redis.UniversalClient, queue string, jobs []cleanJob) ([]cleanChecks, error) {
	key := func(s string) string { return j.queueKey(queue, s) }
	pipe := rdb.Pipeline()
	fields := make([]*redis.SliceCmd, len(jobs))
	for i, jb := range jobs {
		fields[i] = pipe.HMGet(ctx, key(jb.id), "parentKey", "deid", "rjk", "finishedOn", "processedOn", "timestamp")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, actFail(rdb, "HMGET", key(jobs[0].id), err)
	}
	out := make([]cleanChecks, len(jobs))
	pipe = rdb.Pipeline()
	for i, jb := range jobs {
		c := &out[i]
		c.fields = fields[i].Val()
		if p := c.str(0); p != "" {
			c.parent, c.child = pipe.Exists(ctx, p), pipe.SIsMember(ctx, p+":dependencies", key(jb.id))
			c.card = pipe.SCard(ctx, p+":dependencies")
		}
		if d := c.str(1); d != "" {
			c.dedup = pipe.Get(ctx, key("de:"+d))
		}
		if r := c.str(2); r != "" && jb.state != "failed" {
			c.sched = pipe.ZScore(ctx, key("repeat"), r)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, actFail(rdb, "EXISTS", key(jobs[0].id), err)
	}
	return out, nil
}

// readClean reads, for each job found, whether the script will leave it (stays), the DUMP and
// expiry of each key its removal deletes (keys) and, for a pending child of a flow's parent, of
// the parent's dependencies (deps).
func (j bullmqJobs) readClean(ctx context.Context, rdb redis.UniversalClient, queue string, jobs []cleanJob, now time.Time) error {
	checks, err := j.readChecks(ctx, rdb, queue, jobs)
	if err != nil {
		return err
	}
	key := func(s string) string { return j.queueKey(queue, s) }
	_, cluster := rdb.(*redis.ClusterClient)
	var names []string
	want := make([][]string, len(jobs))
	taken := map[string]int64{} // children this chunk takes from a parent's dependencies, as read
	for i := range jobs {
		jb, c := &jobs[i], checks[i]
		if c.parent != nil && c.parent.(*redis.IntCmd).Val() == 1 && c.child.(*redis.BoolCmd).Val() {
			deps := c.str(0) + ":dependencies"
			jb.far = cluster && store.Slot(deps) != store.Slot(key("meta"))
			jb.deps = &UndoTask{Kind: UndoDependency, Key: deps, Member: key(jb.id), Score: float64(c.card.(*redis.IntCmd).Val())}
			jb.stays = jb.far || c.card.(*redis.IntCmd).Val()-taken[deps] <= 1
			if !jb.stays {
				taken[deps]++
			}
			if !jb.far {
				names = append(names, deps)
			}
		}
		jb.stays = jb.stays || c.sched != nil && c.sched.Err() == nil && jb.id == "repeat:"+c.str(2)+":"+strconv.FormatFloat(c.sched.(*redis.FloatCmd).Val(), 'f', -1, 64) ||
			stampedLater(jb.state, jb.score, c.fields[3:], now)
		for _, s := range bullmqJobSuffixes {
			want[i] = append(want[i], key(jb.id+s))
		}
		if c.dedup != nil && c.dedup.(*redis.StringCmd).Val() == jb.id {
			want[i] = append(want[i], key("de:"+c.str(1)), key("dn:"+c.str(1)))
		}
		names = append(names, want[i]...)
	}
	dumps, err := dumpUndoKeys(ctx, rdb, key(jobs[0].state), names)
	if err != nil {
		return err
	}
	for i := range jobs {
		jb := &jobs[i]
		for _, k := range want[i] {
			if d, ok := dumps[k]; ok {
				jb.keys = append(jb.keys, d)
			}
		}
		if jb.deps != nil {
			jb.deps.Dump, jb.deps.ExpireAt = dumps[jb.deps.Key].Dump, dumps[jb.deps.Key].ExpireAt
		}
	}
	return nil
}

// stampedLater says whether Queue.clean(0) would leave a job of state as stamped after now: a
// failed job by its score, the others by the first of their state's fields (finishedOn,
// processedOn, timestamp) that is set.
func stampedLater(state string, score float64, stamps []any, now time.Time) bool {
	ms := float64(now.UnixMilli())
	if state == "failed" {
		return score > ms
	}
	at := map[string]int{"finishedOn": 0, "processedOn": 1, "timestamp": 2}
	for _, f := range bullmqStamps[state] {
		if s, ok := stamps[at[f]].(string); ok {
			v, err := strconv.ParseFloat(s, 64)
			return err == nil && v > ms
		}
	}
	return false
}

// bytesUnknown is a plan's note when the bytes of op's section could not be read.
func bytesUnknown(op bulkOp, err error) string {
	if op.listed {
		return "unknown: the section's tasks are in more than one key"
	}
	return "unknown: " + store.Reply(err).Error()
}
