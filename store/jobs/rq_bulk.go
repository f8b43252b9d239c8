package jobs

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// enqueueAll puts every job of queue's registry on the queue, a chunk at a time, each as the
// per-job action does it (rq_enqueue.lua): of the failed registry `rq requeue --all`
// (FailedJobRegistry.requeue on each job: out of the registry, started_at, ended_at and exc_info
// cleared, queued at the back; mode "requeue"), of the scheduled one what RQ's scheduler does to a
// due job, to each now (queue.enqueue_job, at the front when the job asks, then the registry's
// remove; mode "schedule"), in the registry's order. Each chunk records first each job's id with
// its score and its hash, dependents and dependencies sets with their DUMP and expiry
// (UndoQueued): undone, a job still queued leaves the queue and returns to the registry with its
// keys as they were; one a worker took since has run, and is left.
func (j rqJobs) enqueueAll(queue, registry, mode string) bulkOp {
	from, queueKey := j.key(registry, queue), j.key("queue", queue)
	op := bulkOp{key: from, keysEach: 5, what: "hash", bySet: true, spans: "RQ's keys"} // in the registry's order, as get_job_ids
	op.custom = func(ctx context.Context, rdb redis.UniversalClient, ids []string, scores []float64, now time.Time) (*chunkCall, error) {
		var keys []string
		for _, id := range ids {
			keys = append(keys, j.rqJobKeys(id)...)
		}
		dumps, err := dumpUndoKeys(ctx, rdb, from, keys)
		if err != nil {
			return nil, err
		}
		at := now.UTC().Format("2006-01-02T15:04:05.000000Z")
		c := &chunkCall{script: rqEnqueue, keys: []string{from, j.key("queues"), queueKey}, members: len(ids),
			args: []any{queueKey, queue, at, rqDefaultTimeout, mode}}
		for i, id := range ids {
			u := UndoTask{Kind: UndoQueued, Key: from, Member: id, Score: scores[i], List: queueKey}
			for _, k := range j.rqJobKeys(id) {
				c.keys = append(c.keys, k)
				d, ok := dumps[k]
				if !ok {
					d = UndoTask{Kind: UndoKey, Key: k}
				}
				u.Keys = append(u.Keys, d)
			}
			c.args = append(c.args, id)
			c.undo = append(c.undo, u)
		}
		return c, nil
	}
	return op
}

// bulkOp is how RQ does a on every task of a section (bulk_layouts.go has the table).
func (j rqJobs) bulkOp(queue string, sec TaskSection, a TaskAction) (bulkOp, error) {
	switch {
	case sec == SectionWaiting && a == ActionDelete: // Queue.empty
		keys := func(id string) []string { return []string{j.key("job", id), j.key("job", id, "dependents")} }
		return bulkOp{keysEach: 3, spans: "RQ's keys", list: &listOp{key: j.key("queue", queue), fromLeft: true, keys: keys}}, nil
	case (sec == SectionDead || sec == SectionLater) && a == ActionDelete:
		return bulkOp{key: j.key(rqSections[sec], queue), keysEach: 4, keys: j.rqJobKeys, spans: "RQ's keys"}, nil
	case sec == SectionDead && a == ActionRunNow:
		return j.enqueueAll(queue, "failed", "requeue"), nil
	case sec == SectionLater && a == ActionRunNow:
		return j.enqueueAll(queue, "scheduled", "schedule"), nil
	}
	return bulkOp{}, bulkRefusal("RQ", sec, a, "hourglass deletes all of a queue, deletes and requeues RQ's failed jobs and deletes or runs now its scheduled ones in bulk, and acts on the others one at a time")
}
