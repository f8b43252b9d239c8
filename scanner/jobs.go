package scanner

import (
	"sort"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// jobAgg gathers what a sweep found of one job library: the names of its queues and its
// registry keys (bounded: a keyspace can hold any number of them).
type jobAgg struct {
	queues     map[string]bool
	registries map[string]bool
	more       int64 // queues found past maxJobQueues
	// maybe are the queues found only by keys that may be another's (jobs.Key.Else), with
	// that other queue: taken for queues unless it is one.
	maybe map[string]string
}

// maxJobQueues bounds the queues one [[job_queue]] entry reports; maxJobRegistries the registry
// keys it reads.
const (
	maxJobQueues     = 200
	maxJobRegistries = 50
)

func newJobAgg() jobAgg {
	return jobAgg{queues: map[string]bool{}, registries: map[string]bool{}, maybe: map[string]string{}}
}

// add notes the queue a key of the library belongs to, or the key itself when it is a registry.
func (j *jobAgg) add(name string, k jobs.Key, spec JobQueueSpec) {
	switch {
	case k.Registry:
		if len(j.registries) < maxJobRegistries {
			j.registries[name] = true
		}
	case k.Else != "" && !j.queues[k.Queue]:
		if len(j.maybe) < maxJobQueues {
			j.maybe[k.Queue] = k.Else
		}
	case k.Queue != "" && spec.Covers(k.Queue) && !j.queues[k.Queue]:
		if len(j.queues) >= maxJobQueues {
			j.more++
			return
		}
		j.queues[k.Queue] = true
	}
}

// jobQueues renders each [[job_queue]] entry: the queues the sweep found and the library's
// registries name, each with the library's own counts, and what it keeps for all queues, as the
// sweep's last step read them (none when it has not run).
func (a *structAgg) jobQueues(reads *Reads) []snapshot.JobQueues {
	out := []snapshot.JobQueues{}
	for i, spec := range a.specs.JobQueues {
		src := spec.Source
		jq := snapshot.JobQueues{Name: spec.Name, Layout: string(src.Layout), Prefix: src.Prefix, Queues: []snapshot.JobQueue{}, Notes: src.Notes(),
			Throughput: []snapshot.JobThroughput{}}
		if jq.Notes == nil {
			jq.Notes = []string{}
		}
		r, ok := reads.job(i)
		if !ok {
			out = append(out, jq)
			continue
		}
		if r.err != nil {
			jq.Error = r.err.Error()
		}
		jq.QueuesFound = int64(len(r.names)) + r.more
		for k, q := range r.names {
			ref := snapshot.QueueRef{Kind: snapshot.QueueJob, Name: spec.Name, Queue: q}
			jq.Queues = append(jq.Queues, jobQueueOf(ref, &r.stats[k], r.errs[k]))
		}
		jq.Throughput, jq.ThroughputNote = throughputOf(r.tput), throughputNote(src, r.tputErr)
		if r.tputErr != nil && len(jq.Throughput) == 0 {
			jq.Throughput = unreadThroughput(src, r.names, r.tputErr)
		}
		if r.sharedErr != nil {
			jq.Error = r.sharedErr.Error()
		} else if r.shared != nil {
			row := jobQueueOf(snapshot.QueueRef{Kind: snapshot.QueueJob, Name: spec.Name}, r.shared, nil)
			jq.Shared = &row
		}
		jq.Workers = jobWorkersOf(r.workers, r.workersErr, reads.At)
		out = append(out, jq)
	}
	return out
}

// mergeJobQueues merges the queues the sweep found with those the library's registries name
// (registered, in j.registries' order), sorted, within maxJobQueues; more counts those left out.
func mergeJobQueues(j jobWant, registered [][]string) (names []string, more int64) {
	seen := map[string]bool{}
	for _, q := range j.found {
		seen[q] = true
	}
	more = j.more
	for _, regNames := range registered {
		for _, q := range regNames {
			switch {
			case seen[q] || !j.src.Covers(q):
			case len(seen) >= maxJobQueues:
				more++
			default:
				seen[q] = true
			}
		}
	}
	names = make([]string, 0, len(seen))
	for q := range seen {
		names = append(names, q)
	}
	sort.Strings(names)
	return names, more
}

// jobQueueOf renders the stats of ref's queue; a count the library does not keep there is null.
func jobQueueOf(ref snapshot.QueueRef, st *jobs.Stats, err error) snapshot.JobQueue {
	q := snapshot.JobQueue{Queue: format.Escape(ref.Queue), RawQueue: ref.Queue, States: map[string]int64{}, Ref: ref}
	if err != nil {
		q.Error = err.Error()
		return q
	}
	if st == nil { // nothing read: every count unknown
		return q
	}
	kept := func(n int64) *int64 {
		if n == jobs.Absent {
			return nil
		}
		return &n
	}
	q.Waiting, q.Active, q.Scheduled = kept(st.Waiting), kept(st.Active), kept(st.Scheduled)
	q.Retry, q.Dead, q.Completed = kept(st.Retry), kept(st.Dead), kept(st.Completed)
	q.Paused = st.Paused
	q.LatencyMS, q.LatencyNote = latencyMS(st.Latency, st.LatencyNote)
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

// latencyMS is a queue's latency as read (negative: not known), in milliseconds, or null with why.
func latencyMS(d time.Duration, why string) (*int64, string) {
	if d < 0 {
		return nil, why
	}
	ms := d.Milliseconds()
	return &ms, ""
}
