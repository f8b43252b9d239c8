package jobs

// Sidekiq's record of its processes (6.x, as its Launcher writes it and Sidekiq::ProcessSet
// reads it), every key under "<namespace>:" with redis-namespace:
//
//	processes      set    identities "<host>:<pid>:<nonce>" (SADDed at each beat, SREMed at stop)
//	<identity>     hash   info (JSON: hostname, pid, tag, concurrency, queues, labels, identity,
//	                      started_at in float seconds), busy, beat (float seconds), quiet
//	                      ("true" once quieted), rss, rtt_us; written every 5 s and set to
//	                      expire 60 s later
//
// ProcessSet#each skips an identity whose hash has expired (its info is nil) and
// ProcessSet.new (with cleanup) removes it from the set: hourglass lists it, Gone and Stale.
// A hash whose beat is 60 s old has expired by Redis' clock; a beat 60 s old at the time read
// is Stale as well.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"
)

// sidekiqBeatTTL is how long a process's hash outlives its last beat (Launcher#❤ EXPIREs it 60 s).
const sidekiqBeatTTL = 60 * time.Second

// sidekiqInfo is the JSON of a process's info field.
type sidekiqInfo struct {
	Hostname    string   `json:"hostname"`
	StartedAt   float64  `json:"started_at"`
	PID         *int64   `json:"pid"`
	Tag         string   `json:"tag"`
	Concurrency *int64   `json:"concurrency"`
	Queues      []string `json:"queues"`
}

func (j sidekiqJobs) workers(ctx context.Context, rdb redis.UniversalClient, _ []string, now time.Time) (Workers, error) {
	ids, found, err := scanMembers(ctx, rdb, j.key("processes"))
	if err != nil {
		return Workers{}, err
	}
	reads := make([]*redis.SliceCmd, len(ids))
	err = chunked(ctx, rdb, ids, func(pipe redis.Pipeliner, i int, id string) {
		reads[i] = pipe.HMGet(ctx, j.key(id), "info", "busy", "beat", "quiet")
	})
	if err != nil {
		return Workers{}, err
	}
	out := Workers{Found: found, Kept: true, Beats: true}
	for i, id := range ids {
		out.List = append(out.List, sidekiqWorker(id, reads[i].Val(), now))
	}
	return out, nil
}

// sidekiqWorker reads one process's hash fields (info, busy, beat, quiet).
func sidekiqWorker(id string, vals []any, now time.Time) Worker {
	w := newWorker(id)
	field := func(i int) (string, bool) {
		if i >= len(vals) {
			return "", false
		}
		s, ok := vals[i].(string)
		return s, ok
	}
	info, ok := field(0)
	if !ok {
		w.Gone = true
		w.judge(now, "heartbeat expired (Sidekiq's ProcessSet prunes it)", "")
		return w
	}
	var in sidekiqInfo
	if err := json.Unmarshal([]byte(info), &in); err == nil {
		w.Host, w.Queues, w.Started = in.Hostname, in.Queues, floatSeconds(in.StartedAt)
		if in.PID != nil {
			w.PID = *in.PID
		}
		if in.Concurrency != nil {
			w.Concurrency = *in.Concurrency
		}
	}
	if busy, ok := field(1); ok {
		w.Busy = atoiOrZero(busy) // busy.to_i, as ProcessSet reads it
	}
	w.State = "running"
	if quiet, _ := field(3); quiet == "true" {
		w.State = "quiet" // Process#stopping?
	}
	if beat, ok := field(2); ok {
		if w.LastBeat = unixFloat(beat); !w.LastBeat.IsZero() {
			w.Expires = w.LastBeat.Add(sidekiqBeatTTL)
		}
	}
	w.judge(now, "", "no heartbeat for 60 s (its hash expires then)")
	return w
}
