package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Helpers the job libraries' readers (jobs_<library>.go) share.

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
func scheduleOf(ctx context.Context, rdb redis.Cmdable, key string, now time.Time) (*DelayQueueStats, error) {
	st, err := DelayQueueStatsOf(ctx, rdb, key, "", Seconds, now)
	if err != nil {
		return nil, err
	}
	st.Missing = false
	return &st, nil
}
