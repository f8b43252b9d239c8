package scanner

import "hourglass/store"

// classify returns the keys among names that belong to a family.
func (s *Sweep) classify(names []string) []Key {
	found := make([]Key, 0, len(names))
	for _, name := range names {
		if store.IsOwnKey(name) {
			continue // the tool's own bookkeeping (writer sequence records, decision counters)
		}
		if cl, ok := store.Classify(s.families, name, s.loc); ok {
			found = append(found, Key{Name: name, Classified: cl})
		} else if k, ok := s.classifyStructure(name); ok {
			found = append(found, k)
		}
	}
	return found
}

// classifyStructure finds the limiter, lock, unique or delay queue a key belongs to.
func (s *Sweep) classifyStructure(name string) (Key, bool) {
	for i, l := range s.structs.Limiters {
		if dims, ok := l.Pattern.Match(name); ok {
			return Key{Name: name, kind: kindLimiter, spec: i, Classified: store.Classified{Dims: dims}}, true
		}
	}
	for i, l := range s.structs.Locks {
		if dims, ok := l.Pattern.Match(name); ok {
			return Key{Name: name, kind: kindLock, spec: i, Classified: store.Classified{Dims: dims}}, true
		}
	}
	for i, q := range s.structs.DelayQueues {
		if q.Pattern == nil || store.IsCompanionKey(name) {
			continue
		}
		if dims, ok := q.Pattern.Match(name); ok {
			return Key{Name: name, kind: kindDelayQueue, spec: i, Classified: store.Classified{Dims: dims}}, true
		}
	}
	for i, u := range s.structs.Uniques {
		for _, g := range u.Family.Granularities() {
			if w, dims, ok := u.Family.Match(g, name, s.loc); ok {
				return Key{Name: name, kind: kindUnique, spec: i, window: w, Classified: store.Classified{Dims: dims}}, true
			}
		}
	}
	return Key{}, false
}
