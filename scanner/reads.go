package scanner

import (
	"sort"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// A Snapshot needs a few reads past the keys a sweep's pages hold: the memory of the sampled
// problem keys, each queue's stats, the decisions hourglass's limiters counted, the unions of the
// unique families and the job libraries' counts. Which ones depends on what the pages held (the
// sampled keys, the deepest queues a pattern found, a unique family's busiest dims), so the
// aggregate says what it wants (Aggregator.Wants, no I/O), the sweep's last step reads it
// (Sweep.Finish, on the sweep's budget) and the aggregate folds the answers in
// (Aggregator.AddReads). Making the Snapshot then reads nothing: it is a function of the pages and
// the Reads, so the same ones always give the same Snapshot.

// Wants is what an aggregate needs read past its pages to make its Snapshot.
type Wants struct {
	at     time.Time // the server time the aggregate wants them for
	memory []string  // the problem keys sampled for MEMORY USAGE, once each
	types  []string  // the wrong-type samples, for TYPE
	delay  []delayWant
	lists  []listWant
	hour   store.Window // the hour of hourglass's limiter decision counters
	limits []limitWant
	unions []unionWant
	jobs   []jobWant
	blooms []bloomWant
}

// queueRef names one queue of a spec: a delay or list queue spec's key, or one its pattern found.
type queueRef struct {
	spec int
	key  string
}

// delayWant and listWant are a queue to read. depth is its depth (ZCARD, LLEN) as the sweep read
// it, for a queue a pattern found, so it is not read again; -1 for a spec's own key.
type delayWant struct {
	queueRef
	spec  DelayQueueSpec
	depth int64
}

type listWant struct {
	queueRef
	spec  ListQueueSpec
	depth int64
}

type limitWant struct {
	spec int
	name string
}

type unionWant struct {
	spec  int
	u     UniqueSpec
	today store.Window
	dims  []string // the busiest dims today, whose unions are read
}

type jobWant struct {
	spec       int
	src        JobQueueSpec
	found      []string // the queues the sweep found, sorted
	registries []string // the registry keys to read queue names from, sorted
	more       int64    // queues found past maxJobQueues
}

// Reads is what a sweep's last step read for its aggregate's Wants: plain values, each failure
// kept beside the read it spoilt, as the Snapshot reports it.
type Reads struct {
	// At is the server time the reads were made for: the Snapshot is taken at it.
	At time.Time

	sizes      map[string]int64  // MEMORY USAGE by key
	types      map[string]string // TYPE of the wrong-type samples
	memoryNote string            // why sizes are missing
	delay      map[queueRef]delayRead
	lists      map[queueRef]listRead
	limits     map[int]limitRead // by limiter spec
	unions     map[int]unionRead // by unique spec
	jobs       map[int]jobRead   // by job queue spec
	blooms     map[int]bloomRead // by bloom spec
	unclaimed  discover.Result
	// lateClaims are the keys unclaimed while the sweep read them that a job library's registry
	// named its queue's at the end (Celery's lists named after the queue alone).
	lateClaims int64
}

type delayRead struct {
	st  store.DelayQueueStats
	err error
}

type listRead struct {
	st  store.ListQueueStats
	err error
}

type limitRead struct{ allowed, rejected int64 }

// unionRead is a unique family's 7- and 30-day unions: each counted, or skipped with why; err is
// the last union's failure.
type unionRead struct {
	n7, n30       *int64
	skip7, skip30 *snapshot.UnionSkip
	err           string
}

// jobRead is one [[job_queue]] entry's queues (those the sweep found and those its registries
// name, within maxJobQueues) with the library's counts for each, and what it keeps for all.
type jobRead struct {
	names     []string
	more      int64
	err       error // reading a registry, or the shared counts
	stats     []jobs.Stats
	errs      []error // by queue
	shared    *jobs.Stats
	sharedErr error
	tput      []jobs.Throughput // the library's counts of the jobs it ran
	tputErr   error
	// workers are the library's live processes (jobs.Source.Workers), workersErr why not.
	workers    jobs.Workers
	workersErr error
}

// Wants says what the aggregate needs read past its pages, as of the server time now.
func (a *Aggregator) Wants() Wants {
	now := a.opt.Now()
	w := Wants{at: now, hour: store.WindowAt(store.Hour, now, a.opt.Location)}
	if a.opt.MemorySamples >= 0 {
		w.memory, w.types = a.samples()
	}
	st := a.structs
	for i, q := range st.specs.DelayQueues {
		if q.Pattern == nil {
			w.delay = append(w.delay, delayWant{queueRef{i, q.Key}, q, -1})
		}
		for _, kc := range st.queues[i] {
			w.delay = append(w.delay, delayWant{queueRef{i, kc.Key}, q, kc.Count})
		}
	}
	for i, q := range st.specs.ListQueues {
		if q.Pattern == nil {
			w.lists = append(w.lists, listWant{queueRef{i, q.Key}, q, -1})
		}
		for _, kc := range st.lists[i] {
			w.lists = append(w.lists, listWant{queueRef{i, kc.Key}, q, kc.Count})
		}
	}
	for i, l := range st.specs.Limiters {
		if l.Layout == limits.Hourglass {
			w.limits = append(w.limits, limitWant{i, l.Name})
		}
	}
	for i, u := range st.specs.Uniques {
		if today, best, ok := st.unionDims(i, now, a.opt.Location); ok {
			w.unions = append(w.unions, unionWant{i, u, today, best})
		}
	}
	for i, j := range st.specs.JobQueues {
		w.jobs = append(w.jobs, st.jobs[i].want(i, j))
	}
	for i := range st.specs.Blooms {
		w.blooms = append(w.blooms, st.blooms[i].want(i))
	}
	return w
}

// samples lists the problem keys sampled for MEMORY USAGE, once each, and the wrong-type ones
// for TYPE, in the families' order.
func (a *Aggregator) samples() (memory, types []string) {
	seen, typed := map[string]bool{}, map[string]bool{}
	for _, fa := range a.order {
		for p := range fa.problems {
			for _, name := range fa.problems[p].samples {
				if !seen[name] {
					seen[name] = true
					memory = append(memory, name)
				}
				if p == probWrongType && !typed[name] {
					typed[name] = true
					types = append(types, name)
				}
			}
		}
	}
	return memory, types
}

// unionDims is, for a unique family with day windows, today's window and the dims that counted
// the most in it: the tuple whose unions the Snapshot reports. ok is false when there is none.
func (a *structAgg) unionDims(i int, now time.Time, loc *time.Location) (today store.Window, best []string, ok bool) {
	f := a.specs.Uniques[i].Family
	if !f.Has(store.Day) {
		return store.Window{}, nil, false
	}
	today = store.WindowAt(store.Day, now, f.Zone(loc))
	w := a.uniques[i].windows[winKey{store.Day, today.Start.Unix()}]
	if w == nil {
		return store.Window{}, nil, false
	}
	return today, w.best, true
}

// want is what the job library entry i needs read: the registries of the library and those the
// sweep found, and the queues it found.
func (j *jobAgg) want(i int, spec JobQueueSpec) jobWant {
	w := jobWant{spec: i, src: spec, more: j.more}
	for q := range j.queues {
		w.found = append(w.found, q)
	}
	for q, other := range j.maybe {
		if !j.queues[q] && !j.queues[other] && spec.Covers(q) && len(w.found) < maxJobQueues {
			w.found = append(w.found, q)
		}
	}
	regs := map[string]bool{}
	for _, r := range spec.Source.Registries() {
		regs[r] = true
	}
	for r := range j.registries {
		regs[r] = true
	}
	for r := range regs {
		w.registries = append(w.registries, r)
	}
	sort.Strings(w.found)
	sort.Strings(w.registries)
	return w
}

// AddReads folds in what the sweep's last step read for the aggregate's Wants; the Snapshot is
// then taken at r.At.
func (a *Aggregator) AddReads(r Reads) {
	a.reads = &r
}

// The reads of one structure; ok is false when the sweep's last step has not read it (it has
// not run, or the aggregate did not want it then).

func (r *Reads) delayQueue(q queueRef) (delayRead, bool) {
	if r == nil {
		return delayRead{}, false
	}
	d, ok := r.delay[q]
	return d, ok
}

func (r *Reads) list(q queueRef) (listRead, bool) {
	if r == nil {
		return listRead{}, false
	}
	l, ok := r.lists[q]
	return l, ok
}

func (r *Reads) limit(spec int) (limitRead, bool) {
	if r == nil {
		return limitRead{}, false
	}
	l, ok := r.limits[spec]
	return l, ok
}

func (r *Reads) union(spec int) (unionRead, bool) {
	if r == nil {
		return unionRead{}, false
	}
	u, ok := r.unions[spec]
	return u, ok
}

func (r *Reads) job(spec int) (jobRead, bool) {
	if r == nil {
		return jobRead{}, false
	}
	j, ok := r.jobs[spec]
	return j, ok
}
