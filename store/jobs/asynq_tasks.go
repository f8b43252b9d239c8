package jobs

// asynq's tasks, page by page (the layout is in asynq.go). Each entry is a task id; the
// task is the hash asynq:{<queue>}:t:<id>, of which a page reads msg (the protobuf TaskMessage)
// and pending_since:
//
//	waiting    pending    list, LPUSHed; a server's dequeue takes from the tail (RPOPLPUSH to
//	                      active): the page reads from the tail, as asynq's Inspector lists it
//	later      scheduled  zset by due time (Unix seconds): the next due first; the ones already
//	                      due that no forwarder has moved yet come first
//	retry      retry      zset by when it runs again (Unix seconds): the next first
//	dead       archived   zset by when it was archived: the newest first
//	in_flight  active     list, taken into at the head: the longest held first, as the
//	                      Inspector lists it; Deadline is the task's lease in the lease zset
//	                      (Unix seconds), which its server extends while it runs the task and
//	                      past which asynq's recoverer takes the task for orphaned
//
// Completed and aggregating tasks are in no section. Payload is the task's type, a space and its
// payload (raw bytes), read from msg with the few lines of protobuf below rather than asynq's
// generated code; Enqueued is pending_since (Unix ns), which asynq sets when the task becomes
// pending and drops when a server takes it (a pending task archived keeps it).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// taskSections are a queue's: asynq keeps its tasks by queue.
func (j asynqJobs) taskSections(queue string) []TaskSection {
	return byQueue(queue, SectionWaiting, SectionLater, SectionRetry, SectionInFlight, SectionDead)
}

// asynqParts are the sections' keys' suffixes and how each is read.
var asynqParts = map[TaskSection]struct {
	suffix string
	kind   partKind
}{
	SectionWaiting: {"pending", listFromTail}, SectionLater: {"scheduled", zsetAsc}, SectionRetry: {"retry", zsetAsc},
	SectionDead: {"archived", zsetDesc}, SectionInFlight: {"active", listFromTail},
}

func (j asynqJobs) tasks(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Offset: offset, Total: -1, ReadAt: now}
	p, ok := asynqParts[sec]
	if queue == "" || !ok {
		return page, noSection(Asynq, queue, sec)
	}
	entries, err := page.read(ctx, rdb, []taskPart{{key: j.queueKey(queue, p.suffix), kind: p.kind}}, offset, count)
	if err != nil {
		return page, err
	}
	pipe := rdb.Pipeline()
	hashes := make([]*redis.SliceCmd, len(entries))
	leases := make([]*redis.FloatCmd, len(entries))
	for i, e := range entries {
		hashes[i] = pipe.HMGet(ctx, j.queueKey(queue, "t:"+e.member), "msg", "pending_since")
		if sec == SectionInFlight {
			leases[i] = pipe.ZScore(ctx, j.queueKey(queue, "lease"), e.member)
		}
	}
	if err := execPage(ctx, pipe); err != nil {
		return page, err
	}
	for i, e := range entries {
		t := asynqTask(e.member, hashes[i])
		switch sec {
		case SectionLater, SectionRetry:
			secondsAt(&t, &t.Due, e.score, now)
		case SectionInFlight:
			if lease, err := leases[i].Result(); err == nil {
				secondsAt(&t, &t.Deadline, lease, now)
			} else if t.Note == "" {
				t.Note = "no lease: asynq's recoverer takes the task for orphaned"
			}
		}
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}

// secondsAt sets *at to the time score gives in Unix seconds, or says it is none.
func secondsAt(t *Task, at *time.Time, score float64, now time.Time) {
	if store.Seconds.Plausible(score, now) {
		*at = store.Seconds.Time(score)
	} else if t.Note == "" {
		t.Note = fmt.Sprintf("score %s is not a time in seconds", store.FormatScore(score))
	}
}

// asynqTask is the task id whose hash HMGET read.
func asynqTask(id string, hash *redis.SliceCmd) Task {
	t := Task{Member: id, ID: id}
	f, there := jobFields(hash)
	if !there {
		jobGone(&t)
		return t
	}
	typ, payload, err := asynqMessage(f[0])
	if err != nil {
		t.Payload, t.PayloadBytes = cutPayload(f[0])
		t.Note = "its message is not asynq's protobuf (" + err.Error() + "): shown as stored"
		return t
	}
	t.Payload, t.PayloadBytes = cutPayload(typ + " " + payload)
	if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
		t.Enqueued = time.Unix(0, ns)
	}
	return t
}

// asynqMessage reads a TaskMessage's type (field 1, a string) and payload (field 2, bytes),
// skipping its other fields: each field is a varint key (field number << 3 | wire type) and a
// value, a varint (0), 8 bytes (1), a varint length and that many bytes (2) or 4 bytes (5).
func asynqMessage(msg string) (typ, payload string, err error) {
	b := []byte(msg)
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return "", "", errors.New("a field key cut short")
		}
		b = b[n:]
		var size uint64
		switch key & 7 {
		case 0:
			if _, n = binary.Uvarint(b); n <= 0 {
				return "", "", errors.New("a varint cut short")
			}
			size = uint64(n)
		case 1:
			size = 8
		case 5:
			size = 4
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 {
				return "", "", errors.New("a length cut short")
			}
			b = b[n:]
			size = l
		default:
			return "", "", fmt.Errorf("wire type %d", key&7)
		}
		if size > uint64(len(b)) {
			return "", "", errors.New("a field longer than the message")
		}
		switch key {
		case 1<<3 | 2:
			typ = string(b[:size])
		case 2<<3 | 2:
			payload = string(b[:size])
		}
		b = b[size:]
	}
	return typ, payload, nil
}
