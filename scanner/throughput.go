package scanner

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// throughputDays is how many days of daily counts a sweep reads; maxDayKeys bounds the keys
// that makes for a library counting per queue (asynq: two a day a queue), fewer days then.
const (
	throughputDays = 30
	maxDayKeys     = 2000
)

// daysFor is how many days to read for a library counting in scopes scopes.
func daysFor(scopes int) int {
	return max(1, min(throughputDays, maxDayKeys/(2*max(scopes, 1))))
}

// ReadThroughput reads src's counts for the queues named (a sweep's), with days days.
func ReadThroughput(ctx context.Context, rdb redis.Cmdable, src jobs.Source, names []string, days int, now time.Time) ([]jobs.Throughput, error) {
	perQueue, none := src.ThroughputKept()
	if none != "" {
		return nil, nil
	}
	if !perQueue {
		names = nil
	}
	return src.Throughput(ctx, rdb, names, days, now)
}

// throughputOf renders what a sweep read of a library's counts.
func throughputOf(read []jobs.Throughput) []snapshot.JobThroughput {
	out := make([]snapshot.JobThroughput, 0, len(read))
	kept := func(n int64) *int64 {
		if n == jobs.Absent {
			return nil
		}
		return &n
	}
	for _, t := range read {
		jt := snapshot.JobThroughput{Queue: format.Escape(t.Queue), RawQueue: t.Queue, ProcessedTotal: kept(t.Processed), FailedTotal: kept(t.Failed),
			Days: []snapshot.JobDay{}, Note: t.Note, RateNote: "a rate needs a minute of reads: the console and serve measure it"}
		if t.Note != "" {
			jt.RateNote = ""
		}
		if t.Err != nil {
			jt.Error, jt.RateNote = t.Err.Error(), "the counts could not be read: "+t.Err.Error()
		}
		for _, d := range t.Days {
			day := snapshot.JobDay{Day: d.Day, Processed: d.Processed, Failed: d.Failed}
			if !d.From.IsZero() {
				from := d.From
				day.From = &from
			}
			jt.Days = append(jt.Days, day)
		}
		out = append(out, jt)
	}
	return out
}

// unreadThroughput are the rows of a library's counts whose read failed: one a queue (names)
// where it counts per queue, else one for all, each unknown with why.
func unreadThroughput(src jobs.Source, names []string, err error) []snapshot.JobThroughput {
	if perQueue, _ := src.ThroughputKept(); !perQueue {
		names = []string{""}
	}
	out := make([]snapshot.JobThroughput, 0, len(names))
	for _, q := range names {
		out = append(out, snapshot.JobThroughput{Queue: format.Escape(q), RawQueue: q, Days: []snapshot.JobDay{}, Error: err.Error(),
			RateNote: "the counts could not be read: " + err.Error()})
	}
	return out
}

// throughputNote says how src counts the jobs it ran, why it keeps no count, or why its counts
// could not be read.
func throughputNote(src jobs.Source, err error) string {
	if err != nil {
		return "the counts of jobs run could not be read: " + err.Error()
	}
	if _, none := src.ThroughputKept(); none != "" {
		return none
	}
	return src.ThroughputNote()
}
