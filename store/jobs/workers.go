package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A job library's live processes, as the library itself records them in Redis: Sidekiq's
// processes and their heartbeats (sidekiq_workers.go), RQ's workers (rq_workers.go), asynq's
// servers (asynq_workers.go) and BullMQ's workers as the connections it names
// (bullmq_workers.go). Celery records none in Redis. Each reader only reads, a bounded number of
// processes (maxWorkers), in pipelines of at most workerChunk commands.

// Worker is one process of a job library as the library records it. A figure the library does
// not record is Absent (-1) or the zero time, never a made-up 0.
type Worker struct {
	// Identity is the library's own name of the process: Sidekiq's "<host>:<pid>:<nonce>", RQ's
	// worker name, asynq's "<host>:<pid>:<server id>", the client name of BullMQ's connection.
	Identity string
	Host     string
	PID      int64 // Absent when not recorded
	Queues   []string
	// Busy is how many jobs it runs (Sidekiq's busy, asynq's active worker count); Concurrency
	// how many it may run at once. Absent when not recorded (RQ records a state instead).
	Busy, Concurrency int64
	// State is the library's own word: Sidekiq's "running" or "quiet", RQ's worker state, asynq's
	// server status; BullMQ's is "connected".
	State      string
	CurrentJob string // RQ's current job id
	Started    time.Time
	// LastBeat is the process's last heartbeat, zero when the library records none (asynq
	// records when the beat expires, not when it beat; BullMQ records no beat).
	LastBeat time.Time
	// Expires is when the library takes the process for gone if it beats no more; zero when it
	// never does (BullMQ lists a worker while its connection is open).
	Expires time.Time
	// Idle is BullMQ's connection idle time (CLIENT LIST idle=); -1 for the other libraries.
	Idle time.Duration
	// Done and Failed are RQ's successful and failed job counts; Absent elsewhere.
	Done, Failed int64
	// Stale is set when the process is listed but its record expired, or its beat is past the
	// library's own deadline at the time read; StaleWhy says which.
	Stale    bool
	StaleWhy string
	// Gone is set when the library lists the process but its record is no longer there: the
	// library's own listing drops (or prunes) it.
	Gone bool
}

// Workers are one library's processes as read at one moment.
type Workers struct {
	List []Worker // by identity
	// Found counts the processes the library lists; above len(List) when there were more than
	// maxWorkers.
	Found int64
	// Notes say what the library does not record, so hourglass cannot show.
	Notes []string
	// Kept is set when the library records its processes in Redis (not Celery's); Beats when it
	// records a deadline by which a process must beat, so that one can be stale (not BullMQ's).
	Kept, Beats bool
}

// maxWorkers bounds the processes one library's list reads; workerChunk the commands of one
// pipeline.
const (
	maxWorkers  = 500
	workerChunk = 100
)

// workerReader is one library's record of its processes.
type workerReader interface {
	// workers reads the processes; queues are the library's queues (BullMQ names its workers'
	// connections after their queue).
	workers(ctx context.Context, rdb redis.UniversalClient, queues []string, now time.Time) (Workers, error)
}

// Workers reads the library's processes as it records them, judging staleness at now (the
// server's time); queues are the library's queues the caller knows (BullMQ's workers are found
// by their queue's name). It only reads.
func (s Source) Workers(ctx context.Context, rdb redis.UniversalClient, queues []string, now time.Time) (Workers, error) {
	r, ok := s.reader().(workerReader)
	if !ok {
		return Workers{List: []Worker{}}, fmt.Errorf("store: %q workers: not a job library hourglass reads", s.Layout)
	}
	w, err := r.workers(ctx, rdb, queues, nowOrZero(now))
	if err != nil {
		return Workers{List: []Worker{}}, fmt.Errorf("store: %s workers: %w", s.Layout, err)
	}
	slices.SortFunc(w.List, func(a, b Worker) int { return cmp.Compare(a.Identity, b.Identity) })
	if w.List == nil {
		w.List = []Worker{}
	}
	return w, nil
}

// Every job library's reader says what it records of its processes.
var (
	_ workerReader = sidekiqJobs{}
	_ workerReader = rqJobs{}
	_ workerReader = asynqJobs{}
	_ workerReader = bullmqJobs{}
	_ workerReader = celeryJobs{}
)

// workers: Celery records none in Redis.
func (celeryJobs) workers(context.Context, redis.UniversalClient, []string, time.Time) (Workers, error) {
	return Workers{Notes: []string{
		"Celery records no workers in Redis: they answer `celery inspect` over the broadcast (pidbox) exchange, which hourglass does not send.",
	}}, nil
}

// newWorker is a Worker with every figure not recorded.
func newWorker(identity string) Worker {
	return Worker{Identity: identity, PID: Absent, Busy: Absent, Concurrency: Absent, Idle: -1, Done: Absent, Failed: Absent}
}

// judge marks w stale when its record is gone or its deadline has passed at now.
func (w *Worker) judge(now time.Time, gone string, past string) {
	switch {
	case w.Gone:
		w.Stale, w.StaleWhy = true, gone
	case !w.Expires.IsZero() && !now.Before(w.Expires):
		w.Stale, w.StaleWhy = true, past
	}
}

// scanMembers reads up to maxWorkers members of a set with SSCAN (pages of workerChunk), and how
// many it holds.
func scanMembers(ctx context.Context, rdb redis.Cmdable, key string) ([]string, int64, error) {
	var out []string
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := rdb.SScan(ctx, key, cursor, "", workerChunk).Result()
		if err != nil {
			return nil, 0, fmt.Errorf("SSCAN %s: %w", key, err)
		}
		for _, m := range page {
			if !seen[m] && len(out) < maxWorkers {
				seen[m] = true
				out = append(out, m)
			}
		}
		if cursor = next; cursor == 0 || len(out) >= maxWorkers {
			break
		}
	}
	n := int64(len(out))
	if n >= maxWorkers {
		var err error
		if n, err = rdb.SCard(ctx, key).Result(); err != nil {
			return nil, 0, fmt.Errorf("SCARD %s: %w", key, err)
		}
	}
	slices.Sort(out)
	return out, n, nil
}

// chunked runs read over members in pipelines of workerChunk.
func chunked(ctx context.Context, rdb redis.Cmdable, members []string, read func(pipe redis.Pipeliner, i int, m string)) error {
	for start := 0; start < len(members); start += workerChunk {
		pipe := rdb.Pipeline()
		for i := start; i < min(start+workerChunk, len(members)); i++ {
			read(pipe, i, members[i])
		}
		cmds, err := pipe.Exec(ctx)
		for _, c := range cmds { // a missing key is an answer; name the first command that failed
			if e := c.Err(); e != nil && !errors.Is(e, redis.Nil) {
				return fmt.Errorf("%s %v: %w", strings.ToUpper(c.Name()), c.Args()[min(1, len(c.Args())-1)], e)
			}
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
}

// unixFloat is a time a library writes as float seconds since the epoch; zero for "" or junk.
func unixFloat(s string) time.Time {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}
	}
	return floatSeconds(f)
}

// floatSeconds is float seconds since the epoch, to the microsecond; zero for none.
func floatSeconds(f float64) time.Time {
	if f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}
	}
	return time.UnixMicro(int64(math.Round(f * 1e6)))
}
