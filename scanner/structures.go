package scanner

import (
	"slices"

	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// Structures are the queues, limiters, uniques and locks a snapshot covers, beside the counter
// families.
type Structures struct {
	DelayQueues []DelayQueueSpec
	ListQueues  []ListQueueSpec
	Limiters    []LimiterSpec
	Uniques     []UniqueSpec
	Locks       []LockSpec
	JobQueues   []JobQueueSpec
	Blooms      []BloomSpec
}

// DelayQueueSpec is a delay queue by its key, or a family of them by a pattern that the sweep
// matches (each key a queue, less those Exclude names).
type DelayQueueSpec struct {
	Name, Key string
	Pattern   *store.Pattern // instead of Key; nil for a single queue
	Unit      store.ScoreUnit
	InFlight  store.Companion // the queue's claimed tasks; the zero value is hourglass's own
	Exclude   store.Globs
}

// Covers reports whether the entry covers the queue at key: its own key, or a key its pattern
// matches and its exclusions leave, as the sweep classifies it (a queue's in-flight set is not
// a queue).
func (q DelayQueueSpec) Covers(key string) bool {
	return covers(key, q.Key, q.Pattern, q.Exclude) && (q.Pattern == nil || !store.IsCompanionKey(key))
}

// ListQueueSpec is a list queue by its key, or a family of them by a pattern.
type ListQueueSpec struct {
	Name, Key  string
	Pattern    *store.Pattern // instead of Key; nil for a single queue
	Processing store.Companion
	Exclude    store.Globs
}

// Covers reports whether the entry covers the queue at key, as DelayQueueSpec.Covers.
func (q ListQueueSpec) Covers(key string) bool { return covers(key, q.Key, q.Pattern, q.Exclude) }

// ProcessingOf is the processing list of the queue at key.
func (q ListQueueSpec) ProcessingOf(key string) string {
	return q.Processing.Of(key, store.ProcessingKey)
}

// InFlightOf is the in-flight set of the queue at key.
func (q DelayQueueSpec) InFlightOf(key string) string { return q.InFlight.Of(key, store.InFlightKey) }

// covers reports whether key is own, or, for an entry with a pattern, a key p matches and
// exclude leaves.
func covers(key, own string, p *store.Pattern, exclude store.Globs) bool {
	if p == nil {
		return key == own
	}
	_, ok := p.Match(key)
	return ok && !exclude.Match(key)
}

// LimiterSpec is a limiter whose keys a sweep finds by pattern, ours or not.
type LimiterSpec struct {
	store.LimiterSpec
	Pattern *store.Pattern
	Exclude store.Globs
	// Layout is whose keys they are: hourglass's own (Kind says sliding or fixed) or a library's,
	// read as that library answers (limits.ReadKeys). Burst is redis_rate's (0: Limit).
	Layout limits.Layout
	Burst  int64
}

// JobQueueSpec is a job library's queues under one prefix: every queue the library registers or
// the sweep finds, or those whose names Queues matches (none: all), less Exclude's.
type JobQueueSpec struct {
	Name    string
	Source  jobs.Source
	Queues  store.Globs // queue names, not keys
	Exclude store.Globs // queue names
}

// Covers reports whether the spec covers the queue named queue.
func (j JobQueueSpec) Covers(queue string) bool {
	return (j.Queues.Empty() || j.Queues.Match(queue)) && !j.Exclude.Match(queue)
}

// UniqueSpec is a HyperLogLog or bitmap family.
type UniqueSpec struct {
	Kind   store.UniqueKind
	Family *store.Family
}

// LockSpec is a lock pattern.
type LockSpec struct {
	Name    string
	Pattern *store.Pattern
	Exclude store.Globs
}

// BloomSpec is a pattern of Bloom filters: ours, read by their metadata hash (their sub-filters'
// bitmaps are theirs too), or RedisBloom's module type, read with BF.INFO.
type BloomSpec struct {
	Name    string
	Pattern *store.Pattern
	Exclude store.Globs
}

// Empty reports whether there is nothing but counters to watch.
func (s Structures) Empty() bool {
	return len(s.DelayQueues)+len(s.ListQueues)+len(s.Limiters)+len(s.Uniques)+len(s.Locks)+len(s.JobQueues)+len(s.Blooms) == 0
}

// keyKind says what a key a sweep found is.
type keyKind uint8

const (
	kindCounter keyKind = iota
	kindLimiter
	kindLock
	kindUnique
	kindDelayQueue
	kindListQueue
	kindJob // a job library's key: its queue is found, nothing is read
	// kindClaimed is the key of a queue configured by its key: it is read by that key, so the
	// sweep only notes that it is claimed (a pattern that also matches it is a second claim).
	kindClaimed
	kindBloom     // a key a [[bloom]] pattern matches: a filter's metadata, RedisBloom's, or neither
	kindBloomPart // a sub-filter's bitmap of a filter a [[bloom]] pattern matches: read with it
)

// With returns s and add together, in new slices.
func (s Structures) With(add Structures) Structures {
	return Structures{
		DelayQueues: slices.Concat(s.DelayQueues, add.DelayQueues),
		ListQueues:  slices.Concat(s.ListQueues, add.ListQueues),
		Limiters:    slices.Concat(s.Limiters, add.Limiters),
		Uniques:     slices.Concat(s.Uniques, add.Uniques),
		Locks:       slices.Concat(s.Locks, add.Locks),
		JobQueues:   slices.Concat(s.JobQueues, add.JobQueues),
		Blooms:      slices.Concat(s.Blooms, add.Blooms),
	}
}
