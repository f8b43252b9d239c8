package jobs

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
// A list section (a queue's waiting list) is taken from the end its workers take from, and put
// back there by undo (bulk_list.go). A layout offers a bulk action where it implements bulkLayout; everywhere else BulkCheck refuses
// it with ErrNotSupported and the reason.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
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
	UndoToList = "l" // a task moved to another state's list (asynq's pending): back to its set and state
	UndoToSet  = "s" // a task moved to another state's set (asynq's archived): back to its set and state
	UndoQueued = "q" // a job requeued (RQ's): out of its queue, back to its set, its keys as they were
)

// UndoTask is what undoing one task of a bulk action takes, recorded before the chunk that does
// the task runs. Every string holds the bytes exactly as stored.
type UndoTask struct {
	Kind     string     // UndoMember, UndoMove, UndoKey, UndoScore, UndoToList, UndoToSet, UndoQueued, or a list's (bulk_list.go)
	Key      string     // the sorted set the member was in, or the key deleted
	Member   string     // the member (UndoMember, UndoMove)
	Score    float64    // its score
	NewScore float64    // UndoScore: the score it was given
	List     string     // UndoMove: the list the job was pushed to
	Pushed   string     // UndoMove: the job exactly as pushed
	Dump     string     // UndoKey: the key's DUMP
	ExpireAt int64      // UndoKey: its expiry in Unix milliseconds, 0 for none
	Hash     string     // UndoToList, UndoToSet: the task's hash, whose state field says where it is
	State    string     // its state before, put back; UndoListed: the end the workers take from, "left" or "right"
	NewState string     // the state it was given, replaced only if still there
	Keys     []UndoTask // UndoQueued, UndoListed: the job's keys as they were (UndoKey; Dump "" for one absent)
	// fromEnd is, within one Undo, how many of its records are done once this one is: they go
	// back last first, so the last record's is 1 (UndoOptions.Done).
	fromEnd int64
}

// BulkPlan is what a dry run found: the tasks a bulk action would touch, their bytes and how long
// the budget makes it take.
type BulkPlan struct {
	Tasks     int64         // the section's tasks now
	Bytes     int64         // their bytes, -1 when unknown (BytesNote says why)
	BytesNote string        // how Bytes was read ("sampled by MEMORY USAGE", or why it is unknown)
	KeysEach  int           // keys touched a task, charged to the budget
	Estimate  time.Duration // at the budget's keys per second; -1 with no budget (no limit)
	// Match, when not nil, is the filter the plan counted (PlanBulkMatching): Tasks are the
	// section's tasks it keeps, of Scanned read; a run of the plan acts on those alone.
	Match   func(Task) bool
	Scanned int64
	Note    string // what else the action does that the user should know first ("" none)
	// Newest, for a list section, is its newest tasks at the dry run (up to ListMarks from the
	// end its workers do not take from), exactly as stored: a run of the plan acts on none
	// pushed after them (bulk_list.go). Nil when the section is not a list or was empty.
	Newest []string
	// Lists, for a section of several lists (Celery's priority lists), is each list's own part
	// of the plan, in the order the workers take them (celery_bulk.go); nil for the others.
	Lists []ListPlan
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
	// Match, when not nil, keeps the tasks the action is done to (a filter's selection): the
	// others are left where they are, uncounted, and the section is read in its listed order.
	Match  func(Task) bool
	faults *faults // the run's passing faults (bulk_retry.go), set by RunBulk
	// Newest is the plan's (BulkPlan.Newest): on a list section no task pushed after them is
	// acted on. Nil: the newest when the run starts.
	Newest []string
	// Lists is the plan's (BulkPlan.Lists): on a section of several lists, each is acted on as
	// far as its own part of the plan. Nil: each list's part as the run starts.
	Lists []ListPlan
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
	// Fault is the passing fault (a lost connection, LOADING) a chunk is waiting out, "" when
	// none; Resent counts the chunks sent again after one (bulk_retry.go).
	Fault  string
	Resent int
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
	// custom builds a chunk's call to a script of the layout's own and what undoes it, for the
	// members still in the set (with their scores); nil for the others.
	custom func(ctx context.Context, rdb redis.UniversalClient, members []string, scores []float64, now time.Time) (*chunkCall, error)
	what   string // custom: what the layout's script reads a task's state from (flag 2: left)
	// spans names the keys a chunk touches when they may lie in more than one hash slot
	// ("Sidekiq's keys"); "" when a chunk's keys share one (asynq's queue, or a single set).
	// On a Redis Cluster such an action is refused before it starts.
	spans string
	// bySet: the tasks are taken from the set in its own order (ZRANGE), as the library's own
	// bulk action takes them, rather than in the order the section lists them.
	bySet bool
	desc  bool   // bySet, highest score first (ZREVRANGE)
	note  string // BulkPlan.Note
	// list, when not nil, makes it an action on a list section (bulk_list.go), which the fields
	// above but keysEach and spans do not describe.
	list *listOp
	// lists, when not nil, are the lists of a section of several, acted on in turn, each as list is.
	lists []*listOp
	// listed: the section is in lists too (key is the first), and custom finds each task itself.
	listed bool
	// leftWhy: why a task was left, by the code a layout's own script answers for it (past 2).
	leftWhy map[int64]string
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

// bulkOpOn is bulkOpOf on rdb: on a Redis Cluster, an action whose chunk could span hash slots
// is refused up front (a script's keys must share one slot: it would fail with CROSSSLOT).
func bulkOpOn(rdb redis.Cmdable, q Queue, sec TaskSection, a TaskAction) (bulkOp, error) {
	op, err := bulkOpOf(q, sec, a)
	if _, cluster := rdb.(*redis.ClusterClient); err == nil && cluster && op.spans != "" {
		return op, fmt.Errorf("store: %s on every task of a %s section on a Redis Cluster: %s are not in one hash slot: a chunk could not be atomic on a cluster: %w", a, sec, op.spans, ErrNotSupported)
	}
	return op, err
}

func bulkOpOf(q Queue, sec TaskSection, a TaskAction) (bulkOp, error) {
	if b, ok := q.(bulkLayout); ok {
		return b.bulkOp(sec, a)
	}
	return bulkOp{}, fmt.Errorf("store: %s on every task of a %s section: hourglass acts on this queue's tasks one at a time: %w", a, sec, ErrNotSupported)
}

// PlanBulk is the dry run of a on every task of section sec of q: its tasks, their bytes
// (MEMORY USAGE of the set, sampled, shared out by the section's part of it) and the time the
// budget of keysPerSecond (0: none) makes it take. It writes nothing.
func PlanBulk(ctx context.Context, rdb redis.Cmdable, q Queue, sec TaskSection, a TaskAction, keysPerSecond int, now time.Time) (BulkPlan, error) {
	op, err := bulkOpOn(rdb, q, sec, a)
	if err != nil {
		return BulkPlan{}, err
	}
	if op.list != nil {
		return op.list.plan(ctx, rdb, op.keysEach, keysPerSecond)
	}
	if op.lists != nil {
		return planLists(ctx, rdb, op, keysPerSecond)
	}
	page, err := q.Tasks(ctx, rdb, sec, 0, 1, now)
	if err != nil {
		return BulkPlan{}, err
	}
	plan := BulkPlan{Tasks: page.Total, Bytes: -1, KeysEach: op.keysEach, Estimate: -1, Note: op.note}
	if keysPerSecond > 0 {
		plan.Estimate = time.Duration(float64(plan.Tasks*int64(op.keysEach)) / float64(keysPerSecond) * float64(time.Second))
	}
	pipe := rdb.Pipeline()
	mem := pipe.MemoryUsage(ctx, op.key, 5)
	card := pipe.ZCard(ctx, op.key)
	if _, err := pipe.Exec(ctx); op.listed || err != nil && !errors.Is(err, redis.Nil) {
		plan.BytesNote = bytesUnknown(op, err)
		return plan, nil
	}
	switch n := card.Val(); {
	case n == 0:
		plan.Bytes, plan.BytesNote = 0, "the set is empty"
	case plan.Tasks == n:
		plan.Bytes, plan.BytesNote = mem.Val(), "MEMORY USAGE of "+store.QuoteName(op.key)+", sampled"
	default:
		plan.Bytes = mem.Val() * plan.Tasks / n
		plan.BytesNote = "MEMORY USAGE of " + store.QuoteName(op.key) + ", sampled, for the section's share of its members"
	}
	return plan, nil
}

// RunBulk does a to every task of section sec of q, chunk by chunk, as its per-task action
// does it (see the file's comment), against the server's clock now. It stops between chunks when
// ctx ends (Stopped) and returns what it did; a chunk whose reply was lost may have run, and its
// record (handed to Record before) undoes it either way.
func RunBulk(ctx context.Context, rdb redis.UniversalClient, q Queue, sec TaskSection, a TaskAction, now time.Time, opt BulkOptions) (BulkResult, error) {
	op, err := bulkOpOn(rdb, q, sec, a)
	if err != nil {
		return BulkResult{}, err
	}
	sizer := newChunkSizer(opt.chunk())
	opt.faults = &faults{}
	if op.list != nil {
		return op.list.run(ctx, rdb, op, now, opt, sizer)
	}
	if op.lists != nil {
		return runLists(ctx, rdb, op, now, opt, sizer)
	}
	res := BulkResult{Planned: opt.Limit}
	if res.Planned <= 0 {
		first, err := q.Tasks(ctx, rdb, sec, 0, 1, now)
		if err != nil {
			return res, err
		}
		res.Planned = first.Total
	}
	start := time.Now()
	var passed int64 // tasks Match left, before the next page
	for seen := int64(0); seen < res.Planned; {
		if ctx.Err() != nil {
			res.Stopped = true
			return res, nil
		}
		at := now.Add(time.Since(start))
		n := int(min(int64(sizer.size), res.Planned-seen))
		var tasks []Task
		if op.bySet && opt.Match == nil {
			tasks, err = setPage(ctx, rdb, op.key, res.Left, n, op.desc)
		} else {
			tasks, err = bulkPage(ctx, rdb, q, sec, res.Left+passed, n, at)
		}
		if opt.faults.ride(ctx, err, "reading the next page", opt, &res) {
			continue
		}
		if err != nil || len(tasks) == 0 {
			return res, err
		}
		if opt.Match != nil {
			kept := tasks[:0:0]
			for _, t := range tasks {
				if opt.Match(t) {
					kept = append(kept, t)
				} else {
					passed++
				}
			}
			if tasks = kept; len(tasks) == 0 {
				continue
			}
		}
		seen += int64(len(tasks))
		sent, rtt, err := runChunk(ctx, rdb, op, tasks, at, opt, &res)
		if sent == 0 && opt.faults.ride(ctx, err, "reading the chunk", opt, &res) {
			seen -= int64(len(tasks)) // nothing was sent: its tasks are read again
			continue
		}
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

// runChunk records and runs one chunk. A stop asked for while it runs waits for its reply, so
// what the result counts is what Redis did.
func runChunk(ctx context.Context, rdb redis.UniversalClient, op bulkOp, tasks []Task, now time.Time, opt BulkOptions, res *BulkResult) (sent int, rtt time.Duration, err error) {
	members, scores, err := present(ctx, rdb, op, tasks, res)
	if err != nil || len(members) == 0 {
		return 0, 0, err
	}
	var c *chunkCall
	if op.custom != nil {
		if c, err = op.custom(ctx, rdb, members, scores, now); err != nil {
			return 0, 0, err
		}
	} else {
		c = newChunkCall(op)
		if op.keys != nil {
			if c.dumps, err = dumpDeleted(ctx, rdb, op, members); err != nil {
				return 0, 0, err
			}
		}
		for i, m := range members {
			c.add(m, scores[i], now, res)
		}
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
	done, rtt, _, err := callChunk(ctx, rdb, c.script, c.keys, c.args, opt, res)
	if err != nil {
		return 0, 0, actFail(rdb, "bulk script (EVALSHA)", op.key, err)
	}
	for _, d := range done {
		switch d {
		case 1:
			res.Done++
		case 2: // a layout's own script left it in the set: its own record says another state
			c.left(fmt.Errorf("its %s says it is no longer in this section; left as it is", op.what), res)
		case 0:
			res.Gone++
		default: // left by a layout's own script, for its own reason
			c.left(errors.New(cmp.Or(op.leftWhy[d], fmt.Sprintf("left by the chunk's script (code %d)", d))), res)
		}
	}
	return c.members, rtt, nil
}

// present are the tasks' members still in op's set, with their scores; the others are counted
// gone. In lists (listed), each is the custom call's to find.
func present(ctx context.Context, rdb redis.UniversalClient, op bulkOp, tasks []Task, res *BulkResult) ([]string, []float64, error) {
	members := make([]string, len(tasks))
	for i, t := range tasks {
		members[i] = t.Member
	}
	if op.listed {
		return members, make([]float64, len(members)), nil
	}
	set := op.key
	scores, err := rdb.ZMScore(ctx, set, members...).Result()
	if err != nil {
		return nil, nil, actFail(rdb, "ZMSCORE", set, err)
	}
	var ms []string
	var ss []float64
	for i, m := range members {
		if scores[i] == 0 {
			// ZMSCORE answers nil (0 here) for a member gone; a real score of 0 is read again.
			s, err := rdb.ZScore(ctx, set, m).Result()
			switch {
			case errors.Is(err, redis.Nil):
				res.Gone++
				continue
			case err != nil: // not an answer that it is gone: the chunk is read again or ends
				return nil, nil, actFail(rdb, "ZSCORE", set, err)
			}
			scores[i] = s
		}
		ms, ss = append(ms, m), append(ss, scores[i])
	}
	return ms, ss, nil
}

// chunkCall is one chunk's script call (bulk_apply.lua) as it is built, and what undoes it.
type chunkCall struct {
	op      bulkOp
	script  *redis.Script
	keys    []string
	args    []any
	undo    []UndoTask
	members int
	lists   map[string]int      // a move's lists, by their index in keys
	dumps   map[string]UndoTask // the keys deleted with the members, as read before
}

func newChunkCall(op bulkOp) *chunkCall {
	c := &chunkCall{op: op, script: bulkApply, keys: []string{op.key}, args: []any{"delete"}, lists: map[string]int{}}
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
