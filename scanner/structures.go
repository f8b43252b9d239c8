package scanner

import (
	"hourglass/store"
)

// Structures are the queues, limiters, uniques and locks a snapshot covers, beside the counter
// families.
type Structures struct {
	DelayQueues []DelayQueueSpec
	ListQueues  []ListQueueSpec
	Limiters    []LimiterSpec
	Uniques     []UniqueSpec
	Locks       []LockSpec
}

// DelayQueueSpec is a delay queue by its key, or a family of them by a pattern that the sweep
// matches (each key a queue); a queue's in-flight set is the store's companion key.
type DelayQueueSpec struct {
	Name, Key string
	Pattern   *store.Pattern // instead of Key; nil for a single queue
	Unit      store.ScoreUnit
}

// ListQueueSpec is a list queue by its key.
type ListQueueSpec struct {
	Name, Key string
}

// LimiterSpec is a limiter whose keys a sweep finds by pattern, ours or not.
type LimiterSpec struct {
	store.LimiterSpec
	Pattern *store.Pattern
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
}

// Empty reports whether there is nothing but counters to watch.
func (s Structures) Empty() bool {
	return len(s.DelayQueues)+len(s.ListQueues)+len(s.Limiters)+len(s.Uniques)+len(s.Locks) == 0
}

// keyKind says what a key a sweep found is.
type keyKind uint8

const (
	kindCounter keyKind = iota
	kindLimiter
	kindLock
	kindUnique
	kindDelayQueue
)
