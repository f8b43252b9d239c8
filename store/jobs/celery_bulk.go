package jobs

// Celery's delete all of a queue's waiting messages, as Celery's purge does it (`celery purge -Q
// <queue>`, app.control.purge(), kombu's Channel.queue_purge: its redis transport's _purge
// deletes the queue's list of each priority step, <queue> and <queue>\x06\x16<n>, and nothing
// else). The messages delivered and not acknowledged (unacked, unacked_index) are in flight, not
// waiting: purge leaves them, and so does hourglass.
//
// The lists are taken in the order a worker takes them (kombu's _brpop_start names them
// priority step 0 first, then each step up; BRPOP takes the first non-empty one's tail), each
// as any waiting list is (bulk_list.go): in chunks from its tail, oldest first, as far as its
// newest message of the dry run, each message recorded exactly as stored first. Every step 1..9
// is taken, as the queue's count reads them, so any priority_steps is covered. Undo pushes each
// list's messages back onto its tail, last first, so a worker takes them next, in their old
// order, before anything sent since.
//
// On a Redis Cluster the lists of a queue share a hash slot only when the global_keyprefix or
// the queue's name holds a hash tag; without one the action is refused (an undo's chunk can
// span the lists).

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ListPlan is one list's part of the dry run of a section of several lists: its tasks then and
// its newest ones exactly as stored (BulkPlan.Newest; nil when it was empty). A run acts on it
// no further.
type ListPlan struct {
	Key    string
	Tasks  int64
	Newest []string
}

func (j celeryJobs) bulkOp(queue string, sec TaskSection, a TaskAction) (bulkOp, error) {
	if queue == "" || sec != SectionWaiting || a != ActionDelete {
		return bulkOp{}, bulkRefusal("Celery", sec, a, "hourglass deletes all of a queue's waiting messages, as Celery's purge does; "+
			"an unacknowledged message is its worker's, which runs it whatever its record says")
	}
	op := bulkOp{keysEach: 1}
	for _, k := range j.celeryListNames(queue) {
		op.lists = append(op.lists, &listOp{key: k, keys: noKeys})
	}
	if !hashTagged(j.prefix + queue) {
		op.spans = "a Celery queue's priority lists, without a hash tag in the global_keyprefix or the queue's name,"
	}
	return op, nil
}

// planLists is the dry run of op's lists: their lengths in one read, then each non-empty list's
// newest element and bytes (listOp.plan).
func planLists(ctx context.Context, rdb redis.Cmdable, op bulkOp, keysPerSecond int) (BulkPlan, error) {
	pipe := rdb.Pipeline()
	lens := make([]*redis.IntCmd, len(op.lists))
	for i, l := range op.lists {
		lens[i] = pipe.LLen(ctx, l.key)
	}
	if err := execReads(ctx, pipe); err != nil {
		return BulkPlan{}, err
	}
	plan := BulkPlan{KeysEach: op.keysEach, Estimate: -1, Lists: []ListPlan{}}
	var lists int
	for i, l := range op.lists {
		if lens[i].Val() == 0 {
			continue
		}
		p, err := l.plan(ctx, rdb, op.keysEach, 0)
		if err != nil {
			return BulkPlan{}, err
		}
		if p.Tasks == 0 {
			continue
		}
		lists++
		plan.Lists = append(plan.Lists, ListPlan{Key: l.key, Tasks: p.Tasks, Newest: p.Newest})
		plan.Tasks += p.Tasks
		switch {
		case plan.Bytes < 0:
		case p.Bytes < 0:
			plan.Bytes, plan.BytesNote = -1, p.BytesNote
		default:
			plan.Bytes += p.Bytes
		}
	}
	if plan.Bytes >= 0 {
		plan.BytesNote = "MEMORY USAGE of the queue's " + strconv.Itoa(lists) + " lists, sampled"
		if lists == 0 {
			plan.BytesNote = "the queue's lists are empty"
		}
	}
	if keysPerSecond > 0 {
		plan.Estimate = time.Duration(float64(plan.Tasks*int64(op.keysEach)) / float64(keysPerSecond) * float64(time.Second))
	}
	return plan, nil
}

// runLists does op's action to each of its lists in turn, each as far as its part of the plan
// (opt.Lists, or the lists as they are when the run starts, opt.Limit tasks at most).
func runLists(ctx context.Context, rdb redis.UniversalClient, op bulkOp, now time.Time, opt BulkOptions, sizer *chunkSizer) (BulkResult, error) {
	if opt.Match != nil {
		return BulkResult{}, fmt.Errorf("store: a filter's selection of a list section is acted on one task at a time: %w", ErrNotSupported)
	}
	parts := opt.Lists
	if parts == nil {
		p, err := planLists(ctx, rdb, op, 0)
		if err != nil {
			return BulkResult{}, err
		}
		parts = capParts(p.Lists, opt.Limit)
	}
	var res BulkResult
	for _, p := range parts {
		res.Planned += p.Tasks
	}
	for _, l := range op.lists {
		part := listPart(parts, l.key)
		if part.Tasks <= 0 {
			continue // empty at the dry run: whatever is there was sent since
		}
		o := opt
		o.Limit, o.Newest, o.Lists = part.Tasks, part.Newest, nil
		before := res
		if opt.Progress != nil {
			o.Progress = func(r BulkResult) { opt.Progress(before.plus(r)) }
		}
		r, err := l.run(ctx, rdb, op, now, o, sizer)
		res = before.plus(r)
		if err != nil || res.Stopped {
			return res, err
		}
	}
	return res, nil
}

// plus is res with what a run on one more list did added (its Planned is res's already), and the
// fault that run is waiting out, if any.
func (res BulkResult) plus(r BulkResult) BulkResult {
	res.Done += r.Done
	res.Gone += r.Gone
	res.Left += r.Left
	res.Chunks += r.Chunks
	res.Resent += r.Resent
	res.Fault = r.Fault
	res.Stopped = res.Stopped || r.Stopped
	if res.Refused == "" {
		res.Refused = r.Refused
	}
	return res
}

// capParts keeps the first limit tasks of parts, in their order (all of them for a limit <= 0).
func capParts(parts []ListPlan, limit int64) []ListPlan {
	if limit <= 0 {
		return parts
	}
	out := make([]ListPlan, 0, len(parts))
	for _, p := range parts {
		p.Tasks = min(p.Tasks, limit)
		limit -= p.Tasks
		out = append(out, p)
	}
	return out
}

// listPart is key's part of parts (none: zero tasks).
func listPart(parts []ListPlan, key string) ListPlan {
	for _, p := range parts {
		if p.Key == key {
			return p
		}
	}
	return ListPlan{Key: key}
}
