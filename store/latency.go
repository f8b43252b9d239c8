package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// A job queue's latency is how long its oldest waiting job has waited: the server's now minus
// when the job was enqueued, as the library itself defines it, read from the one task a page of
// the waiting section shows first (the next to be taken, the oldest):
//
//	Sidekiq  Queue#latency: the oldest entry of queue:<name> (LINDEX -1), now - enqueued_at
//	RQ       the oldest job of rq:queue:<name> (LINDEX 0), now - its hash's enqueued_at
//	asynq    QueueInfo.Latency: the oldest of asynq:{<q>}:pending (LINDEX -1), now - pending_since
//	BullMQ   the oldest job of <prefix>:<q>:wait (LINDEX -1), now - its hash's timestamp
//	Celery   unknown: kombu's messages carry no time they were sent
//
// A queue with none waiting has waited 0, as Sidekiq says. A job whose time is missing or not a
// time leaves the latency unknown, with why: never a latency of 0 for a job that waits.

// latencyOf reads the latency of queue q, whose waiting count st already holds, into st; noTime
// is why it is unknown when the oldest job carries no time ("" for the general reason).
func latencyOf(ctx context.Context, q Queue, rdb redis.Cmdable, st *JobStats, noTime string, now time.Time) error {
	st.Latency = -1
	switch {
	case st.Waiting == Absent:
		st.LatencyNote = "the library keeps no waiting jobs here"
		return nil
	case st.Waiting == 0:
		st.Latency = 0
		return nil
	}
	page, err := q.Tasks(ctx, rdb, SectionWaiting, 0, 1, now)
	if err != nil {
		return err
	}
	switch {
	case len(page.Tasks) == 0: // taken since the count was read
		st.Latency = 0
	case page.Tasks[0].Enqueued.IsZero() && noTime != "":
		st.LatencyNote = noTime
	case page.Tasks[0].Enqueued.IsZero():
		st.LatencyNote = "the oldest waiting job carries no enqueue time"
		if n := page.Tasks[0].Note; n != "" {
			st.LatencyNote += " (" + n + ")"
		}
	default:
		st.Latency = max(now.Sub(page.Tasks[0].Enqueued), 0)
	}
	return nil
}
