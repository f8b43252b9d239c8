package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Queue is one queue in whichever layout holds it: hourglass's own delay and list queues
// (DelayQueueOf, ListQueueOf) and a job library's (Source.Queue). The snapshot reads its
// stats, and the console's drill-down lists its tasks a page at a time and acts on one task,
// each through the same four calls, so no caller needs to know the layout.
//
// What only some layouts can do is an optional interface beside it, found on a Queue and refused
// with the reason where a layout has none: bulk actions on every task of a section (bulk.go),
// pausing the queue (PauserOf, pause.go); searching its tasks is built on Tasks (search.go).
type Queue interface {
	// Sections are the sections the queue keeps, in the order the console shows them. It reads
	// nothing.
	Sections() []TaskSection
	// Stats reads what the queue holds now, comparing due times with now (the server's clock).
	// It only reads. On an error the stats hold what was read before it.
	Stats(ctx context.Context, rdb redis.Cmdable, now time.Time) (QueueStats, error)
	// Tasks reads one page of section sec: count tasks (held to 1..MaxTaskPage) from offset, in
	// the section's order, against the server's clock now.
	Tasks(ctx context.Context, rdb redis.Cmdable, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error)
	// Act does a to task t of section sec, as the page at now showed it, and says what it did in
	// one line. ErrTaskGone: the task was not there any more, and nothing was written;
	// ErrNotSupported (wrapped with the reason): the layout offers no such action there.
	Act(ctx context.Context, rdb redis.UniversalClient, sec TaskSection, t Task, a TaskAction, now time.Time) (string, error)
}

// QueueStats is what Queue.Stats read, in the layout's own terms: Delay for a delay queue, List
// for a list queue, Job for a job library's queue (or its shared sets). Job is nil for the
// shared sets of a library that keeps everything per queue.
type QueueStats struct {
	Delay *store.DelayQueueStats
	List  *store.ListQueueStats
	Job   *Stats
}

// The layouts, each checked to be a Queue when the package compiles.
var (
	_ Queue = (*ownDelayQueue)(nil)
	_ Queue = (*ownListQueue)(nil)
	_ Queue = (*jobQueue)(nil)
)

// ownDelayQueue is a delay queue in hourglass's layout (own_tasks.go, own_act.go): key scored by
// due time in unit, beside the in-flight set inFlight ("" when the queue keeps none).
type ownDelayQueue struct {
	key, inFlight string
	unit          store.ScoreUnit
}

// DelayQueueOf is the delay queue at key, scored in unit, with its in-flight tasks in inFlight
// ("" for none). It reads nothing.
func DelayQueueOf(key, inFlight string, unit store.ScoreUnit) Queue {
	return &ownDelayQueue{key: key, inFlight: inFlight, unit: unit}
}

// Sections are due and later, and in_flight where the queue keeps an in-flight set.
func (q *ownDelayQueue) Sections() []TaskSection {
	if q.inFlight == "" {
		return []TaskSection{SectionDue, SectionLater}
	}
	return []TaskSection{SectionDue, SectionLater, SectionInFlight}
}

// Stats reads the queue as DelayQueueStatsOf does.
func (q *ownDelayQueue) Stats(ctx context.Context, rdb redis.Cmdable, now time.Time) (QueueStats, error) {
	st, err := store.DelayQueueStatsOf(ctx, rdb, q.key, q.inFlight, q.unit, now)
	return QueueStats{Delay: &st}, err
}

// ownListQueue is a list queue in hourglass's layout: the list key, beside the processing list
// processing ("" when the queue keeps none).
type ownListQueue struct {
	key, processing string
}

// ListQueueOf is the list queue at key, with its taken tasks in processing ("" for none). It
// reads nothing.
func ListQueueOf(key, processing string) Queue {
	return &ownListQueue{key: key, processing: processing}
}

// Sections are waiting, and in_flight where the queue keeps a processing list.
func (q *ownListQueue) Sections() []TaskSection {
	if q.processing == "" {
		return []TaskSection{SectionWaiting}
	}
	return []TaskSection{SectionWaiting, SectionInFlight}
}

// Stats reads the queue as ListQueueStatsOf does, and its latency from its oldest task's payload
// (latency.go).
func (q *ownListQueue) Stats(ctx context.Context, rdb redis.Cmdable, now time.Time) (QueueStats, error) {
	st, err := store.ListQueueStatsOf(ctx, rdb, q.key, q.processing)
	if err == nil {
		st.Latency, st.LatencyNote, err = ListLatency(ctx, rdb, q.key, st.Length, now)
	}
	return QueueStats{List: &st}, err
}

// jobQueue is one queue of a job library, read and acted on by the library's reader r
// (<library>.go, <library>_tasks.go, <library>_act.go), or, when shared is set, the library's
// shared sets (Sidekiq's scheduled, retry and dead sets; Celery's unacked tasks), which the
// readers list and act on as the queue "".
type jobQueue struct {
	lib    *library
	r      jobReader
	queue  string
	shared bool
}

// Queue is the library's queue named queue. It reads nothing.
func (s Source) Queue(queue string) Queue { return s.queue(queue, false) }

// SharedQueue is what the library keeps for all its queues together (Sidekiq's scheduled, retry
// and dead sets, Celery's unacked tasks): its Stats are what Source.Shared reads, nil where
// the library keeps everything by queue. It reads nothing.
func (s Source) SharedQueue() Queue { return s.queue("", true) }

func (s Source) queue(queue string, shared bool) Queue {
	lib := libraryOf(s.Layout)
	if lib == nil {
		return nil
	}
	return &jobQueue{lib: lib, r: s.reader(), queue: queue, shared: shared}
}

// Sections are the sections the library keeps for the queue, as its reader maps its states.
func (q *jobQueue) Sections() []TaskSection { return q.r.taskSections(q.queue) }

// Stats reads the queue as Source.Stats does, or the shared sets as Source.Shared does.
func (q *jobQueue) Stats(ctx context.Context, rdb redis.Cmdable, now time.Time) (QueueStats, error) {
	if q.shared {
		sh, err := q.r.shared(ctx, rdb, nowOrZero(now))
		if err != nil {
			return QueueStats{}, fmt.Errorf("store: %s: %w", q.lib.layout, err)
		}
		if sh != nil { // the shared sets hold no waiting job: latency is each queue's
			sh.Latency = -1
		}
		return QueueStats{Job: sh}, nil
	}
	now = nowOrZero(now)
	st, err := q.r.stats(ctx, rdb, q.queue, now)
	if err == nil {
		st.Latency, st.LatencyNote, err = waitLatency(ctx, q, rdb, st.Waiting, q.lib.untimed, now)
	}
	if err != nil {
		err = fmt.Errorf("store: %s queue %s: %w", q.lib.layout, q.queue, err)
	}
	return QueueStats{Job: &st}, err
}

// Tasks reads one page of a section as the library's reader lays it out.
func (q *jobQueue) Tasks(ctx context.Context, rdb redis.Cmdable, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	return q.r.tasks(ctx, rdb, q.queue, sec, offset, min(max(count, 1), MaxTaskPage), now)
}

// Act does a to one task as the library itself would.
func (q *jobQueue) Act(ctx context.Context, rdb redis.UniversalClient, sec TaskSection, t Task, a TaskAction, now time.Time) (string, error) {
	return q.r.act(ctx, rdb, q.queue, sec, t, a, now)
}
