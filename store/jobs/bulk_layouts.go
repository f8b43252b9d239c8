package jobs

// Which layouts do which bulk actions (bulk.go), each as its per-task action does it:
//
//	hourglass's list queue   delete all of waiting (bulk_list.go)
//	hourglass's delay queue  delete all of due, later or in_flight: ZREM each member (Act's
//	                         delete); run all now of later: each due now (Act's run now,
//	                         dq_run_now.lua: ZADD XX the score of now, if still later)
//	Sidekiq's shared sets    delete all of later, retry or dead: ZREM each entry (SortedEntry#
//	                         delete; SortedSet#clear unlinks the set whole, to the same end);
//	                         retry all of retry or dead (RetrySet#retry_all, DeadSet#retry_all:
//	                         SortedEntry#retry on each) and run all due now of later
//	                         (SortedEntry#add_to_queue on each): the job as Sidekiq::Client#push
//	                         pushes it (sidekiqPushed), moved in the chunk's script
//	                         kill all of retry (RetrySet#kill_all: SortedEntry#kill on each,
//	                         DeadSet#kill: into dead scored now, trimmed; sidekiq_bulk.go)
//	Sidekiq's queues         delete all of a queue's waiting list (Queue#clear: the list goes,
//	                         its name leaves the queues set; bulk_list.go)
//	RQ's queues              delete all of waiting (Queue.empty: each id out of the queue, its
//	                         hash and dependents set deleted; bulk_list.go)
//	RQ's failed and          delete all: as Job.delete on each (rq_delete.lua): the id leaves
//	  scheduled registries   the registry, and the job's hash, dependents and dependencies sets
//	                         are deleted, each recorded first with its DUMP and expiry. A
//	                         failed or scheduled job is in no queue list, so no LREM is needed; one that is
//	                         (RQ never leaves it so) keeps that entry. requeue all of failed
//	                         (`rq requeue --all`: FailedJobRegistry.requeue on each) and run all
//	                         now of scheduled (what RQ's scheduler does to a due job, to each),
//	                         as rq_enqueue.lua does one (rq_bulk.go)
//
//	BullMQ 5                 retry all of dead (Queue.retryJobs) and promote all of later
//	                         (Queue.promoteJobs), as its moveJobsToWait does (bullmq_bulk.go);
//	                         delete all of dead, later and waiting: Queue.clean(0, 0, state) of
//	                         failed, delayed, wait, paused and prioritized, each job's keys
//	                         and place recorded first (bullmq_bulk_clean.go); the last
//	                         pending child of a flow's parent is left
//	asynq                    run all, archive all and delete all of a queue's scheduled, retry
//	                         and archived sets, as its Inspector does (asynq_bulk.go); delete
//	                         all and archive all of pending (DeleteAllPendingTasks,
//	                         ArchiveAllPendingTasks; bulk_list.go)
//	Celery (kombu)           delete all of a queue's waiting messages (`celery purge -Q`,
//	                         queue_purge: the queue's list of each priority step deleted, unacked
//	                         left): each list in turn, step 0 first, as a worker's BRPOP names
//	                         them (celery_bulk.go)
//
// A list section is taken in chunks from the end its workers take from, and undo puts its
// elements back there in their old order (bulk_list.go). Everything else is refused with the
// reason: a list queue's processing list is its workers', as Celery's unacknowledged messages
// are.

import (
	"fmt"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// bulkReader is a job library's reader that does bulk actions.
type bulkReader interface {
	bulkOp(queue string, sec TaskSection, a TaskAction) (bulkOp, error)
}

func (q *jobQueue) bulkOp(sec TaskSection, a TaskAction) (bulkOp, error) {
	if b, ok := q.r.(bulkReader); ok {
		return b.bulkOp(q.queue, sec, a)
	}
	return bulkOp{}, bulkRefusal(string(q.lib.layout), sec, a, "hourglass does not yet record "+string(q.lib.layout)+"'s job hashes to undo a bulk action")
}

func (q *ownDelayQueue) bulkOp(sec TaskSection, a TaskAction) (bulkOp, error) {
	switch {
	case a == ActionDelete && (sec == SectionDue || sec == SectionLater):
		return bulkOp{key: q.key, keysEach: 1}, nil
	case a == ActionDelete && sec == SectionInFlight && q.inFlight != "":
		return bulkOp{key: q.inFlight, keysEach: 1}, nil
	case a == ActionRunNow && sec == SectionLater:
		unit := q.unit
		rescore := func(score float64, now time.Time) (float64, string, error) {
			u := unit
			if u == store.AutoUnit {
				var ok bool
				if u, ok = store.GuessUnit(score, now); !ok {
					return 0, "", fmt.Errorf("its score %s is not a due time in any unit within ten years of now: set score_unit", store.FormatScore(score))
				}
			}
			return u.Score(now), u.Bound(now), nil
		}
		return bulkOp{key: q.key, keysEach: 1, rescore: rescore}, nil
	}
	return bulkOp{}, bulkRefusal("a delay queue", sec, a, delayWhyNot(sec, a, q.inFlight))
}

func (q *ownListQueue) bulkOp(sec TaskSection, a TaskAction) (bulkOp, error) {
	if sec == SectionWaiting && a == ActionDelete {
		return bulkOp{keysEach: 1, list: &listOp{key: q.key, keys: noKeys}}, nil
	}
	return bulkOp{}, bulkRefusal("a list queue", sec, a, "hourglass deletes all of a list queue's waiting list, and acts on the others one at a time")
}

func noKeys(string) []string { return nil }

// bulkRefusal is ErrNotSupported for a on every task of a section, with why.
func bulkRefusal(what string, sec TaskSection, a TaskAction, why string) error {
	return fmt.Errorf("store: %s on every task of %s's %s section: %s: %w", a, what, sec, why, ErrNotSupported)
}
