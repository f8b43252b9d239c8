package jobs

// Celery's tasks, page by page (the layout, kombu's redis transport, is in celery.go):
//
//	waiting    <queue>, then <queue>\x06\x16<n> for n 1..9: lists, LPUSHed by a producer; a
//	           worker's BRPOP names the lists priority step 0 first, so it takes from the tail
//	           of the queue's own list first, then of each priority list in turn. Each entry is
//	           the message itself.
//	in_flight  (shared, queue "") unacked_index, the delivery tags by when each was delivered
//	           (float seconds), the oldest first, with the message from the unacked hash (JSON
//	           [message, exchange, routing key]). Deadline is the delivery plus kombu's default
//	           visibility_timeout, 1 h, when a worker puts the message back in its queue; an app
//	           that sets another visibility_timeout has other deadlines, which Redis does not keep.
//
// Celery keeps ETA tasks and retries in the worker's memory and finished tasks only in a result
// backend: there is no later, retry or dead section. Payload is the task's name (the message's
// headers.task) and its body decoded (base64, then JSON shown compact: Celery's [args, kwargs,
// embed]); a message that cannot be decoded is shown as stored. ID is headers.id; Due a
// message's headers.eta (a countdown or ETA task); kombu keeps no time a message was sent.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// kombuVisibility is kombu's default visibility_timeout.
const kombuVisibility = time.Hour

func (j celeryJobs) taskSections(queue string) []TaskSection {
	if queue == "" {
		return []TaskSection{SectionInFlight}
	}
	return []TaskSection{SectionWaiting}
}

func (j celeryJobs) tasks(ctx context.Context, rdb redis.Cmdable, queue string, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Offset: offset, Total: -1, ReadAt: now}
	var parts []taskPart
	switch {
	case queue != "" && sec == SectionWaiting:
		for _, k := range j.celeryListNames(queue) {
			parts = append(parts, taskPart{key: k, kind: listFromTail})
		}
	case queue == "" && sec == SectionInFlight:
		parts = []taskPart{{key: j.unackedIndexKey(), kind: zsetAsc}}
	default:
		return page, noSection(Celery, queue, sec)
	}
	entries, err := page.read(ctx, rdb, parts, offset, count)
	if err != nil {
		return page, err
	}
	if sec == SectionWaiting {
		for _, e := range entries {
			page.Tasks = append(page.Tasks, celeryTask(e.member, e.member))
		}
		return page, nil
	}
	page.Tasks, err = j.celeryUnacked(ctx, rdb, entries, now)
	return page, err
}

// celeryUnacked reads the messages of delivery tags, in one HMGET of the unacked hash.
func (j celeryJobs) celeryUnacked(ctx context.Context, rdb redis.Cmdable, entries []partEntry, now time.Time) ([]Task, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	tags := make([]string, len(entries))
	for i, e := range entries {
		tags[i] = e.member
	}
	pipe := rdb.Pipeline()
	msgs := pipe.HMGet(ctx, j.unackedKey(), tags...)
	if err := execPage(ctx, pipe); err != nil {
		return nil, err
	}
	tasks := make([]Task, len(entries))
	for i, e := range entries {
		raw, ok := msgs.Val()[i].(string)
		var t Task
		var rec []json.RawMessage // [message, exchange, routing key]
		switch {
		case !ok:
			t = Task{Member: e.member, PayloadBytes: -1, Note: "message gone from unacked: acknowledged or put back since"}
		case json.Unmarshal([]byte(raw), &rec) != nil || len(rec) != 3:
			t = Task{Member: e.member, Note: "not kombu's [message, exchange, routing key]"}
			t.Payload, t.PayloadBytes = cutPayload(raw)
		default:
			t = celeryTask(e.member, string(rec[0]))
		}
		if store.Seconds.Plausible(e.score, now) {
			t.Deadline = store.Seconds.Time(e.score).Add(kombuVisibility)
		} else if t.Note == "" {
			t.Note = fmt.Sprintf("score %s is not a time in seconds", store.FormatScore(e.score))
		}
		tasks[i] = t
	}
	return tasks, nil
}

// kombuMessage is the part of a kombu message a page shows.
type kombuMessage struct {
	Body        string         `json:"body"`
	ContentType string         `json:"content-type"`
	Headers     map[string]any `json:"headers"`
	Properties  struct {
		BodyEncoding string `json:"body_encoding"`
	} `json:"properties"`
}

// celeryTask is the task of member (a list's element, or a delivery tag) whose message is msg.
func celeryTask(member, msg string) Task {
	t := Task{Member: member}
	var m kombuMessage
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		t.Payload, t.PayloadBytes = cutPayload(msg)
		t.Note = "not a kombu message: shown as stored"
		return t
	}
	t.ID, _ = m.Headers["id"].(string)
	if eta, ok := m.Headers["eta"].(string); ok {
		t.Due, _ = time.Parse(time.RFC3339Nano, eta)
	}
	body := []byte(m.Body)
	if m.Properties.BodyEncoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(m.Body)
		if err != nil {
			t.Payload, t.PayloadBytes = cutPayload(msg)
			t.Note = "its body is not base64: the message is shown as stored"
			return t
		}
		body = b
	}
	if m.ContentType == "application/json" {
		var compact bytes.Buffer
		if json.Compact(&compact, body) == nil {
			body = compact.Bytes()
		}
	}
	if task, _ := m.Headers["task"].(string); task != "" {
		body = append([]byte(task+" "), body...)
	}
	t.Payload, t.PayloadBytes = cutPayload(string(body))
	return t
}
