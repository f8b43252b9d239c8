package jobs

// BullMQ's tasks, page by page (the layout is in bullmq.go). Each entry is a job id; the job
// is the hash <prefix>:<queue>:<id>, of which a page reads name, data and timestamp:
//
//	waiting    wait, then paused, then prioritized, as a worker takes them (moveToActive pops
//	           wait from the tail, RPOPLPUSH, and only an empty wait from prioritized, lowest
//	           score first); a paused queue's jobs are in paused (pause renames wait), read from
//	           the tail as wait is
//	later      delayed zset, the next due first: Due is the score's milliseconds (score = due ms
//	           × 0x1000 + a 12-bit counter); the jobs already due that no worker has promoted
//	           yet come first
//	in_flight  active list, the longest held first (taken from the tail of wait, pushed at the
//	           head of active): Deadline is when the worker's lock <id>:lock expires (its PTTL
//	           against now), as the lock is what BullMQ's stalled check goes by
//	dead       failed zset, scored by when the job failed: the newest first
//
// BullMQ keeps no retry set (a retry goes back to wait or, with backoff, to delayed), so there is
// no retry section. Payload is the job's name, a space and its data (the JSON BullMQ stored);
// Enqueued its timestamp (ms). A wait list's last element "0:<n>" is BullMQ 4's marker, not a job.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// taskSections are a queue's: BullMQ keeps everything by queue.
func (j bullmqJobs) taskSections(queue string) []TaskSection {
	return byQueue(queue, SectionWaiting, SectionLater, SectionInFlight, SectionDead)
}

// bullmqParts are the keys a section is read from, in order.
func (j bullmqJobs) bullmqParts(queue string, sec TaskSection) []taskPart {
	switch sec {
	case SectionWaiting:
		return []taskPart{
			{key: j.queueKey(queue, "wait"), kind: listFromTail},
			{key: j.queueKey(queue, "paused"), kind: listFromTail},
			{key: j.queueKey(queue, "prioritized"), kind: zsetAsc},
		}
	case SectionLater:
		return []taskPart{{key: j.queueKey(queue, "delayed"), kind: zsetAsc}}
	case SectionInFlight:
		return []taskPart{{key: j.queueKey(queue, "active"), kind: listFromTail}}
	case SectionDead:
		return []taskPart{{key: j.queueKey(queue, "failed"), kind: zsetDesc}}
	}
	return nil
}

func (j bullmqJobs) tasks(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Offset: offset, Total: -1, ReadAt: now}
	parts := j.bullmqParts(queue, sec)
	if queue == "" || parts == nil {
		return page, noSection(BullMQ, queue, sec)
	}
	entries, err := page.read(ctx, rdb, parts, offset, count)
	if err != nil {
		return page, err
	}
	page.Tasks, err = j.bullmqJobs(ctx, rdb, queue, sec, entries, now)
	return page, err
}

// bullmqJobs reads the jobs the entries name, one HMGET each (and the lock's PTTL of each job in
// flight), in one pipeline.
func (j bullmqJobs) bullmqJobs(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, entries []partEntry, now time.Time) ([]Task, error) {
	pipe := rdb.Pipeline()
	hashes := make([]*redis.SliceCmd, len(entries))
	locks := make([]*redis.DurationCmd, len(entries))
	for i, e := range entries {
		hashes[i] = pipe.HMGet(ctx, j.queueKey(queue, e.member), "name", "data", "timestamp")
		if sec == SectionInFlight {
			locks[i] = pipe.PTTL(ctx, j.queueKey(queue, e.member+":lock"))
		}
	}
	if err := execPage(ctx, pipe); err != nil {
		return nil, err
	}
	tasks := make([]Task, len(entries))
	for i, e := range entries {
		t := Task{Member: e.member, ID: e.member}
		f, there := jobFields(hashes[i])
		switch {
		case there:
			t.Payload, t.PayloadBytes = cutPayload(f[0] + " " + f[1])
			if ms, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				t.Enqueued = time.UnixMilli(ms)
			}
		case strings.HasPrefix(e.member, "0:"):
			t.ID, t.PayloadBytes, t.Note = "", -1, "BullMQ 4's marker, not a job"
		default:
			jobGone(&t)
		}
		switch {
		case sec == SectionLater && store.BullMQScore.Plausible(e.score, now):
			t.Due = store.BullMQScore.Time(e.score)
		case sec == SectionLater:
			t.Note = fmt.Sprintf("score %s is not a due time in BullMQ's encoding", store.FormatScore(e.score))
		case sec == SectionInFlight:
			bullmqLock(&t, locks[i].Val(), now)
		}
		tasks[i] = t
	}
	return tasks, nil
}

// bullmqLock sets an active job's deadline from its lock's PTTL.
func bullmqLock(t *Task, pttl time.Duration, now time.Time) {
	switch {
	case pttl >= 0:
		t.Deadline = now.Add(pttl)
	case t.Note != "":
	case pttl == -2: // go-redis gives PTTL's -2 and -1 as durations of -2 and -1 ns
		t.Note = "no lock: its worker stopped renewing it, and BullMQ's stalled check will move the job back to wait"
	default:
		t.Note = "its lock never expires"
	}
}
