// Package cells is the text of the Snapshot's table cells that more than one front end shows. The
// console (tui) and the text report (report) draw these from the same functions here: a counter
// family's live total and rate, a job queue's row, a union's count, a delay queue's schedule, a
// queue's key and the server's health. So the two can never say a figure differently. It does no
// I/O and holds no state. Of hourglass's packages it imports internal/format and snapshot.
package cells

import (
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// JobQueue is one job queue's cells: its name, waiting, active, scheduled, due, lag, next in,
// retry, dead and done. "—" (format.NotKept) where the
// library keeps no such number for the queue, "?" (format.Unknown) where it could not be read.
// The due, lag and next-in cells are not kept where the library keeps no scheduled set for the
// queue.
func JobQueue(q snapshot.JobQueue) []string {
	nk, timed := format.NotKept, format.Unknown
	if q.Scheduled == nil {
		timed = nk
	}
	name := q.Queue
	if q.Paused {
		name += " (paused)"
	}
	return []string{name, format.CommasOf(q.Waiting, nk), Latency(q.LatencyMS, q.LatencyNote), format.CommasOf(q.Active, nk), format.CommasOf(q.Scheduled, nk),
		format.CommasOf(q.Due, timed), format.MillisOf(q.OldestDueAgeMS, timed), format.MillisOf(q.NextDueInMS, timed),
		format.CommasOf(q.Retry, nk), format.CommasOf(q.Dead, nk), format.CommasOf(q.Completed, nk)}
}

// Latency is how long a queue's oldest waiting task has waited: "?" when it could not be known
// (why says why), "—" where nothing waits of its own (a library's shared row).
func Latency(ms *int64, why string) string {
	if ms == nil && why == "" {
		return format.NotKept
	}
	return format.MillisOf(ms, format.Unknown)
}

// Union is a union's distinct count (a unique family's 7 or 30 days). It is the count, or "?" when
// it failed, or "—" when the family keeps no such union. When the budget left it unread, it is
// skipped: the report says how much it would have read, the console's narrow column just "skipped".
func Union(n *int64, skip *snapshot.UnionSkip, failed string, skipped func(*snapshot.UnionSkip) string) string {
	switch {
	case n != nil:
		return format.Commas(*n)
	case skip != nil:
		return skipped(skip)
	case failed != "":
		return format.Unknown
	}
	return format.NotKept
}

// KeyOrPattern is a queue's key, or its entry's pattern for the row of a pattern that found no
// key.
func KeyOrPattern(key, pattern string) string {
	if key == "" {
		return pattern
	}
	return key
}

// Schedule is one of a delay queue's schedule buckets ("1m", "10m", "1h", "later": how many
// tasks fall due within it), "?" when the queue's due times could not be read.
func Schedule(q snapshot.DelayQueue, bucket string) string {
	if q.Due == nil {
		return format.Unknown
	}
	return format.Commas(q.Schedule[bucket])
}

// Throughput is one row of what a job library counts of the jobs it ran. The cells are the queue
// ("all queues" where the library counts them together), processed and failed a second, and today's
// processed and failed. Then come the running totals, and the days' processed as a sparkline,
// oldest first. "—" is where the library keeps no such count. A rate a watcher is still measuring
// says so (format.Measuring). "?" is a rate not known otherwise (a one-off snapshot has none, and
// its RateNote says why), and every figure of a row whose keys could not be read (its Error).
func Throughput(t snapshot.JobThroughput) []string {
	scope := t.Queue
	if scope == "" {
		scope = "all queues"
	}
	absent := format.NotKept // a figure the library does not keep
	if t.Error != "" {
		absent = format.Unknown // kept, but this row's keys could not be read
	}
	perSec := func(total *int64, r *float64) string {
		switch {
		case total == nil:
			return absent
		case r == nil && t.RateMeasuring != nil:
			return format.Measuring(t.RateMeasuring.SpanSec, t.RateMeasuring.NeedSec)
		case r == nil:
			return format.Unknown
		}
		return format.Rate(*r)
	}
	today, failedToday := absent, absent
	var days []int64
	if len(t.Days) > 0 {
		today, failedToday = format.Commas(t.Days[0].Processed), format.Commas(t.Days[0].Failed)
		if t.Days[0].From != nil {
			today = "≥" + today
			failedToday = "≥" + failedToday
		}
		for i := len(t.Days) - 1; i >= 0; i-- {
			days = append(days, t.Days[i].Processed)
		}
	}
	return []string{scope, perSec(t.ProcessedTotal, t.ProcessedPerSec), perSec(t.FailedTotal, t.FailedPerSec), today, failedToday,
		format.CommasOf(t.ProcessedTotal, absent), format.CommasOf(t.FailedTotal, absent), format.Sparkline(days)}
}
