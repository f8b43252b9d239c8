package scanner

import (
	"context"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// jobAgg gathers what a sweep found of one job library: the names of its queues and its
// registry keys (bounded: a keyspace can hold any number of them).
type jobAgg struct {
	queues     map[string]bool
	registries map[string]bool
	more       int64 // queues found past maxJobQueues
}

// maxJobQueues bounds the queues one [[job_queue]] entry reports; maxJobRegistries the registry
// keys it reads.
const (
	maxJobQueues     = 200
	maxJobRegistries = 50
)

func newJobAgg() jobAgg { return jobAgg{queues: map[string]bool{}, registries: map[string]bool{}} }

// add notes the queue a key of the library belongs to, or the key itself when it is a registry.
func (j *jobAgg) add(name string, k store.JobKey, spec JobQueueSpec) {
	switch {
	case k.Registry:
		if len(j.registries) < maxJobRegistries {
			j.registries[name] = true
		}
	case k.Queue != "" && spec.wants(k.Queue) && !j.queues[k.Queue]:
		if len(j.queues) >= maxJobQueues {
			j.more++
			return
		}
		j.queues[k.Queue] = true
	}
}

// jobQueues reads each [[job_queue]] entry: the queues the sweep found and the library's
// registries name, each with the library's own counts, and what it keeps for all queues.
func (a *structAgg) jobQueues(ctx context.Context, rdb redis.UniversalClient, now time.Time) []JobQueues {
	out := []JobQueues{}
	for i, spec := range a.specs.JobQueues {
		src := spec.Source
		jq := JobQueues{Name: spec.Name, Layout: string(src.Layout), Prefix: src.Prefix, Queues: []JobQueue{}, Notes: src.Notes()}
		if jq.Notes == nil {
			jq.Notes = []string{}
		}
		if rdb == nil {
			out = append(out, jq)
			continue
		}
		names, more, err := a.jobQueueNames(ctx, rdb, i)
		if err != nil {
			jq.Error = err.Error()
		}
		jq.QueuesFound = int64(len(names)) + more
		for _, q := range names {
			ref := QueueRef{Kind: QueueJob, Name: spec.Name, Queue: q, queue: src.Queue(q), where: q}
			st, err := ref.queue.Stats(ctx, rdb, now)
			jq.Queues = append(jq.Queues, jobQueueOf(ref, st.Job, err))
		}
		shared := QueueRef{Kind: QueueJob, Name: spec.Name, queue: src.Queue("")}
		if st, err := shared.queue.Stats(ctx, rdb, now); err != nil {
			jq.Error = err.Error()
		} else if st.Job != nil {
			row := jobQueueOf(shared, st.Job, nil)
			jq.Shared = &row
		}
		out = append(out, jq)
	}
	return out
}

// jobQueueNames merges the queues the sweep found with those the library's registries name,
// sorted, within maxJobQueues.
func (a *structAgg) jobQueueNames(ctx context.Context, rdb redis.UniversalClient, i int) ([]string, int64, error) {
	spec, agg := a.specs.JobQueues[i], a.jobs[i]
	seen := map[string]bool{}
	for q := range agg.queues {
		seen[q] = true
	}
	regs := map[string]bool{}
	for _, r := range spec.Source.Registries() {
		regs[r] = true
	}
	for r := range agg.registries {
		regs[r] = true
	}
	var firstErr error
	more := agg.more
	for r := range regs {
		names, err := spec.Source.Registered(ctx, rdb, r)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, q := range names {
			switch {
			case seen[q] || !spec.wants(q):
			case len(seen) >= maxJobQueues:
				more++
			default:
				seen[q] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for q := range seen {
		names = append(names, q)
	}
	sort.Strings(names)
	return names, more, firstErr
}

// jobQueueOf renders the stats of ref's queue; a count the library does not keep there is null.
func jobQueueOf(ref QueueRef, st *store.JobStats, err error) JobQueue {
	q := JobQueue{Queue: Escape(ref.Queue), RawQueue: ref.Queue, States: map[string]int64{}, Ref: ref}
	if err != nil || st == nil {
		q.Error = err.Error()
		return q
	}
	kept := func(n int64) *int64 {
		if n == store.Absent {
			return nil
		}
		return &n
	}
	q.Waiting, q.Active, q.Scheduled = kept(st.Waiting), kept(st.Active), kept(st.Scheduled)
	q.Retry, q.Dead, q.Completed = kept(st.Retry), kept(st.Dead), kept(st.Completed)
	q.Paused = st.Paused
	for name, n := range st.States {
		q.States[name] = n
	}
	if s := st.Schedule; s != nil {
		q.Warning, q.Missing = s.Warning, s.Missing
		if s.Timed {
			due, lag, next := s.Due, s.Lag.Milliseconds(), int64(-1)
			if s.NextIn >= 0 {
				next = s.NextIn.Milliseconds()
			}
			q.Due, q.OldestDueAgeMS, q.NextDueInMS = &due, &lag, &next
		}
	}
	return q
}
