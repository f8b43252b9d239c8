package scanner

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// Finish is the sweep's last step: after its pages, it reads what their aggregate wants past
// them (the sampled keys' memory, the queues, the limiters' decisions, the unions, the job
// libraries) and returns the values, with the unclaimed keys' groups. A read that fails is kept
// beside the value it spoilt, as the Snapshot reports it, so Finish has no error of its own. The
// unions' reads are charged to the sweep's budget, as its pages are; each read holds Redis for
// at most valueChunk keys.
func (s *Sweep) Finish(ctx context.Context, w Wants) Reads {
	r := Reads{At: w.at, unclaimed: s.unclaimedResult()}
	r.sizes, r.types, r.memoryNote = s.readMemory(ctx, w.memory, w.types)
	r.delay = map[queueRef]delayRead{}
	for _, q := range w.delay {
		r.delay[q.queueRef] = s.readDelayQueue(ctx, q, w)
	}
	r.lists = map[queueRef]listRead{}
	for _, q := range w.lists {
		r.lists[q.queueRef] = s.readListQueue(ctx, q, w)
	}
	r.limits = s.readDecisions(ctx, w)
	r.unions = map[int]unionRead{}
	for _, u := range w.unions {
		r.unions[u.spec] = readUnions(ctx, s.rdb, u, s.pace)
	}
	r.jobs = map[int]jobRead{}
	claimed := map[string]bool{} // queue keys known only once a registry names the queue
	for _, j := range w.jobs {
		r.jobs[j.spec] = s.readJobs(ctx, j, w)
		for _, q := range r.jobs[j.spec].names {
			for _, k := range j.src.Source.QueueKeys(q) {
				claimed[format.Escape(k)] = true
			}
		}
	}
	r.blooms = s.readBlooms(ctx, w.blooms)
	left := r.unclaimed.Claiming(claimed)
	r.unclaimed, r.lateClaims = left, r.unclaimed.Keys-left.Keys
	return r
}

// readMemory reads the memory each of memory holds, and the type of each of types, in pipelines
// of at most valueChunk keys. When the server refuses MEMORY USAGE or the read fails, note says
// so and no size is kept.
func (s *Sweep) readMemory(ctx context.Context, memory, types []string) (map[string]int64, map[string]string, string) {
	sizes, kinds := map[string]int64{}, map[string]string{}
	note := ""
	for len(memory) > 0 {
		n := min(len(memory), valueChunk)
		why, err := readSizes(ctx, s.rdb, memory[:n], sizes)
		if err != nil {
			return map[string]int64{}, kinds, "MEMORY USAGE failed: " + err.Error()
		}
		if why != "" { // refused: no size is kept, so the other chunks are not asked
			note = why
			break
		}
		memory = memory[n:]
	}
	for len(types) > 0 {
		n := min(len(types), valueChunk)
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.StatusCmd, n)
		for i, name := range types[:n] {
			cmds[i] = pipe.Type(ctx, name)
		}
		_, _ = pipe.Exec(ctx) // a type not read is left out
		for i, c := range cmds {
			if t, err := c.Result(); err == nil && t != "none" {
				kinds[types[i]] = t
			}
		}
		types = types[n:]
	}
	if note != "" {
		return map[string]int64{}, kinds, note
	}
	return sizes, kinds, ""
}

// readSizes reads MEMORY USAGE of names into sizes in one pipeline. why says the server refused
// it; err is a failure of the whole read.
func readSizes(ctx context.Context, rdb redis.UniversalClient, names []string, sizes map[string]int64) (why string, err error) {
	pipe := rdb.Pipeline()
	mem := make([]*redis.IntCmd, len(names))
	for i, name := range names {
		mem[i] = pipe.MemoryUsage(ctx, name)
	}
	if _, err := pipe.Exec(ctx); err != nil && !KeyLevel(err) {
		return "", err
	}
	for i, c := range mem {
		n, err := c.Result()
		switch {
		case err == nil:
			sizes[names[i]] = n
		case err == redis.Nil: // gone since the sweep read it
		default:
			var rerr redis.Error
			if errors.As(err, &rerr) && why == "" {
				why = "MEMORY USAGE refused: " + strings.TrimSpace(err.Error())
			}
		}
	}
	return why, nil
}

// readDecisions reads the decisions hourglass's limiters counted in the wanted hour; a limiter
// whose counters could not be read is left out, and so is one with no counter of the hour: its
// keys are written by a program other than hourglass's store, which counts no decisions, or
// nothing was decided yet this hour, and the two cannot be told apart.
func (s *Sweep) readDecisions(ctx context.Context, w Wants) map[int]limitRead {
	out := map[int]limitRead{}
	for _, l := range w.limits {
		stats := store.LimiterStats(l.name)
		ka, _ := stats.Key(w.hour, []string{l.name, "allowed"})
		kr, _ := stats.Key(w.hour, []string{l.name, "rejected"})
		if vals, err := s.rdb.MGet(ctx, ka, kr).Result(); err == nil && len(vals) == 2 && (vals[0] != nil || vals[1] != nil) {
			var lr limitRead
			lr.allowed, _ = strconv.ParseInt(str(vals[0]), 10, 64)
			lr.rejected, _ = strconv.ParseInt(str(vals[1]), 10, 64)
			out[l.spec] = lr
		}
	}
	return out
}

// readJobs reads one [[job_queue]] entry: its queues and their counts (readJobQueues), what the
// library counts of the jobs it ran, and its workers.
func (s *Sweep) readJobs(ctx context.Context, j jobWant, w Wants) jobRead {
	src := j.src.Source
	jr := s.readJobQueues(ctx, j, w)
	scopes := 1
	if perQueue, _ := src.ThroughputKept(); perQueue {
		scopes = len(jr.names)
	}
	jr.tput, jr.tputErr = ReadThroughput(ctx, s.rdb, src, jr.names, daysFor(scopes), w.at)
	jr.workers, jr.workersErr = src.Workers(ctx, s.rdb, jr.names, w.at)
	s.pace.Spend(len(jr.workers.List)) // the processes' records read, charged as the pages are
	return jr
}

// readJobQueues reads the queue names an entry's registries hold, merged with those the sweep
// found, and the library's counts for each queue and for all.
func (s *Sweep) readJobQueues(ctx context.Context, j jobWant, w Wants) jobRead {
	src := j.src.Source
	registered := make([][]string, len(j.registries))
	var jr jobRead
	for i, reg := range j.registries {
		names, err := src.Registered(ctx, s.rdb, reg)
		if err != nil && jr.err == nil {
			jr.err = err
		}
		registered[i] = names
	}
	jr.names, jr.more = mergeJobQueues(j, registered)
	for _, q := range jr.names {
		var job jobs.Stats
		st, err := src.Queue(q).Stats(ctx, s.rdb, w.at)
		if st.Job != nil {
			job = *st.Job
		}
		jr.stats, jr.errs = append(jr.stats, job), append(jr.errs, err)
	}
	st, err := src.SharedQueue().Stats(ctx, s.rdb, w.at)
	jr.shared, jr.sharedErr = st.Job, err
	return jr
}

// readDelayQueue reads one delay queue's stats; the depth of a queue a pattern found is the one
// its page read (ZCARD), not asked again.
func (s *Sweep) readDelayQueue(ctx context.Context, q delayWant, w Wants) delayRead {
	inflight := q.spec.InFlightOf(q.key)
	if q.depth >= 0 {
		st, err := store.DelayQueueStatsOfDepth(ctx, s.rdb, q.key, inflight, q.spec.Unit, w.at, q.depth)
		return delayRead{st, err}
	}
	st, err := store.DelayQueueStatsOf(ctx, s.rdb, q.key, inflight, q.spec.Unit, w.at)
	return delayRead{st, err}
}

// readListQueue reads one list queue's stats; the length of a list a pattern found is the one its
// page read (LLEN), not asked again.
func (s *Sweep) readListQueue(ctx context.Context, q listWant, w Wants) listRead {
	processing := q.spec.ProcessingOf(q.key)
	var st store.ListQueueStats
	var err error
	if q.depth >= 0 {
		st, err = store.ListQueueStatsOfLength(ctx, s.rdb, q.key, processing, q.depth)
	} else {
		st, err = store.ListQueueStatsOf(ctx, s.rdb, q.key, processing)
	}
	if err == nil && !st.Missing {
		st.Latency, st.LatencyNote, err = jobs.ListLatency(ctx, s.rdb, q.key, st.Length, w.at)
	}
	return listRead{st, err}
}
