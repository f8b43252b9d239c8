package jobs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// The task pages of hourglass's own queues (delayqueue.go, listqueue.go), and of any queue in
// their layout: a delay queue is a sorted set scored by due time beside an in-flight set of
// "<claim id>|<task>" entries scored by their deadline in milliseconds; a list queue is a list
// pushed at the head (LPUSH) and taken from the tail, beside a processing list the taken tasks
// are moved to the head of.
//
// A page reads only its own entries (a ZRANGE or LRANGE window) and the section's size, in one
// pipeline. Redis sends each entry whole, so a page of 1 MB entries costs its count times 1 MB on
// the wire: the page's count bounds that, and the payloads are cut to PayloadCap once here. The
// entries are not cut on the server because the actions need each entry exactly as it is stored.

// Tasks reads one page of a delay queue's section: SectionDue (due by now, the oldest due
// first), SectionLater (the next due first) or SectionInFlight (the in-flight set's entries, the
// oldest deadline first; refused when the queue keeps none), count tasks (1 to MaxTaskPage) from
// offset. now is the server's clock. An AutoUnit queue's unit is found from its oldest and newest
// scores first, in one more round trip.
func (q *ownDelayQueue) Tasks(ctx context.Context, rdb redis.Cmdable, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	key, inFlight, unit := q.key, q.inFlight, q.unit
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Key: key, Offset: offset, Total: -1, ReadAt: now}
	if sec == SectionInFlight {
		if inFlight == "" {
			return page, fmt.Errorf("store: the delay queue %q keeps no in-flight set: %w", key, ErrNotSupported)
		}
		page.Key = inFlight
		return inFlightTasks(ctx, rdb, page, count)
	}
	if sec != SectionDue && sec != SectionLater {
		return page, fmt.Errorf("store: a delay queue has no %s section: %w", sec, ErrNotSupported)
	}
	if unit == store.AutoUnit {
		var empty bool
		var err error
		if unit, empty, err = settleUnit(ctx, rdb, key, now); err != nil || empty {
			page.Total = 0
			return page, err
		}
	}
	by := redis.ZRangeBy{Min: "-inf", Max: unit.Bound(now), Offset: offset, Count: int64(count)}
	if sec == SectionLater {
		by.Min, by.Max = "("+unit.Bound(now), "+inf"
	}
	pipe := rdb.Pipeline()
	zs := pipe.ZRangeByScoreWithScores(ctx, key, &by) // ZRANGEBYSCORE ... LIMIT: every Redis has it
	total := pipe.ZCount(ctx, key, by.Min, by.Max)
	if _, err := pipe.Exec(ctx); err != nil {
		return page, pageError(err, key, zs, total)
	}
	page.Total = total.Val()
	for _, z := range zs.Val() {
		t := entryTask(memberOf(z))
		if unit.Plausible(z.Score, now) {
			t.Due = unit.Time(z.Score)
		} else {
			t.Note = fmt.Sprintf("score %s is not a due time in %s", store.FormatScore(z.Score), unit)
		}
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}

// settleUnit finds the unit of an AutoUnit queue from its oldest and newest scores, as the
// snapshot does; empty says the queue holds nothing.
func settleUnit(ctx context.Context, rdb redis.Cmdable, key string, now time.Time) (store.ScoreUnit, bool, error) {
	pipe := rdb.Pipeline()
	oldest := pipe.ZRangeWithScores(ctx, key, 0, 0)
	newest := pipe.ZRangeWithScores(ctx, key, -1, -1)
	if _, err := pipe.Exec(ctx); err != nil {
		return store.AutoUnit, false, pageError(err, key, oldest, newest)
	}
	if len(oldest.Val()) == 0 || len(newest.Val()) == 0 {
		return store.AutoUnit, true, nil
	}
	u, timed, warning := store.CheckUnit(store.AutoUnit, oldest.Val()[0].Score, newest.Val()[0].Score, now)
	if !timed {
		return store.AutoUnit, false, fmt.Errorf("store: the tasks of %q cannot be split into due and later: %s", key, warning)
	}
	return u, false, nil
}

// inFlightTasks reads a page of an in-flight set: "<claim id>|<task>" entries scored by their
// deadline in milliseconds, the oldest deadline first.
func inFlightTasks(ctx context.Context, rdb redis.Cmdable, page TaskPage, count int) (TaskPage, error) {
	pipe := rdb.Pipeline()
	zs := pipe.ZRangeWithScores(ctx, page.Key, page.Offset, page.Offset+int64(count)-1)
	total := pipe.ZCard(ctx, page.Key)
	if _, err := pipe.Exec(ctx); err != nil {
		return page, pageError(err, page.Key, zs, total)
	}
	page.Total = total.Val()
	for _, z := range zs.Val() {
		t := entryTask(memberOf(z))
		if _, task, ok := strings.Cut(t.Member, "|"); ok {
			t.Payload, t.PayloadBytes = cutPayload(task)
		}
		if store.Milliseconds.Plausible(z.Score, page.ReadAt) {
			t.Deadline = time.UnixMilli(int64(z.Score))
		} else {
			t.Note = fmt.Sprintf("score %s is not a deadline in ms", store.FormatScore(z.Score))
		}
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}

// Tasks reads one page of a list queue's section: SectionWaiting (the list, the next to be taken
// first) or SectionInFlight (the processing list, the longest taken first; refused when the queue
// keeps none), count tasks (1 to MaxTaskPage) from offset. The list is pushed at the head and
// taken from the tail, so both sections read from the tail (negative indexes) and the page is
// turned around into the order the tasks are taken in. now is the server's clock: a list keeps
// no due time or deadline.
func (q *ownListQueue) Tasks(ctx context.Context, rdb redis.Cmdable, sec TaskSection, offset int64, count int, now time.Time) (TaskPage, error) {
	key, processing := q.key, q.processing
	offset, count = pageBounds(offset, count)
	page := TaskPage{Section: sec, Key: key, Offset: offset, Total: -1, ReadAt: now}
	switch sec {
	case SectionWaiting:
	case SectionInFlight:
		if processing == "" {
			return page, fmt.Errorf("store: the list queue %q keeps no processing list: %w", key, ErrNotSupported)
		}
		page.Key = processing
	default:
		return page, fmt.Errorf("store: a list queue has no %s section: %w", sec, ErrNotSupported)
	}
	pipe := rdb.Pipeline()
	// The offset-th from the tail is at -(offset+1); a window past the head comes back short or
	// empty, as Redis clamps the start and drops a stop before the first element.
	els := pipe.LRange(ctx, page.Key, -(offset + int64(count)), -(offset + 1))
	total := pipe.LLen(ctx, page.Key)
	if _, err := pipe.Exec(ctx); err != nil {
		return page, pageError(err, page.Key, els, total)
	}
	page.Total = total.Val()
	vals := els.Val()
	slices.Reverse(vals)
	for _, v := range vals {
		t := entryTask(v)
		t.Enqueued = payloadTime(v, now) // a JSON payload's own time, as ListLatency reads it
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}

// pageBounds clamps a page's count to 1..MaxTaskPage and its offset to where a window's end
// still fits an int64.
func pageBounds(offset int64, count int) (int64, int) {
	return min(max(offset, 0), math.MaxInt64-MaxTaskPage), min(max(count, 1), MaxTaskPage)
}

// entryTask is a task whose entry is its body.
func entryTask(entry string) Task {
	t := Task{Member: entry}
	t.Payload, t.PayloadBytes = cutPayload(entry)
	return t
}

// memberOf is a sorted set member read back: go-redis gives it as a string.
func memberOf(z redis.Z) string {
	m, _ := z.Member.(string)
	return m
}

// cutPayload is a preview of body (its first PayloadCap bytes, raw) and its whole size.
func cutPayload(body string) (string, int64) {
	if len(body) > PayloadCap {
		return body[:PayloadCap], int64(len(body))
	}
	return body, int64(len(body))
}

// pageError names the command Redis refused in a page's pipeline and the key it was about (a
// WRONGTYPE, a NOPERM); an error that is not a reply (a lost connection, a timeout) is returned
// as it is, wrapped, for the caller to retry.
func pageError(err error, key string, cmds ...redis.Cmder) error {
	var re redis.Error
	if errors.As(err, &re) {
		for _, c := range cmds {
			if errors.As(c.Err(), &re) {
				return &store.CommandError{Command: strings.ToUpper(c.Name()), Key: key, Err: c.Err()}
			}
		}
	}
	return fmt.Errorf("store: reading the tasks of %q: %w", key, err)
}
