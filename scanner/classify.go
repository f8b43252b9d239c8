package scanner

import (
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// A key belongs to the first family or structure that claims it, in this order: counter
// families, then the structures' entries in matchers' order. A key that a second structure entry
// would also claim is counted once, under the first, and the snapshot warns about the pair.

// matcher claims the keys of one structure entry.
type matcher struct {
	kind  keyKind
	spec  int
	as    keyKind // for kindClaimed: the kind of queue configured by the key
	match func(name string) (Key, bool)
}

// matchers lists the structure entries' matchers: queues configured by their key first (they
// are read by that key, so a pattern that also fits it is the second claim), then limiters,
// locks, delay and list queue patterns, uniques and job libraries.
func matchers(st Structures, loc *time.Location) []matcher {
	var out []matcher
	// A queue configured by its key claims that key and its companion (its in-flight set or
	// processing list), which the snapshot reads with it.
	exact := func(kind keyKind, i int, key, companion string) {
		out = append(out, matcher{kindClaimed, i, kind, func(name string) (Key, bool) {
			return Key{Name: name, kind: kindClaimed, spec: i}, name == key || companion != "" && name == companion
		}})
	}
	for i, q := range st.DelayQueues {
		if q.Pattern == nil {
			exact(kindDelayQueue, i, q.Key, q.InFlightOf(q.Key))
		}
	}
	for i, q := range st.ListQueues {
		if q.Pattern == nil {
			exact(kindListQueue, i, q.Key, q.ProcessingOf(q.Key))
		}
	}
	byPattern := func(kind keyKind, i int, p *store.Pattern, exclude store.Globs) {
		out = append(out, matcher{kind, i, kind, func(name string) (Key, bool) {
			dims, ok := p.Match(name)
			if !ok || exclude.Match(name) {
				return Key{}, false
			}
			return Key{Name: name, kind: kind, spec: i, Classified: store.Classified{Dims: dims}}, true
		}})
	}
	for i, l := range st.Limiters {
		byPattern(kindLimiter, i, l.Pattern, l.Exclude)
	}
	for i, l := range st.Locks {
		byPattern(kindLock, i, l.Pattern, l.Exclude)
	}
	for i, q := range st.DelayQueues {
		if q.Pattern != nil {
			byPattern(kindDelayQueue, i, q.Pattern, q.Exclude)
		}
	}
	for i, q := range st.ListQueues {
		if q.Pattern != nil {
			byPattern(kindListQueue, i, q.Pattern, q.Exclude)
		}
	}
	for i, q := range st.DelayQueues {
		if q.Pattern != nil && q.InFlight == (store.Companion{}) {
			out = append(out, ownCompanions(kindDelayQueue, i, q.Pattern, q.Exclude))
		}
	}
	for i, q := range st.ListQueues {
		if q.Pattern != nil && q.Processing == (store.Companion{}) {
			out = append(out, ownCompanions(kindListQueue, i, q.Pattern, q.Exclude))
		}
	}
	for i, u := range st.Uniques {
		out = append(out, matcher{kindUnique, i, kindUnique, func(name string) (Key, bool) {
			return matchUnique(u.Family, i, name, loc)
		}})
	}
	out = append(out, jobMatchers(st)...)
	return append(out, bloomMatchers(st)...)
}

// ownCompanions claims the companions hourglass names for itself (InFlightKey, ProcessingKey) of
// the queues a pattern matches: they are read with their queue.
func ownCompanions(kind keyKind, i int, p *store.Pattern, exclude store.Globs) matcher {
	return matcher{kindClaimed, i, kind, func(name string) (Key, bool) {
		q, ok := store.CompanionQueue(name)
		if !ok || exclude.Match(q) {
			return Key{}, false
		}
		_, ok = p.Match(q)
		return Key{Name: name, kind: kindClaimed, spec: i}, ok
	}}
}

// matchUnique claims a key of unique family f (spec i).
func matchUnique(f *store.Family, i int, name string, loc *time.Location) (Key, bool) {
	if f.Excludes(name) {
		return Key{}, false
	}
	for _, g := range f.Granularities() {
		if w, dims, ok := f.Match(g, name, loc); ok {
			return Key{Name: name, kind: kindUnique, spec: i, window: w, Classified: store.Classified{Dims: dims}}, true
		}
	}
	return Key{}, false
}

// jobMatchers claim the job libraries' keys: the queue a key belongs to is found, not read.
func jobMatchers(st Structures) []matcher {
	var out []matcher
	for i, j := range st.JobQueues {
		out = append(out, matcher{kindJob, i, kindJob, func(name string) (Key, bool) {
			jk, ok := j.Source.Classify(name)
			return Key{Name: name, kind: kindJob, spec: i, job: jk}, ok
		}})
	}
	return out
}

// classify returns the keys among names, one SCAN page of master addr, that belong to a family or
// structure, and those of the others (counted into the sweep's discover groups, page by page for
// their estimates) whose type and value should be read. continues says the page carries on the
// last one's hash slot.
func (s *Sweep) classify(addr string, continues bool, names []string) ([]Key, []string) {
	found := make([]Key, 0, len(names))
	var unclaimed, expected []string
	for _, name := range names {
		if store.IsOwnKey(name) {
			continue // the tool's own bookkeeping (writer sequence records, decision counters)
		}
		// A counter family's key is the family's: checking it against every structure entry
		// too would triple the cost of classifying counters, the bulk of most keyspaces.
		if cl, ok := store.Classify(s.families, name, s.loc); ok {
			found = append(found, Key{Name: name, Classified: cl})
		} else if k, ok := s.classifyStructure(name); ok {
			found = append(found, k)
			if k.kind == kindJob && k.job.Registry { // Celery's exchange names its queue's list
				expected = append(expected, s.structs.JobQueues[k.spec].Source.NamedQueueKeys(name)...)
			}
		} else {
			unclaimed = append(unclaimed, name)
		}
	}
	if s.groups == nil {
		return found, nil
	}
	s.groups.Expect(expected...)
	return found, s.groups.AddPage(addr, len(names), continues, unclaimed)
}

// classifyStructure finds the structure a key belongs to, and the next entry that would also
// claim it.
func (s *Sweep) classifyStructure(name string) (Key, bool) {
	for i, m := range s.matchers {
		if m.kind == kindDelayQueue && store.IsCompanionKey(name) {
			continue // a queue's in-flight set is not a queue
		}
		if k, ok := m.match(name); ok {
			k.also = s.alsoClaimed(name, i+1)
			return k, true
		}
	}
	return Key{}, false
}

// alsoClaimed returns 1 + the index of the first matcher from from on that claims name, or 0.
func (s *Sweep) alsoClaimed(name string, from int) int {
	for i := from; i < len(s.matchers); i++ {
		m := s.matchers[i]
		if m.kind == kindDelayQueue && store.IsCompanionKey(name) {
			continue
		}
		if _, ok := m.match(name); ok {
			return i + 1
		}
	}
	return 0
}
