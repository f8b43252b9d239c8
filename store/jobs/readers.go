package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Helpers the job libraries' readers (<library>.go) share.

// atoiOrZero reads a counter a library stores as a string: a missing one counts 0, as it does for
// the library (Ruby's nil.to_i), and so does one that is not a number.
func atoiOrZero(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// execReads runs a pipeline of reads in which a missing key (redis.Nil, as GET and HGET answer
// it) is an answer, not an error; the first other error is returned, whichever command had it.
func execReads(ctx context.Context, pipe redis.Pipeliner) error {
	if pipe.Len() == 0 {
		return nil
	}
	cmds, err := pipe.Exec(ctx)
	if err == nil {
		return nil
	}
	for _, c := range cmds {
		if e := c.Err(); e != nil && !errors.Is(e, redis.Nil) {
			return e
		}
	}
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// scheduleOf reads a library's set of jobs due later, scored by due time in seconds, as a delay
// queue. The set not being there is no warning: Redis deletes an emptied sorted set, so a
// library's set that is not there is just empty.
func scheduleOf(ctx context.Context, rdb redis.Cmdable, key string, now time.Time) (*store.DelayQueueStats, error) {
	st, err := store.DelayQueueStatsOf(ctx, rdb, key, "", store.Seconds, now)
	if err != nil {
		return nil, err
	}
	st.Missing = false
	return &st, nil
}

// A job library's task section is read from one key, or from a few in the order the library
// takes from them (BullMQ's wait list before its prioritized set, kombu's priority lists): each a
// taskPart, read as one sequence.
type taskPart struct {
	key  string
	kind partKind
	// from is a sorted set's lowest score counted, exclusive ("" counts the whole set): RQ's
	// registries leave out the entries expired by now, as RQ's own listing does.
	from string
}

type partKind uint8

const (
	listFromTail partKind = iota // pushed at the head (LPUSH), taken from the tail: the last is next
	listFromHead                 // pushed at the tail (RPUSH), taken from the head: the first is next
	zsetAsc                      // the lowest score first
	zsetDesc                     // the highest score first (the newest)
)

// partEntry is one entry read from a part, with its score when the part is a sorted set.
type partEntry struct {
	member string
	score  float64
}

// read reads the page's window of the sequence parts make (readParts): the page's Key is the
// first part's, its Total their sizes added up, and the entries read are returned.
func (p *TaskPage) read(ctx context.Context, rdb redis.Cmdable, parts []taskPart, offset int64, count int) ([]partEntry, error) {
	p.Key = parts[0].key
	total, entries, err := readParts(ctx, rdb, parts, offset, count)
	if err != nil {
		return nil, err
	}
	p.Total = total
	return entries, nil
}

// absentStats are a queue's counts where the library keeps none of the usual ones (each Absent),
// with the states it does keep under its own names.
func absentStats(states map[string]int64) Stats {
	return Stats{Waiting: Absent, Active: Absent, Scheduled: Absent, Retry: Absent, Dead: Absent, Completed: Absent, States: states}
}

// readParts reads the window [offset, offset+count) of the sequence parts make, and its size,
// each part read only where the window falls: one pipeline for the sizes and the first part's
// window, and one more only when the window runs into the later parts.
func readParts(ctx context.Context, rdb redis.Cmdable, parts []taskPart, offset int64, count int) (int64, []partEntry, error) {
	pipe := rdb.Pipeline()
	sizes := make([]*redis.IntCmd, len(parts))
	for i, p := range parts {
		sizes[i] = p.size(ctx, pipe)
	}
	first := parts[0].window(ctx, pipe, offset, int64(count))
	if err := execPage(ctx, pipe); err != nil {
		return -1, nil, err
	}
	var total int64
	for _, s := range sizes {
		total += s.Val()
	}
	entries := first()
	if len(parts) == 1 || offset+int64(count) <= sizes[0].Val() {
		return total, entries, nil
	}
	pipe = rdb.Pipeline()
	var rest []func() []partEntry
	start, end := offset-sizes[0].Val(), offset+int64(count)-sizes[0].Val() // in the parts after the first
	for i, p := range parts[1:] {
		if n := sizes[i+1].Val(); end > 0 && start < n {
			rest = append(rest, p.window(ctx, pipe, max(start, 0), end-max(start, 0)))
		}
		start, end = start-sizes[i+1].Val(), end-sizes[i+1].Val()
	}
	if err := execPage(ctx, pipe); err != nil {
		return -1, nil, err
	}
	for _, r := range rest {
		entries = append(entries, r()...)
	}
	return total, entries[:min(len(entries), count)], nil
}

func (p taskPart) size(ctx context.Context, pipe redis.Pipeliner) *redis.IntCmd {
	switch {
	case p.kind == listFromTail || p.kind == listFromHead:
		return pipe.LLen(ctx, p.key)
	case p.from != "":
		return pipe.ZCount(ctx, p.key, "("+p.from, "+inf")
	}
	return pipe.ZCard(ctx, p.key)
}

// window queues the read of n entries from the off-th, and returns how to take them in order
// once the pipeline has run.
func (p taskPart) window(ctx context.Context, pipe redis.Pipeliner, off, n int64) func() []partEntry {
	switch p.kind {
	case listFromTail, listFromHead:
		start, stop := off, off+n-1
		if p.kind == listFromTail { // the off-th from the tail is at -(off+1)
			start, stop = -(off + n), -(off + 1)
		}
		els := pipe.LRange(ctx, p.key, start, stop)
		return func() []partEntry {
			out := make([]partEntry, len(els.Val()))
			for i, v := range els.Val() {
				out[i].member = v
			}
			if p.kind == listFromTail {
				slices.Reverse(out)
			}
			return out
		}
	}
	var zs *redis.ZSliceCmd
	switch by := (redis.ZRangeBy{Min: "(" + p.from, Max: "+inf", Offset: off, Count: n}); {
	case p.from != "" && p.kind == zsetAsc:
		zs = pipe.ZRangeByScoreWithScores(ctx, p.key, &by)
	case p.from != "":
		zs = pipe.ZRevRangeByScoreWithScores(ctx, p.key, &by)
	case p.kind == zsetAsc:
		zs = pipe.ZRangeWithScores(ctx, p.key, off, off+n-1)
	default:
		zs = pipe.ZRevRangeWithScores(ctx, p.key, off, off+n-1)
	}
	return func() []partEntry {
		out := make([]partEntry, len(zs.Val()))
		for i, z := range zs.Val() {
			out[i] = partEntry{member: memberOf(z), score: z.Score}
		}
		return out
	}
}

// execPage runs a page's pipeline of reads; a refusal names the command and its key.
func execPage(ctx context.Context, pipe redis.Pipeliner) error {
	cmds, err := pipe.Exec(ctx)
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	for _, c := range cmds {
		if e := c.Err(); e != nil && !errors.Is(e, redis.Nil) {
			return pageError(e, cmdKey(c), c)
		}
	}
	return pageError(err, cmdKey(cmds[0]))
}

// cmdKey is the key a read is about, its first argument.
func cmdKey(c redis.Cmder) string {
	if args := c.Args(); len(args) > 1 {
		return fmt.Sprint(args[1])
	}
	return ""
}

// jobFields are a job hash's fields as HMGET read them ("" for a field not there), and whether
// the hash is there at all (some field is).
func jobFields(cmd *redis.SliceCmd) ([]string, bool) {
	out := make([]string, len(cmd.Val()))
	there := false
	for i, v := range cmd.Val() {
		if s, ok := v.(string); ok {
			out[i], there = s, true
		}
	}
	return out, there
}

// jobGone marks a task whose entry names a job the library no longer keeps (finished and
// deleted, or expired, since the entry was read): its body cannot be read.
func jobGone(t *Task) { t.Payload, t.PayloadBytes, t.Note = "", -1, "job hash gone" }

// byQueue are the sections secs of queue, for a layout that keeps every task by queue: none for
// its shared sets (queue "").
func byQueue(queue string, secs ...TaskSection) []TaskSection {
	if queue == "" {
		return nil
	}
	return secs
}

// noSection is the error of a section a layout does not keep for queue ("" its shared sets).
func noSection(l Layout, queue string, sec TaskSection) error {
	where := fmt.Sprintf("queue %q", queue)
	if queue == "" {
		where = "its shared sets"
	}
	return fmt.Errorf("store: %s keeps no %s tasks in %s: %w", l, sec, where, ErrNotSupported)
}
