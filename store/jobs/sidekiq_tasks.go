package jobs

// Sidekiq's tasks, page by page (the layout is in sidekiq.go). Each entry is the job itself,
// the JSON Sidekiq pushed ({"class", "args", "jid", "queue", "created_at", "enqueued_at", ...}):
//
//	waiting  queue:<q>  list, LPUSHed by the client and BRPOPed by a process from the tail: the
//	                    last element is taken next, so the page reads from the tail
//	later    schedule   zset (shared), by due time in float seconds: the next due first; the
//	                    jobs already due that a poller has not moved yet come first
//	retry    retry      zset (shared), by retry time in float seconds: the next retry first
//	dead     dead       zset (shared), by when the job died: the newest first
//
// Open-source Sidekiq keeps no in-flight list: a running job is in its process's workers hash,
// gone with the process, so there is no in-flight section. ID is the job's jid; Enqueued its
// enqueued_at, or created_at for a job that was scheduled (Sidekiq drops enqueued_at then), read
// in float seconds (Sidekiq 6 and 7) or integer milliseconds, whichever the value is; Due is the
// score, for later and retry (a dead job's score is when it died, not a due time).

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

func (j sidekiqJobs) taskSections(queue string) []TaskSection {
	if queue == "" {
		return []TaskSection{SectionLater, SectionRetry, SectionDead}
	}
	return []TaskSection{SectionWaiting}
}

// sidekiqPart is the key a section is read from.
func (j sidekiqJobs) sidekiqPart(queue string, sec TaskSection) (taskPart, bool) {
	switch {
	case queue != "" && sec == SectionWaiting:
		return taskPart{key: j.key("queue:" + queue), kind: listFromTail}, true
	case queue == "" && sec == SectionLater:
		return taskPart{key: j.key("schedule"), kind: zsetAsc}, true
	case queue == "" && sec == SectionRetry:
		return taskPart{key: j.key("retry"), kind: zsetAsc}, true
	case queue == "" && sec == SectionDead:
		return taskPart{key: j.key("dead"), kind: zsetDesc}, true
	}
	return taskPart{}, false
}

func (j sidekiqJobs) tasks(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Offset: offset, Total: -1, ReadAt: now}
	part, ok := j.sidekiqPart(queue, sec)
	if !ok {
		return page, noSection(Sidekiq, queue, sec)
	}
	entries, err := page.read(ctx, rdb, []taskPart{part}, offset, count)
	if err != nil {
		return page, err
	}
	for _, e := range entries {
		t := sidekiqTask(e.member, now)
		if sec == SectionLater || sec == SectionRetry {
			if store.Seconds.Plausible(e.score, now) {
				t.Due = store.Seconds.Time(e.score)
			} else {
				t.Note = fmt.Sprintf("score %s is not a time in seconds", store.FormatScore(e.score))
			}
		}
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}

// sidekiqTask is a Sidekiq job entry, its jid and when it was enqueued read from its JSON.
func sidekiqTask(entry string, now time.Time) Task {
	t := entryTask(entry)
	var job struct {
		JID        any `json:"jid"`
		EnqueuedAt any `json:"enqueued_at"`
		CreatedAt  any `json:"created_at"`
	}
	if err := json.Unmarshal([]byte(entry), &job); err != nil {
		t.Note = "not a JSON object: Sidekiq could not run it"
		return t
	}
	t.ID, _ = job.JID.(string)
	at, ok := job.EnqueuedAt.(float64)
	if !ok {
		at, ok = job.CreatedAt.(float64)
	}
	if u, plausible := store.GuessUnit(at, now); ok && plausible && (u == store.Seconds || u == store.Milliseconds) {
		t.Enqueued = u.Time(at)
	}
	return t
}
