package scanner

import (
	"fmt"

	"hourglass/store"
)

// queueTarget is a QueueRef resolved against the watched structures: what a read or an action
// on the queue needs.
type queueTarget struct {
	ref       QueueRef
	unit      store.ScoreUnit // a delay queue's
	companion string          // a delay queue's in-flight set or a list queue's processing list ("" none)
	source    store.JobSource // a job library's
}

// resolveQueue finds the entry ref names and checks that its key (or queue) is one the entry
// covers, so the drill-down reads and acts only on the queues the Snapshot showed.
func (w *Watcher) resolveQueue(ref QueueRef) (queueTarget, error) {
	w.specMu.RLock()
	st := w.opt.Structures
	w.specMu.RUnlock()
	t := queueTarget{ref: ref}
	switch ref.Kind {
	case QueueDelay:
		for _, q := range st.DelayQueues {
			if q.Name == ref.Name && covers(q.Key, q.Pattern, q.Exclude, ref.Key) {
				t.unit, t.companion = q.Unit, q.InFlight.Of(ref.Key, store.InFlightKey)
				return t, nil
			}
		}
	case QueueList:
		for _, q := range st.ListQueues {
			if q.Name == ref.Name && covers(q.Key, q.Pattern, q.Exclude, ref.Key) {
				t.companion = q.Processing.Of(ref.Key, store.ProcessingKey)
				return t, nil
			}
		}
	case QueueJob:
		for _, j := range st.JobQueues {
			if j.Name == ref.Name && (ref.Queue == "" || j.wants(ref.Queue)) {
				t.source = j.Source
				return t, nil
			}
		}
	}
	return t, fmt.Errorf("scanner: no %s queue %q covers %q", ref.Kind, ref.Name, Escape(ref.Key+ref.Queue))
}

// covers reports whether key is the entry's key, or a key its pattern matches and Exclude does
// not name.
func covers(entryKey string, p *store.Pattern, exclude store.Globs, key string) bool {
	if p == nil {
		return key == entryKey
	}
	_, ok := p.Match(key)
	return ok && !exclude.Match(key) && !store.IsCompanionKey(key)
}
