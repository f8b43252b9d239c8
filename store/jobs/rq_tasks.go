package jobs

// RQ's tasks, page by page (the layout is in rq.go). Each entry is a job id; the job is the
// hash rq:job:<id>, of which a page reads description, enqueued_at and created_at:
//
//	waiting    rq:queue:<q>      list, RPUSHed and LPOPed by a worker: the first element is
//	                             taken next, so the page reads from the head
//	later      rq:scheduled:<q>  zset by due time (whole seconds): the next due first; the ones
//	                             already due that no scheduler has moved yet come first
//	in_flight  rq:wip:<q>        the started registry, by when the worker's claim expires
//	                             (Deadline): the oldest deadline first
//	dead       rq:failed:<q>     the failed registry, by when the failure expires (failure_ttl
//	                             after it failed): the newest first
//
// The started and failed registries leave out the entries expired by now (score up to now, in
// whole seconds), as RQ's own listing does after the cleanup it makes first and as the queue's
// counts do; hourglass does not clean them up. A started entry scored +inf has no deadline (a job
// without a timeout). Deferred and canceled jobs are in no section. Payload is the job's
// description, the call RQ shows ("jobs.send('user-1')"): its data is a pickle, maybe
// compressed, which hourglass does not unpickle. Enqueued is enqueued_at, or created_at for a job
// that was never enqueued (scheduled); RQ writes both as UTC "2006-01-02T15:04:05.000000Z".

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// taskSections are a queue's: RQ keeps its jobs by queue.
func (j rqJobs) taskSections(queue string) []TaskSection {
	return byQueue(queue, SectionWaiting, SectionLater, SectionInFlight, SectionDead)
}

// rqPart is the key a section is read from; expired is RQ's bound of expired registry entries.
func (j rqJobs) rqPart(queue string, sec TaskSection, now time.Time) (taskPart, bool) {
	expired := strconv.FormatInt(now.Unix(), 10) // RQ's current_timestamp(): whole seconds
	switch sec {
	case SectionWaiting:
		return taskPart{key: j.key("queue", queue), kind: listFromHead}, true
	case SectionLater:
		return taskPart{key: j.key("scheduled", queue), kind: zsetAsc}, true
	case SectionInFlight:
		return taskPart{key: j.key("wip", queue), kind: zsetAsc, from: expired}, true
	case SectionDead:
		return taskPart{key: j.key("failed", queue), kind: zsetDesc, from: expired}, true
	}
	return taskPart{}, false
}

func (j rqJobs) tasks(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Offset: offset, Total: -1, ReadAt: now}
	part, ok := j.rqPart(queue, sec, now)
	if queue == "" || !ok {
		return page, noSection(RQ, queue, sec)
	}
	entries, err := page.read(ctx, rdb, []taskPart{part}, offset, count)
	if err != nil {
		return page, err
	}
	pipe := rdb.Pipeline()
	hashes := make([]*redis.SliceCmd, len(entries))
	for i, e := range entries {
		hashes[i] = pipe.HMGet(ctx, j.key("job", e.member), "description", "enqueued_at", "created_at")
	}
	if err := execPage(ctx, pipe); err != nil {
		return page, err
	}
	for i, e := range entries {
		t := Task{Member: e.member, ID: e.member}
		if f, there := jobFields(hashes[i]); there {
			t.Payload, t.PayloadBytes = cutPayload(f[0])
			t.Enqueued = rqTime(f[1], f[2])
		} else {
			jobGone(&t)
		}
		rqScore(&t, sec, e.score, now)
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}

// rqScore sets a scheduled job's due time or a started job's deadline from its score.
func rqScore(t *Task, sec TaskSection, score float64, now time.Time) {
	if sec != SectionLater && sec != SectionInFlight {
		return
	}
	switch {
	case sec == SectionLater && store.Seconds.Plausible(score, now):
		t.Due = store.Seconds.Time(score)
	case sec == SectionInFlight && store.Seconds.Plausible(score, now):
		t.Deadline = store.Seconds.Time(score)
	case sec == SectionInFlight && math.IsInf(score, 1):
		if t.Note == "" {
			t.Note = "no deadline: the job runs without a timeout"
		}
	default:
		t.Note = fmt.Sprintf("score %s is not a time in seconds", store.FormatScore(score))
	}
}

// rqTime is the first of RQ's timestamps given that reads.
func rqTime(stamps ...string) time.Time {
	for _, s := range stamps {
		if at, err := time.Parse("2006-01-02T15:04:05.999999Z", s); err == nil {
			return at
		}
	}
	return time.Time{}
}
