package watch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// throughputTracker is a Watcher's reads of the job libraries' running totals, at every Poll, for their
// rates: one series a total, by entry, queue and count.
type throughputTracker struct {
	series map[tputKey]*rateSeries
	read   map[tputKey]int64 // the last total read
	failed map[string]string // by entry: why its last read failed
	// rowFailed is, by entry and queue, why the last read of that row's counts failed while the
	// entry's other rows were read.
	rowFailed map[[2]string]string
	// today is, by entry and queue, the day the server's clock is in, read by a poll once that day
	// is past the newest the last sweep read (after UTC midnight, until the next sweep reads it).
	today map[[2]string]snapshot.JobDay
}

type tputKey struct {
	entry, queue string
	failed       bool
}

// epoch is the one "window" a running total has: it never starts over but when it falls.
var epoch = time.Unix(0, 0)

// poll reads the running totals of every job entry of snap (its queues as the sweep found them)
// and adds them to their series, at the local time they were read; and, once the server's clock
// (now) is in a UTC day past the newest day the sweep read, that day's counts.
func (tt *throughputTracker) poll(ctx context.Context, rdb redis.Cmdable, snap *snapshot.Snapshot, specs []scanner.JobQueueSpec, now time.Time) error {
	if snap == nil {
		return nil
	}
	if tt.series == nil {
		tt.series, tt.read, tt.failed = map[tputKey]*rateSeries{}, map[tputKey]int64{}, map[string]string{}
		tt.rowFailed, tt.today = map[[2]string]string{}, map[[2]string]snapshot.JobDay{}
	}
	for _, e := range snap.JobQueues {
		i := slices.IndexFunc(specs, func(s scanner.JobQueueSpec) bool { return s.Name == e.Name })
		if i < 0 || len(e.Throughput) == 0 {
			continue
		}
		var names []string
		for _, t := range e.Throughput {
			names = append(names, t.RawQueue)
		}
		days := 0
		if newest := newestDay(e.Throughput); newest != "" && now.UTC().Format("2006-01-02") > newest {
			days = 1 // a new day the sweep has not read yet: its counters are read with the totals
		}
		read, err := scanner.ReadThroughput(ctx, rdb, specs[i].Source, names, days, now)
		var kerr *store.KeyError
		if scanner.KeyLevel(err) || errors.As(err, &kerr) { // a key the library would not have written: said on the entry's rows
			tt.failed[e.Name] = err.Error()
			continue
		}
		if err != nil {
			return err
		}
		delete(tt.failed, e.Name)
		at := time.Now()
		for _, t := range read {
			if t.Err != nil { // this row's key only: the other rows' reads stand
				tt.rowFailed[[2]string{e.Name, t.Queue}] = t.Err.Error()
				continue
			}
			delete(tt.rowFailed, [2]string{e.Name, t.Queue})
			tt.noteToday(e.Name, t)
			for _, c := range []struct {
				failed bool
				n      int64
			}{{false, t.Processed}, {true, t.Failed}} {
				if c.n == jobs.Absent {
					continue
				}
				k := tputKey{e.Name, t.Queue, c.failed}
				s := tt.series[k]
				if s == nil {
					s = &rateSeries{subject: "the library's count"}
					tt.series[k] = s
				}
				s.add(epoch, at, float64(c.n))
				tt.read[k] = c.n
			}
		}
	}
	return nil
}

// fill returns a copy of snap whose job entries' throughput holds the totals last read and their
// rates at now.
func (tt *throughputTracker) fill(snap *snapshot.Snapshot, now time.Time) *snapshot.Snapshot {
	if snap == nil || len(tt.series) == 0 {
		return snap
	}
	out := *snap
	out.JobQueues = slices.Clone(snap.JobQueues)
	for i := range out.JobQueues {
		e := &out.JobQueues[i]
		e.Throughput = slices.Clone(e.Throughput)
		for j := range e.Throughput {
			t := &e.Throughput[j]
			today, ok := tt.today[[2]string{e.Name, t.RawQueue}]
			t.Days = withToday(t.Days, today, ok)
			var notes []string
			var measuring *snapshot.Measuring
			polled := false
			for _, c := range []struct {
				failed bool
				total  **int64
				perSec **float64
			}{{false, &t.ProcessedTotal, &t.ProcessedPerSec}, {true, &t.FailedTotal, &t.FailedPerSec}} {
				k := tputKey{e.Name, t.RawQueue, c.failed}
				s := tt.series[k]
				if s == nil || *c.total == nil && t.Error == "" { // not kept (a row unread is, and may be read now)
					continue
				}
				polled = true
				n := tt.read[k]
				*c.total = &n
				if tt.whyFailed(e.Name, t.RawQueue) != "" { // the last read failed: no figure from the reads before it
					*c.total, *c.perSec = nil, nil
				} else if r, _, ok, note := s.rate(now); ok {
					*c.perSec = &r
				} else if note != "" {
					notes = append(notes, note)
					if span, ok := s.measuring(now); ok && measuring == nil {
						measuring = &snapshot.Measuring{SpanSec: span, NeedSec: scanner.MinRateSpan.Seconds()}
					}
				}
			}
			t.RateNote, t.RateMeasuring = "", nil
			switch why := tt.whyFailed(e.Name, t.RawQueue); {
			case why != "":
				t.Error = why
			case polled:
				t.Error = "" // the poll read what the sweep could not
			}
			if t.Error != "" {
				t.RateNote = "the counts could not be read: " + t.Error
			} else if len(notes) > 0 {
				t.RateNote, t.RateMeasuring = notes[0], measuring
			}
		}
	}
	return &out
}

// newestDay is the newest day of rows' daily counts, "" when they have none.
func newestDay(rows []snapshot.JobThroughput) string {
	newest := ""
	for _, r := range rows {
		if len(r.Days) > 0 && r.Days[0].Day > newest {
			newest = r.Days[0].Day
		}
	}
	return newest
}

// noteToday keeps the day a poll read of entry's row t, or forgets it once the sweep has that day.
func (tt *throughputTracker) noteToday(entry string, t jobs.Throughput) {
	k := [2]string{entry, t.Queue}
	if len(t.Days) == 0 {
		delete(tt.today, k)
		return
	}
	d := t.Days[0]
	day := snapshot.JobDay{Day: d.Day, Processed: d.Processed, Failed: d.Failed}
	if !d.From.IsZero() {
		from := d.From
		day.From = &from
	}
	tt.today[k] = day
}

// withToday is days (newest first) with the day a poll read in front, the oldest dropped, when
// that day is past days' newest; days as they are otherwise.
func withToday(days []snapshot.JobDay, today snapshot.JobDay, ok bool) []snapshot.JobDay {
	if !ok || len(days) == 0 || today.Day <= days[0].Day {
		return days
	}
	return append([]snapshot.JobDay{today}, days[:len(days)-1]...)
}

// whyFailed is why the last poll could not read the counts of entry's row of queue, or "".
func (tt *throughputTracker) whyFailed(entry, queue string) string {
	if why := tt.failed[entry]; why != "" {
		return why
	}
	return tt.rowFailed[[2]string{entry, queue}]
}
