package store

// Bulk actions: one action on every task of a queue's section (retry all, run all due now, delete
// all), each task done as the per-task action does it (act_<layout>.go), in chunks.
//
// Each chunk is one script (bulk_apply.lua) over at most BulkChunkMax tasks, so Redis is held for
// well under a millisecond a call (docs/benchmarks.md has the figures), and it acts only on the
// tasks still where their page showed them: a task gone since is skipped and counted, and no job
// is ever half moved, since a script runs whole or not at all. Before a chunk runs, what it will
// touch is handed to the caller (BulkOptions.Record: the journal writes it to disk) with what
// undoing it takes (UndoTask): the member with its score and its set, and for a moved job the
// job exactly as pushed and the list it went to. Undo (bulk_undo.lua) puts back what a record
// says, checking each task against what is there now.
//
// A layout offers a bulk action where it implements bulkLayout; everywhere else BulkCheck refuses
// it with ErrNotSupported and the reason.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	bulkApply = luaScript("bulk_apply")
	bulkUndo  = luaScript("bulk_undo")
)

// BulkChunkMax is the most tasks one chunk's script acts on; BulkChunkDefault the number the first
// chunk takes when the caller says nothing: the next ones adapt to BulkMaxCall (bulk_size.go). On
// a Sidekiq retry set 50 hold Redis about 0.3 ms (docs/benchmarks.md).
const (
	BulkChunkMax     = 500
	BulkChunkDefault = 50
)

// Undo kinds: what an UndoTask puts back.
const (
	UndoMember = "z" // a member deleted from a sorted set: ZADD it back
	UndoMove   = "m" // a member moved to a list as a pushed job: the job leaves the list, the member comes back
	UndoKey    = "k" // a whole key deleted: RESTORE its DUMP with its expiry
	UndoScore  = "r" // a member made due now: its old score back, if it still has the new one
)

// UndoTask is what undoing one task of a bulk action takes, recorded before the chunk that does
// the task runs. Every string holds the bytes exactly as stored.
type UndoTask struct {
	Kind     string  // UndoMember, UndoMove or UndoKey
	Key      string  // the sorted set the member was in, or the key deleted
	Member   string  // the member (UndoMember, UndoMove)
	Score    float64 // its score
	NewScore float64 // UndoScore: the score it was given
	List     string  // UndoMove: the list the job was pushed to
	Pushed   string  // UndoMove: the job exactly as pushed
	Dump     string  // UndoKey: the key's DUMP
	ExpireAt int64   // UndoKey: its expiry in Unix milliseconds, 0 for none
}

// BulkPlan is what a dry run found: the tasks a bulk action would touch, their bytes and how long
// the budget makes it take.
type BulkPlan struct {
	Tasks     int64         // the section's tasks now
	Bytes     int64         // their bytes, -1 when unknown (BytesNote says why)
	BytesNote string        // how Bytes was read ("sampled by MEMORY USAGE", or why it is unknown)
	KeysEach  int           // keys touched a task, charged to the budget
	Estimate  time.Duration // at the budget's keys per second; -1 with no budget (no limit)
}

// BulkOptions tune a bulk run.
type BulkOptions struct {
	// Chunk is the tasks the first script acts on: 1..BulkChunkMax, BulkChunkDefault when 0.
	// The next ones adapt to MaxCall (bulk_size.go).
	Chunk int
	// MaxCall is the longest one chunk should hold Redis: BulkMaxCall when 0; below 0 every
	// chunk keeps the size Chunk says.
	MaxCall time.Duration
	// Limit is the most tasks to act on (the dry run's count, so tasks added meanwhile are left);
	// 0: the section's size when the run starts.
	Limit int64
	// Wait is called before each chunk with the keys it will touch, to hold the run to a keys/s
	// budget; an error (the context ended) stops the run before the chunk. Nil: no budget.
	Wait func(ctx context.Context, keys int) error
	// Record is handed each chunk's undo data before it runs; an error stops the run before the
	// chunk (what cannot be undone is not done). Nil: nothing is recorded.
	Record func(tasks []UndoTask) error
	// Progress is called after each chunk with the figures so far.
	Progress func(BulkResult)
}

// BulkResult counts what a bulk run did.
type BulkResult struct {
	Planned int64  // the tasks it set out to act on
	Done    int64  // acted on
	Gone    int64  // not there any more when their chunk ran: skipped
	Left    int64  // left where they are, with the reason (Refused)
	Refused string // why the first task left was left
	Chunks  int    // scripts run
	Stopped bool   // stopped between chunks (the context ended) before every task was seen
}

// bulkOp is one layout's way of doing a bulk action on a section: the sorted set the section is
// in, and, for a move, the job each member becomes and where it goes.
type bulkOp struct {
	key      string // the sorted set the section's members are in
	queues   string // the queues set a moved job's queue is named in ("" for a delete)
	keysEach int    // keys touched a task
	// keys are the whole keys deleted with a member (a job's hash and sets), recorded with their
	// DUMP and expiry before; nil when none.
	keys func(member string) []string
	// rescore gives a member made due now its new score and the largest score due now; nil when
	// the action is not that. An error leaves the member where it is, with the reason.
	rescore func(score float64, now time.Time) (to float64, due string, err error)
	// move makes the job a member is pushed as, its queue's name and list; nil for a delete. An
	// error leaves the member where it is, with the reason.
	move func(member string, now time.Time) (job, queue, list string, err error)
}

// bulkLayout is a queue layout that does bulk actions.
type bulkLayout interface {
	bulkOp(sec TaskSection, a TaskAction) (bulkOp, error)
}

// BulkCheck says whether q does a to every task of section sec: nil, or ErrNotSupported wrapped
// with the reason.
func BulkCheck(q Queue, sec TaskSection, a TaskAction) error {
	_, err := bulkOpOf(q, sec, a)
	return err
}

func bulkOpOf(q Queue, sec TaskSection, a TaskAction) (bulkOp, error) {
	if b, ok := q.(bulkLayout); ok {
		return b.bulkOp(sec, a)
	}
	return bulkOp{}, fmt.Errorf("store: %s on every task of a %s section: a list keeps no score to put a task back in its place, so hourglass acts on its tasks one at a time: %w", a, sec, ErrNotSupported)
}

// PlanBulk is the dry run of a on every task of section sec of q: its tasks, their bytes
// (MEMORY USAGE of the set, sampled, shared out by the section's part of it) and the time the
// budget of keysPerSecond (0: none) makes it take. It writes nothing.
func PlanBulk(ctx context.Context, rdb redis.Cmdable, q Queue, sec TaskSection, a TaskAction, keysPerSecond int, now time.Time) (BulkPlan, error) {
	op, err := bulkOpOf(q, sec, a)
	if err != nil {
		return BulkPlan{}, err
	}
	page, err := q.Tasks(ctx, rdb, sec, 0, 1, now)
	if err != nil {
		return BulkPlan{}, err
	}
	plan := BulkPlan{Tasks: page.Total, Bytes: -1, KeysEach: op.keysEach, Estimate: -1}
	if keysPerSecond > 0 {
		plan.Estimate = time.Duration(float64(plan.Tasks*int64(op.keysEach)) / float64(keysPerSecond) * float64(time.Second))
	}
	pipe := rdb.Pipeline()
	mem := pipe.MemoryUsage(ctx, op.key, 5)
	card := pipe.ZCard(ctx, op.key)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		plan.BytesNote = "unknown: " + Reply(err).Error()
		return plan, nil
	}
	switch n := card.Val(); {
	case n == 0:
		plan.Bytes, plan.BytesNote = 0, "the set is empty"
	case plan.Tasks == n:
		plan.Bytes, plan.BytesNote = mem.Val(), "MEMORY USAGE of "+actQuote(op.key)+", sampled"
	default:
		plan.Bytes = mem.Val() * plan.Tasks / n
		plan.BytesNote = "MEMORY USAGE of " + actQuote(op.key) + ", sampled, for the section's share of its members"
	}
	return plan, nil
}

// RunBulk does a to every task of section sec of q, chunk by chunk, as its per-task action
// does it (see the file's comment), against the server's clock now. It stops between chunks when
// ctx ends (Stopped) and returns what it did; a chunk whose reply was lost may have run, and its
// record (handed to Record before) undoes it either way.
func RunBulk(ctx context.Context, rdb redis.UniversalClient, q Queue, sec TaskSection, a TaskAction, now time.Time, opt BulkOptions) (BulkResult, error) {
	op, err := bulkOpOf(q, sec, a)
	if err != nil {
		return BulkResult{}, err
	}
	if opt.Chunk <= 0 {
		opt.Chunk = BulkChunkDefault
	}
	if opt.MaxCall == 0 {
		opt.MaxCall = BulkMaxCall
	}
	sizer := newChunkSizer(opt.Chunk, opt.MaxCall)
	res := BulkResult{Planned: opt.Limit}
	if res.Planned <= 0 {
		first, err := q.Tasks(ctx, rdb, sec, 0, 1, now)
		if err != nil {
			return res, err
		}
		res.Planned = first.Total
	}
	start := time.Now()
	for seen := int64(0); seen < res.Planned; {
		if ctx.Err() != nil {
			res.Stopped = true
			return res, nil
		}
		at := now.Add(time.Since(start))
		tasks, err := bulkPage(ctx, rdb, q, sec, res.Left, int(min(int64(sizer.size), res.Planned-seen)), at)
		if err != nil || len(tasks) == 0 {
			return res, err
		}
		seen += int64(len(tasks))
		sent, rtt, err := runChunk(ctx, rdb, op, tasks, at, opt, &res)
		if err != nil {
			return res, err
		}
		sizer.took(sent, rtt)
		if opt.Progress != nil {
			opt.Progress(res)
		}
	}
	return res, nil
}

// bulkPage reads the next count tasks of the section, in pages of at most MaxTaskPage.
func bulkPage(ctx context.Context, rdb redis.Cmdable, q Queue, sec TaskSection, offset int64, count int, now time.Time) ([]Task, error) {
	var tasks []Task
	for len(tasks) < count {
		page, err := q.Tasks(ctx, rdb, sec, offset+int64(len(tasks)), min(count-len(tasks), MaxTaskPage), now)
		if err != nil {
			return tasks, err
		}
		tasks = append(tasks, page.Tasks...)
		if len(page.Tasks) == 0 {
			break
		}
	}
	return tasks, nil
}

// runChunk records and runs one chunk. A stop asked for while it runs waits for its reply, so
// what the result counts is what Redis did.
func runChunk(ctx context.Context, rdb redis.UniversalClient, op bulkOp, tasks []Task, now time.Time, opt BulkOptions, res *BulkResult) (sent int, rtt time.Duration, err error) {
	members := make([]string, len(tasks))
	for i, t := range tasks {
		members[i] = t.Member
	}
	scores, err := rdb.ZMScore(ctx, op.key, members...).Result()
	if err != nil {
		return 0, 0, actFail(rdb, "ZMSCORE", op.key, err)
	}
	c := newChunkCall(op)
	if op.keys != nil {
		if c.dumps, err = dumpDeleted(ctx, rdb, op, members); err != nil {
			return 0, 0, err
		}
	}
	for i, m := range members {
		if scores[i] == 0 {
			// ZMSCORE answers nil (0 here) for a member gone; a real score of 0 is read again.
			s, err := rdb.ZScore(ctx, op.key, m).Result()
			if err != nil {
				res.Gone++
				continue
			}
			scores[i] = s
		}
		c.add(m, scores[i], now, res)
	}
	if c.members == 0 {
		return 0, 0, nil
	}
	if opt.Wait != nil {
		if err := opt.Wait(ctx, c.members*op.keysEach); err != nil {
			res.Stopped = true
			return 0, 0, nil
		}
	}
	if opt.Record != nil {
		if err := opt.Record(c.undo); err != nil {
			return 0, 0, fmt.Errorf("store: bulk action stopped before a chunk of %d tasks: recording what undoes it: %w", c.members, err)
		}
	}
	began := time.Now()
	done, err := bulkApply.Run(context.WithoutCancel(ctx), rdb, c.keys, c.args...).Int64Slice()
	rtt = time.Since(began)
	res.Chunks++
	if err != nil {
		return 0, 0, actFail(rdb, "bulk script (EVALSHA)", op.key, err)
	}
	for _, d := range done {
		if d == 1 {
			res.Done++
		} else {
			res.Gone++
		}
	}
	return c.members, rtt, nil
}

// chunkCall is one chunk's script call (bulk_apply.lua) as it is built, and what undoes it.
type chunkCall struct {
	op      bulkOp
	keys    []string
	args    []any
	undo    []UndoTask
	members int
	lists   map[string]int      // a move's lists, by their index in keys
	dumps   map[string]UndoTask // the keys deleted with the members, as read before
}

func newChunkCall(op bulkOp) *chunkCall {
	c := &chunkCall{op: op, keys: []string{op.key}, args: []any{"delete"}, lists: map[string]int{}}
	switch {
	case op.move != nil:
		c.keys, c.args[0] = append(c.keys, op.queues), "move"
	case op.keys != nil:
		c.args[0] = "delete_keys"
	case op.rescore != nil:
		c.args[0] = "rescore"
	}
	return c
}

// add puts member m (its score read before) in the call; a member the move refuses is left and
// counted.
func (c *chunkCall) add(m string, score float64, now time.Time, res *BulkResult) {
	u := UndoTask{Kind: UndoMember, Key: c.op.key, Member: m, Score: score}
	switch {
	case c.op.keys != nil:
		var idx []any
		for _, k := range c.op.keys(m) {
			if d, ok := c.dumps[k]; ok {
				c.keys = append(c.keys, k)
				idx = append(idx, len(c.keys))
				c.undo = append(c.undo, d)
			}
		}
		c.args = append(append(c.args, m, len(idx)), idx...)
	case c.op.rescore != nil:
		to, due, err := c.op.rescore(score, now)
		if err != nil {
			c.left(err, res)
			return
		}
		u.Kind, u.NewScore = UndoScore, to
		c.args = append(c.args, m, strconv.FormatFloat(to, 'g', -1, 64), due)
	case c.op.move == nil:
		c.args = append(c.args, m)
	default:
		job, queue, list, err := c.op.move(m, now)
		if err != nil {
			c.left(err, res)
			return
		}
		if c.lists[list] == 0 {
			c.keys = append(c.keys, list)
			c.lists[list] = len(c.keys)
		}
		u.Kind, u.List, u.Pushed = UndoMove, list, job
		c.args = append(c.args, m, job, c.lists[list], queue)
	}
	c.undo = append(c.undo, u)
	c.members++
}

// left counts a member the action leaves where it is, and why.
func (c *chunkCall) left(err error, res *BulkResult) {
	res.Left++
	if res.Refused == "" {
		res.Refused = err.Error()
	}
}

// dumpDeleted reads the DUMP and expiry (PEXPIRETIME, absolute) of the keys deleted with each
// member, in one pipeline; a key that does not exist is left out.
func dumpDeleted(ctx context.Context, rdb redis.UniversalClient, op bulkOp, members []string) (map[string]UndoTask, error) {
	type read struct {
		dump *redis.StringCmd
		at   *redis.Cmd
	}
	reads := map[string]read{}
	pipe := rdb.Pipeline()
	for _, m := range members {
		for _, k := range op.keys(m) {
			reads[k] = read{pipe.Dump(ctx, k), pipe.Do(ctx, "PEXPIRETIME", k)}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, actFail(rdb, "DUMP", op.key, err)
	}
	out := map[string]UndoTask{}
	for k, r := range reads {
		d, err := r.dump.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		at, aerr := r.at.Int64()
		if err != nil || aerr != nil {
			return nil, actFail(rdb, "DUMP", k, errors.Join(err, aerr))
		}
		out[k] = UndoTask{Kind: UndoKey, Key: k, Dump: d, ExpireAt: max(at, 0)}
	}
	return out, nil
}

// UndoResult counts what Undo put back.
type UndoResult struct {
	Restored int64 // put back as they were
	There    int64 // there already (or their chunk never ran): nothing to do
	Taken    int64 // moved jobs a worker took from the list since: not undone (they ran)
	Conflict int64 // keys there again holding something else: left as they are
	Expired  int64 // keys whose expiry has passed since: not restored
}

// Undo puts back what tasks record, chunk by chunk (one script each, bulk_undo.lua), each task
// checked against what is there now. wait, when not nil, holds it to a keys/s budget.
func Undo(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, chunk int, wait func(ctx context.Context, keys int) error) (UndoResult, error) {
	var res UndoResult
	if chunk <= 0 {
		chunk = BulkChunkDefault
	}
	sizer := newChunkSizer(chunk, BulkMaxCall)
	for len(tasks) > 0 {
		n := min(sizer.size, len(tasks))
		if wait != nil {
			if err := wait(ctx, n); err != nil {
				return res, err
			}
		}
		began := time.Now()
		if err := undoChunk(ctx, rdb, tasks[:n], &res); err != nil {
			return res, err
		}
		sizer.took(n, time.Since(began))
		tasks = tasks[n:]
	}
	return res, nil
}

func undoChunk(ctx context.Context, rdb redis.UniversalClient, tasks []UndoTask, res *UndoResult) error {
	var keys []string
	index := map[string]int{}
	at := func(k string) int {
		if index[k] == 0 {
			keys = append(keys, k)
			index[k] = len(keys)
		}
		return index[k]
	}
	var args []any
	for _, u := range tasks {
		score := strconv.FormatFloat(u.Score, 'g', -1, 64)
		switch u.Kind {
		case UndoMember:
			args = append(args, "z", at(u.Key), u.Member, score)
		case UndoMove:
			args = append(args, "m", at(u.Key), u.Member, score, at(u.List), u.Pushed)
		case UndoScore:
			args = append(args, "r", at(u.Key), u.Member, score, strconv.FormatFloat(u.NewScore, 'g', -1, 64))
		case UndoKey:
			args = append(args, "k", at(u.Key), u.Dump, u.ExpireAt)
		default:
			return fmt.Errorf("store: undo: unknown kind %q in the record of %s", u.Kind, actQuote(u.Key))
		}
	}
	codes, err := bulkUndo.Run(context.WithoutCancel(ctx), rdb, keys, args...).Int64Slice()
	if err != nil {
		return actFail(rdb, "undo script (EVALSHA)", keys[0], err)
	}
	for _, c := range codes {
		switch c {
		case 1:
			res.Restored++
		case 0:
			res.There++
		case 2:
			res.Taken++
		case 3:
			res.Conflict++
		default:
			res.Expired++
		}
	}
	return nil
}
