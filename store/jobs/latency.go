package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// A queue's latency is how long its oldest waiting task has waited: the server's now minus when
// the task was enqueued, as the layout itself defines it, read from the one task a page of the
// waiting section shows first (the next to be taken, the oldest):
//
//	Sidekiq  Queue#latency: the oldest entry of queue:<name> (LINDEX -1), now - enqueued_at
//	RQ       the oldest job of rq:queue:<name> (LINDEX 0), now - its hash's enqueued_at
//	asynq    QueueInfo.Latency: the oldest of asynq:{<q>}:pending (LINDEX -1), now - pending_since
//	BullMQ   the oldest job of <prefix>:<q>:wait (LINDEX -1), now - its hash's timestamp
//	Celery   unknown: kombu's messages carry no time they were sent
//	a list   the oldest task's payload, when it is a JSON object with a time (payloadTimeFields)
//
// A queue with none waiting has waited 0, as Sidekiq says. A task whose time is missing or not a
// time leaves the latency unknown, with why: never a latency of 0 for a task that waits.

// waitLatency reads the latency of queue q, of which waiting tasks wait (Absent: the layout
// keeps none there): -1 when it is unknown, with why. untimed says why when the layout's tasks
// carry no time at all, so nothing is read ("" when they do).
func waitLatency(ctx context.Context, q Queue, rdb redis.Cmdable, waiting int64, untimed string, now time.Time) (time.Duration, string, error) {
	switch {
	case waiting == Absent:
		return -1, "the library keeps no waiting tasks here", nil
	case waiting == 0:
		return 0, "", nil
	case untimed != "":
		return -1, untimed, nil
	}
	page, err := q.Tasks(ctx, rdb, SectionWaiting, 0, 1, now)
	if err != nil {
		return -1, "", err
	}
	switch {
	case len(page.Tasks) == 0: // taken since the count was read
		return 0, "", nil
	case !page.Tasks[0].Enqueued.IsZero():
		return max(now.Sub(page.Tasks[0].Enqueued), 0), "", nil
	}
	why := "the oldest waiting task carries no enqueue time"
	if n := page.Tasks[0].Note; n != "" {
		why += " (" + n + ")"
	}
	return -1, why, nil
}

// payloadTimeFields are the fields of a JSON payload that say when a task was enqueued, in the
// order they are looked for: a number of Unix seconds, milliseconds or microseconds, or an
// RFC 3339 string.
var payloadTimeFields = []string{"enqueued_at", "created_at", "timestamp", "ts", "time"}

// payloadTime is when a task whose payload is a JSON object says it was enqueued; zero when it
// says nothing (not JSON, no such field, or a value that is no plausible time at now).
func payloadTime(payload string, now time.Time) time.Time {
	if len(payload) == 0 || payload[0] != '{' {
		return time.Time{}
	}
	var fields map[string]any
	if json.Unmarshal([]byte(payload), &fields) != nil {
		return time.Time{}
	}
	for _, name := range payloadTimeFields {
		switch v := fields[name].(type) {
		case float64:
			for _, u := range []store.ScoreUnit{store.Seconds, store.Milliseconds, store.Microseconds} {
				if u.Plausible(v, now) {
					return u.Time(v)
				}
			}
		case string:
			if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return at
			}
		}
	}
	return time.Time{}
}

// ListLatency is the latency of the list queue at key, whose length is known: from its oldest
// task's payload (the tail, which Pop takes next: one LINDEX, the length already read), or
// unknown with why.
func ListLatency(ctx context.Context, rdb redis.Cmdable, key string, length int64, now time.Time) (time.Duration, string, error) {
	if length <= 0 {
		return 0, "", nil
	}
	oldest, err := rdb.LIndex(ctx, key, -1).Result()
	switch {
	case errors.Is(err, redis.Nil): // emptied since its length was read
		return 0, "", nil
	case err != nil:
		return -1, "", err
	}
	at := payloadTime(oldest, nowOrZero(now))
	if at.IsZero() {
		return -1, "its oldest task's payload holds no time (a JSON " + strings.Join(payloadTimeFields, ", ") + " field)", nil
	}
	return max(nowOrZero(now).Sub(at), 0), "", nil
}
