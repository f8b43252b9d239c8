package jobs

// RQ's record of its workers (1.x, as Worker.register_birth, heartbeat and refresh use it):
//
//	rq:workers            set   "rq:worker:<name>" of every registered worker
//	rq:workers:<queue>    set   the same, of the workers listening on <queue>
//	rq:worker:<name>      hash  birth, last_heartbeat (UTC "%Y-%m-%dT%H:%M:%S.%fZ"), queues
//	                            (comma-separated), pid, hostname, state (starting, idle, busy,
//	                            suspended), current_job, successful_job_count,
//	                            failed_job_count, total_working_time; each heartbeat EXPIREs it
//	                            (worker_ttl + 60 s, 480 s by default; a job's timeout + 60 s
//	                            while it runs)
//
// RQ judges a worker by its hash alone: Worker.all drops (and SREMs) a key that no longer
// exists. hourglass lists such a key Gone and Stale, and reads the hash's TTL to know when it
// will expire: a worker is Stale at a time past that (its beat would have renewed it).

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// rqWorkerFields are the hash fields read, in this order.
var rqWorkerFields = []string{"hostname", "pid", "queues", "state", "current_job", "birth", "last_heartbeat",
	"successful_job_count", "failed_job_count"}

func (j rqJobs) workers(ctx context.Context, rdb redis.UniversalClient, _ []string, now time.Time) (Workers, error) {
	keys, found, err := scanMembers(ctx, rdb, j.key("workers"))
	if err != nil {
		return Workers{}, err
	}
	reads := make([]*redis.SliceCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	clocks := make([]*redis.TimeCmd, (len(keys)+workerChunk-1)/workerChunk)
	err = chunked(ctx, rdb, keys, func(pipe redis.Pipeliner, i int, key string) {
		if i%workerChunk == 0 { // one clock reading a pipeline
			clocks[i/workerChunk] = pipe.Time(ctx)
		}
		reads[i], ttls[i] = pipe.HMGet(ctx, key, rqWorkerFields...), pipe.PTTL(ctx, key)
	})
	if err != nil {
		return Workers{}, err
	}
	out := Workers{Found: found, Kept: true, Beats: true}
	for i, key := range keys {
		w := rqWorker(strings.TrimPrefix(key, j.key("worker")+":"), reads[i].Val())
		if ttl := ttls[i].Val(); ttl > 0 && !w.Gone {
			w.Expires = clocks[i/workerChunk].Val().Add(ttl) // EXPIRE's deadline by the server's clock
		}
		w.judge(now, "its hash expired (rq's Worker.all drops it)", "past its hash's expiry: no heartbeat renewed it")
		out.List = append(out.List, w)
	}
	return out, nil
}

// rqWorker reads one worker's hash fields (rqWorkerFields' order).
func rqWorker(name string, vals []any) Worker {
	w := newWorker(name)
	f := make([]string, len(rqWorkerFields))
	present := false
	for i := range f {
		if i < len(vals) {
			if s, ok := vals[i].(string); ok {
				f[i], present = s, true
			}
		}
	}
	if !present {
		w.Gone = true
		return w
	}
	w.Host, w.State, w.CurrentJob = f[0], f[3], f[4]
	if w.State == "" {
		w.State = "?" // Worker.refresh's default
	}
	if f[1] != "" {
		w.PID = atoiOrZero(f[1])
	}
	if f[2] != "" {
		w.Queues = strings.Split(f[2], ",")
	}
	w.Started, w.LastBeat = rqTime(f[5]), rqTime(f[6])
	w.Done, w.Failed = atoiOrZero(f[7]), atoiOrZero(f[8]) // absent counts 0, as Worker.refresh leaves it
	return w
}
