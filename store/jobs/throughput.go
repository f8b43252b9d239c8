package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Throughput is what a job library keeps of the jobs it has run, for one queue or for all its
// queues together: running totals and a count a day. A figure the library does not keep is
// Absent, never 0.
type Throughput struct {
	// Queue is the queue counted; "" when the library counts all its queues together.
	Queue string
	// Processed counts the jobs run, failed or not, as the library counts them; Failed those of
	// them that failed. Both only grow, but for a restart of the count (RQ: a worker that exits
	// takes its counts with it).
	Processed, Failed int64
	// Days are the library's daily counts by UTC day, newest (today) first; nil where it keeps
	// none or none were asked for.
	Days []DayCount
	// Note says what is not kept here (BullMQ's metrics off for the queue).
	Note string
	// Err is why this scope's counts could not be read, where a key of it holds what the library
	// never writes there (a *KeyError: another type, no integer); Processed and Failed are then
	// Absent and the other scopes keep their figures.
	Err error
}

// DayCount is one UTC day of a library's daily counts.
type DayCount struct {
	Day               string // 2006-01-02
	Processed, Failed int64
	// From is when the day's counts begin where the library kept only part of the day (BullMQ's
	// per-minute points reach back only so far); zero for a whole day.
	From time.Time
}

// MaxThroughputDays bounds the days Throughput reads: Sidekiq's web UI shows up to 180.
const MaxThroughputDays = 180

// bullmqMaxDays bounds the days of BullMQ's per-minute points read: a week is the longest its
// own presets keep (MetricsTime.ONE_WEEK), 10,080 points a list.
const bullmqMaxDays = 7

// minutesPerRead is how many of BullMQ's per-minute points one LRANGE reads: a day's.
const minutesPerRead = 1440

// ThroughputKept says how the library counts the jobs it ran: per queue or for all together,
// and, where it keeps no count in Redis, why (then Throughput reads nothing).
func (s Source) ThroughputKept() (perQueue bool, none string) {
	lib := libraryOf(s.Layout)
	if lib == nil {
		return false, ""
	}
	return lib.perQueue, lib.noThroughput
}

// ThroughputNote says what the figures mean where the library counts differently from the
// others: "" where processed and failed are running totals kept in Redis.
func (s Source) ThroughputNote() string {
	if lib := libraryOf(s.Layout); lib != nil {
		return lib.throughputNote
	}
	return ""
}

// Throughput reads the library's running totals, for each of queues where it counts per queue
// (else once, for all), and, with days > 0, its daily counts for the last days UTC days up to now
// (the server's clock). It only reads, in one pipeline and, for BullMQ's days, a day's points a
// call.
func (s Source) Throughput(ctx context.Context, rdb redis.Cmdable, queues []string, days int, now time.Time) ([]Throughput, error) {
	t, ok := s.reader().(throughputReader)
	if !ok {
		return nil, nil
	}
	out, err := t.throughput(ctx, rdb, queues, min(max(days, 0), MaxThroughputDays), now)
	if err != nil {
		return out, fmt.Errorf("store: %s throughput: %w", s.Layout, err)
	}
	return out, nil
}

// utcDays are the UTC dates of the days days up to now, newest first.
func utcDays(now time.Time, days int) []string {
	out := make([]string, days)
	for i := range out {
		out[i] = now.UTC().AddDate(0, 0, -i).Format("2006-01-02")
	}
	return out
}

// countOf is a counter's value as the libraries read it: a key absent is 0; one holding
// something else is a *KeyError.
func countOf(c *redis.StringCmd) (int64, error) {
	key := fmt.Sprint(c.Args()[1])
	v, err := c.Result()
	var rerr redis.Error
	switch {
	case err == redis.Nil:
		return 0, nil
	case errors.As(err, &rerr):
		return 0, store.KeyErrorOf(key, rerr.Error())
	case err != nil:
		return 0, err
	}
	n, perr := strconv.ParseInt(v, 10, 64)
	if perr != nil {
		return 0, &store.KeyError{Key: key, Value: v, Err: store.ErrNotInteger}
	}
	return n, nil
}

// cmdKeyError is a command's error about key, as a *KeyError; nil for none or an absent key.
func cmdKeyError(key string, err error) error {
	var rerr redis.Error
	if err == nil || err == redis.Nil {
		return nil
	}
	if errors.As(err, &rerr) {
		return store.KeyErrorOf(key, rerr.Error())
	}
	return err
}

// execErr is a pipeline's error that ends the read: not a key's (each command keeps its own,
// read with the key it is about), only the connection's.
func execErr(err error) error {
	var rerr redis.Error
	if err == redis.Nil || errors.As(err, &rerr) {
		return nil
	}
	return err
}

// counters reads totals and daily counts kept as string counters: processed(day) and failed(day)
// name a day's keys ("" the running total's), as Sidekiq and asynq spell them.
type counters struct{ processed, failed func(day string) string }

func (c counters) queue(pipe redis.Pipeliner, ctx context.Context, days []string) []*redis.StringCmd {
	cmds := []*redis.StringCmd{pipe.Get(ctx, c.processed("")), pipe.Get(ctx, c.failed(""))}
	for _, d := range days {
		cmds = append(cmds, pipe.Get(ctx, c.processed(d)), pipe.Get(ctx, c.failed(d)))
	}
	return cmds
}

// read fills t from cmds, as queue laid them out.
func (c counters) read(t *Throughput, cmds []*redis.StringCmd, days []string) error {
	vals := make([]int64, len(cmds))
	for i, cmd := range cmds {
		n, err := countOf(cmd)
		if err != nil {
			return err
		}
		vals[i] = n
	}
	t.Processed, t.Failed = vals[0], vals[1]
	for i, d := range days {
		t.Days = append(t.Days, DayCount{Day: d, Processed: vals[2+2*i], Failed: vals[3+2*i]})
	}
	return nil
}

// dated is key, or key:day for a day's.
func dated(key, day string) string {
	if day == "" {
		return key
	}
	return key + ":" + day
}

// unreadable marks t's counts unread when err is a key's (a *KeyError), and reports whether it
// was: the other scopes read go on.
func unreadable(t *Throughput, err error) bool {
	var kerr *store.KeyError
	if !errors.As(err, &kerr) {
		return false
	}
	*t = Throughput{Queue: t.Queue, Processed: Absent, Failed: Absent, Err: err}
	return true
}

// hashCount is a hash field read as a count: absent (a worker that has run nothing yet) is 0.
func hashCount(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
