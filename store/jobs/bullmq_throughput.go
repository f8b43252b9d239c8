package jobs

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// BullMQ counts jobs only while a Worker's metrics option is on: per queue, a hash
// <prefix>:<queue>:metrics:<completed|failed> (count: the running total; prevTS and prevCount:
// when and at what total the last point was pushed) and a list <...>:data of per-minute counts,
// newest first, the first for the minute before prevTS's. What a getMetrics call returns.

// bullmqMeta is one metrics hash: its count, and the point in time its list's points end at.
type bullmqMeta struct {
	count, prevCount int64
	prevTS           int64 // ms
	on               bool  // the hash exists
}

func bullmqMetaOf(v []any) bullmqMeta {
	m := bullmqMeta{}
	for _, x := range v {
		if x != nil {
			m.on = true
		}
	}
	m.count, m.prevTS, m.prevCount = hashCount(v[0]), hashCount(v[1]), hashCount(v[2])
	return m
}

// throughput reads each queue's completed and failed metrics: processed is the two counts
// together (a job run either completes or fails), and the days are the per-minute points summed
// by UTC day, the oldest day marked from its first point.
func (j bullmqJobs) throughput(ctx context.Context, rdb redis.Cmdable, queues []string, days int, now time.Time) ([]Throughput, error) {
	days = min(days, bullmqMaxDays)
	if len(queues) == 0 {
		return nil, nil
	}
	pipe := rdb.Pipeline()
	type cmds struct{ meta, length [2]redis.Cmder }
	all := make([]cmds, len(queues))
	for i, q := range queues {
		for k, kind := range []string{"completed", "failed"} {
			key := j.queueKey(q, "metrics:"+kind)
			all[i].meta[k] = pipe.HMGet(ctx, key, "count", "prevTS", "prevCount")
			all[i].length[k] = pipe.LLen(ctx, key+":data")
		}
	}
	if _, err := pipe.Exec(ctx); execErr(err) != nil {
		return nil, err
	}
	out := make([]Throughput, len(queues))
rows:
	for i, q := range queues {
		t := &out[i]
		t.Queue = q
		var metas [2]bullmqMeta
		if err := bullmqMetas(j, q, &metas, all[i].meta, all[i].length); err != nil {
			if !unreadable(t, err) {
				return nil, err
			}
			continue
		}
		if !metas[0].on && !metas[1].on {
			t.Processed, t.Failed = Absent, Absent
			t.Note = "BullMQ's metrics are off for this queue (a Worker's metrics option turns them on)"
			continue
		}
		t.Processed, t.Failed = metas[0].count+metas[1].count, metas[1].count
		if days == 0 {
			continue
		}
		var byDay [2]map[string]int64
		var from time.Time
		for k, kind := range []string{"completed", "failed"} {
			key := j.queueKey(q, "metrics:"+kind+":data")
			n := all[i].length[k].(*redis.IntCmd).Val()
			m, first, err := bullmqDays(ctx, rdb, key, metas[k], min(n, int64(days*minutesPerRead)))
			if err != nil && !unreadable(t, err) {
				return nil, err
			}
			if err != nil {
				continue rows // this queue's row says which key could not be read; the others go on
			}
			byDay[k] = m
			if !first.IsZero() && first.After(from) {
				from = first // the later start of the two lists: both are whole from there
			}
		}
		for _, d := range utcDays(now, days) {
			dc := DayCount{Day: d, Processed: byDay[0][d] + byDay[1][d], Failed: byDay[1][d]}
			if f := from.UTC(); f.Format("2006-01-02") == d && !f.Equal(startOfUTCDay(f)) {
				dc.From = f
			}
			t.Days = append(t.Days, dc)
			if !from.IsZero() && d <= from.UTC().Format("2006-01-02") {
				break // before the points begin nothing is known
			}
		}
	}
	return out, nil
}

// bullmqMetas reads a queue's completed and failed metrics hashes into metas; a *KeyError when
// one of them, or its list of points, is of another type.
func bullmqMetas(j bullmqJobs, q string, metas *[2]bullmqMeta, meta, length [2]redis.Cmder) error {
	for k, kind := range []string{"completed", "failed"} {
		key := j.queueKey(q, "metrics:"+kind)
		for _, err := range []error{cmdKeyError(key, meta[k].Err()), cmdKeyError(key+":data", length[k].Err())} {
			if err != nil {
				return err
			}
		}
		metas[k] = bullmqMetaOf(meta[k].(*redis.SliceCmd).Val())
	}
	return nil
}

func startOfUTCDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// bullmqDays sums the n newest points of a metrics list by UTC day, with the jobs counted since
// its last point (in prevTS's minute); first is the minute the oldest point read is of (zero
// when the list holds none: then only the running count since prevTS is known).
func bullmqDays(ctx context.Context, rdb redis.Cmdable, key string, m bullmqMeta, n int64) (map[string]int64, time.Time, error) {
	out := map[string]int64{}
	if !m.on || m.prevTS == 0 {
		return out, time.Time{}, nil
	}
	last := m.prevTS / 60000 // the minute of prevTS; point i is of minute last-1-i
	day := func(minute int64) string { return time.UnixMilli(minute * 60000).UTC().Format("2006-01-02") }
	out[day(last)] += m.count - m.prevCount
	first := time.UnixMilli(last * 60000)
	// A day's points a read (each well under a millisecond of Redis), the reads in one pipeline.
	pipe := rdb.Pipeline()
	var reads []*redis.StringSliceCmd
	for start := int64(0); start < n; start += minutesPerRead {
		reads = append(reads, pipe.LRange(ctx, key, start, min(start+minutesPerRead, n)-1))
	}
	if len(reads) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, time.Time{}, cmdKeyError(key, err)
		}
	}
	for r, read := range reads {
		start := int64(r) * minutesPerRead
		for i, v := range read.Val() {
			c, _ := strconv.ParseInt(v, 10, 64)
			minute := last - 1 - (start + int64(i))
			out[day(minute)] += c
			first = time.UnixMilli(minute * 60000)
		}
	}
	return out, first, nil
}
