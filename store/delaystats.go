package store

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// DelayQueueStats is what a delay queue holds now.
type DelayQueueStats struct {
	Depth    int64 // tasks queued, due or not
	InFlight int64 // tasks claimed and not acknowledged (in the in-flight key, of any type)
	// Missing is set when the queue's key does not exist: a configured queue that is not there is
	// not an empty, healthy queue.
	Missing bool
	// Unit is the unit the scores were read in: the configured one, or the one auto found.
	Unit ScoreUnit
	// Timed is set when the due times could be read: the scores are plausible in Unit. When it is
	// not, Due, Lag, NextIn and Schedule are unknown and Warning says why.
	Timed   bool
	Warning string
	Due     int64         // tasks due now and not claimed
	Lag     time.Duration // how long the oldest due task has waited past its due time (0: none due)
	NextIn  time.Duration // until the next task not yet due is due (-1: none)
	// Schedule counts the tasks not yet due by when they fall due: within 1 minute, 10 minutes,
	// an hour, and later.
	Schedule [4]int64
}

// ScheduleLabels name Schedule's buckets.
var ScheduleLabels = [4]string{"1m", "10m", "1h", "later"}

// Stats reads the queue (only reads: it works on a queue hourglass did not write, such as a plain
// ZADD-based one, whose in-flight set simply does not exist).
func (q *DelayQueue) Stats(ctx context.Context, now time.Time) (DelayQueueStats, error) {
	return DelayQueueStatsOf(ctx, q.s.rdb, q.Key, q.InFlight, q.Unit, now)
}

// DelayQueueStatsOf reads the delay queue at key, scored in unit, with its in-flight tasks in
// inflight ("" for none), comparing due times with now (the server's time). It takes two
// round trips: the first reads the depth and the oldest and newest scores, from which the unit
// is checked (or, for AutoUnit, found); the second counts due and scheduled tasks.
func DelayQueueStatsOf(ctx context.Context, rdb redis.Cmdable, key, inflight string, unit ScoreUnit, now time.Time) (DelayQueueStats, error) {
	return delayQueueStats(ctx, rdb, key, inflight, unit, now, -1)
}

// DelayQueueStatsOfDepth is DelayQueueStatsOf for a queue whose depth the caller has read, such as
// a sweep's ZCARD of the keys a pattern finds. It does not ask for the depth again. The depth is
// then the due and scheduled tasks counted, which add up to it at that read. When the due times
// cannot be read, it is the caller's depth. A queue emptied since reads as missing.
func DelayQueueStatsOfDepth(ctx context.Context, rdb redis.Cmdable, key, inflight string, unit ScoreUnit, now time.Time, depth int64) (DelayQueueStats, error) {
	return delayQueueStats(ctx, rdb, key, inflight, unit, now, max(depth, 0))
}

// delayQueueStats reads the queue; known is its depth as the caller read it, or -1 to read it.
func delayQueueStats(ctx context.Context, rdb redis.Cmdable, key, inflight string, unit ScoreUnit, now time.Time, known int64) (DelayQueueStats, error) {
	st := DelayQueueStats{Unit: unit, NextIn: -1}
	pipe := rdb.Pipeline()
	var exists, depth *redis.IntCmd
	if known < 0 {
		exists, depth = pipe.Exists(ctx, key), pipe.ZCard(ctx, key)
	}
	oldest := pipe.ZRangeWithScores(ctx, key, 0, 0)
	newest := pipe.ZRangeWithScores(ctx, key, -1, -1)
	var inType *redis.StatusCmd
	if inflight != "" {
		inType = pipe.Type(ctx, inflight)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return st, fmt.Errorf("store: delay queue %s: %w", key, err)
	}
	if known < 0 {
		st.Missing, st.Depth = exists.Val() == 0, depth.Val()
	} else {
		// An empty sorted set does not exist: no oldest task is no key.
		st.Missing, st.Depth = len(oldest.Val()) == 0, known
		if st.Missing {
			st.Depth = 0
		}
	}
	if inType != nil {
		n, err := CountOf(ctx, rdb, inflight, inType.Val())
		if err != nil {
			return st, fmt.Errorf("store: in-flight %s: %w", inflight, err)
		}
		st.InFlight = n
	}
	if st.Depth == 0 || len(oldest.Val()) == 0 || len(newest.Val()) == 0 { // emptied between the reads
		st.Timed = true
		return st, nil
	}
	first, last := oldest.Val()[0].Score, newest.Val()[0].Score
	st.Unit, st.Timed, st.Warning = CheckUnit(unit, first, last, now)
	if !st.Timed {
		return st, nil
	}
	if err := readDue(ctx, rdb, key, &st, first, now); err != nil {
		return st, fmt.Errorf("store: delay queue %s: %w", key, err)
	}
	if known >= 0 { // due and scheduled split the whole queue: their sum is its depth at this read
		st.Depth = st.Due
		for _, n := range st.Schedule {
			st.Depth += n
		}
	}
	return st, nil
}

// CheckUnit settles the unit of a queue whose scores run from first to last. It returns unit itself
// when both are plausible due times in it, or else the unit auto finds. When neither fits, timed is
// false and the warning says which way the scores are off, by how much, and the unit that would
// make them due times.
func CheckUnit(unit ScoreUnit, first, last float64, now time.Time) (ScoreUnit, bool, string) {
	if unit == AutoUnit {
		u, ok := GuessUnit(first, now)
		if ok && u.Plausible(last, now) {
			return u, true, ""
		}
		bad := first
		if ok {
			bad = last
		}
		near := nearestUnit(bad, now)
		return unit, false, fmt.Sprintf("scores %s..%s are not due times in any unit (s, ms, us, bullmq) within ten years of now (%s read in %s falls %s): not a delay queue?",
			FormatScore(first), FormatScore(last), FormatScore(bad), near, offText(near, bad, now))
	}
	if unit.Plausible(first, now) && unit.Plausible(last, now) {
		return unit, true, ""
	}
	bad := first
	if unit.Plausible(first, now) {
		bad = last
	}
	if u, ok := GuessUnit(bad, now); ok {
		return unit, false, fmt.Sprintf("score %s read in %s falls %s; in %s it falls %s: set score_unit = %q",
			FormatScore(bad), unit, offText(unit, bad, now), u, offText(u, bad, now), u.String())
	}
	return unit, false, fmt.Sprintf("score %s read in %s falls %s, and is not a due time within ten years of now in any other unit",
		FormatScore(bad), unit, offText(unit, bad, now))
}

// unitSeconds is how many of a unit's scores make a second.
var unitSeconds = map[ScoreUnit]float64{Seconds: 1, Milliseconds: 1e3, Microseconds: 1e6, BullMQScore: 1e3 * 4096}

// offText says where score falls against now read in u: "56.9 years in the past", "3m0s in the
// future". It works in float seconds, so no score overflows a time.
func offText(u ScoreUnit, score float64, now time.Time) string {
	at := score / unitSeconds[u]
	if math.IsInf(at, 0) || math.IsNaN(at) {
		return "at no time (the score is not finite)"
	}
	d := at - float64(now.UnixNano())/1e9
	way := "in the future"
	if d < 0 {
		way, d = "in the past", -d
	}
	switch year := 365.25 * 24 * 3600; {
	case d >= 100*year:
		return fmt.Sprintf("%.0f years %s", d/year, way)
	case d >= 2*year:
		return fmt.Sprintf("%.1f years %s", d/year, way)
	case d >= 2*24*3600:
		return fmt.Sprintf("%.0f days %s", d/(24*3600), way)
	}
	return fmt.Sprintf("%s %s", (time.Duration(d) * time.Second).Round(time.Second), way)
}

// nearestUnit is the unit in which score falls nearest now.
func nearestUnit(score float64, now time.Time) ScoreUnit {
	best, bestD := Milliseconds, math.Inf(1)
	for _, u := range []ScoreUnit{Seconds, Milliseconds, Microseconds, BullMQScore} {
		if d := math.Abs(score/unitSeconds[u] - float64(now.Unix())); d < bestD {
			best, bestD = u, d
		}
	}
	return best
}

// FormatScore spells a score as a writer wrote it: 1795000000.5, not 1.7950000005e+09.
func FormatScore(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(f)
}

// readDue counts the due and scheduled tasks of a queue whose unit is settled, and its lag from
// the oldest score, first.
func readDue(ctx context.Context, rdb redis.Cmdable, key string, st *DelayQueueStats, first float64, now time.Time) error {
	u := st.Unit
	open := func(t time.Time) string { return "(" + u.Bound(t) } // exclusive bound
	pipe := rdb.Pipeline()
	due := pipe.ZCount(ctx, key, "-inf", u.Bound(now))
	next := pipe.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: open(now), Max: "+inf", Count: 1})
	bounds := []time.Time{now, now.Add(time.Minute), now.Add(10 * time.Minute), now.Add(time.Hour)}
	var sched [4]*redis.IntCmd
	for i := range bounds {
		hi := "+inf"
		if i+1 < len(bounds) {
			hi = u.Bound(bounds[i+1])
		}
		sched[i] = pipe.ZCount(ctx, key, open(bounds[i]), hi)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return err
	}
	st.Due = due.Val()
	if st.Due > 0 {
		st.Lag = max(now.Sub(u.Time(first)), 0)
	}
	if n := next.Val(); len(n) > 0 {
		st.NextIn = max(u.Time(n[0].Score).Sub(now), 0)
	}
	for i, c := range sched {
		st.Schedule[i] = c.Val()
	}
	return nil
}

// CountOf counts the members of key, whatever its type (as TYPE named it): a library's in-flight
// tasks may be a sorted set, a list, a set or a hash. A key that does not exist counts 0.
func CountOf(ctx context.Context, rdb redis.Cmdable, key, typ string) (int64, error) {
	var c *redis.IntCmd
	switch typ {
	case "none":
		return 0, nil
	case "zset":
		c = rdb.ZCard(ctx, key)
	case "list":
		c = rdb.LLen(ctx, key)
	case "set":
		c = rdb.SCard(ctx, key)
	case "hash":
		c = rdb.HLen(ctx, key)
	default:
		return 0, fmt.Errorf("holds a %s, not a collection of tasks", typ)
	}
	return c.Result()
}
