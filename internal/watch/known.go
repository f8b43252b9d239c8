package watch

import (
	"context"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// readKnown reads the structures' known keys again (scanner.Known: the queues, the job
// libraries' queues, the limiters' busiest keys, the locks shown) and puts them into the Status's
// Snapshot and Partial, so nothing live waits for a sweep: a queue's depth moves every Poll
// however long the sweep under way has to go. Until a sweep completes, what the sweep under way
// has found so far is read; after, what the last complete one found. It is charged to the sweep's
// budget. Polls closer together than half of snapshot.MinRefresh (a program polling in a loop) reuse
// the last read, so the reads never take more of the budget than a console refreshing at its
// fastest would. w.mu is held.
func (w *Watcher) readKnown(ctx context.Context, st *snapshot.Status) error {
	if st.Snapshot == nil && st.Partial == nil {
		return nil
	}
	if w.knownRead == nil || time.Since(w.knownAt) >= snapshot.MinRefresh/2 {
		known := w.known
		if known == nil || w.last == nil {
			k := w.agg.Known()
			known = &k
		}
		if known.Empty() {
			return nil
		}
		live, err := w.sweep.ReadKnown(ctx, *known)
		if err != nil {
			return err
		}
		w.knownRead, w.knownAt = &live, time.Now()
		w.cost.readLive(live.Charged)
	}
	st.Snapshot, st.Partial = w.knownRead.Apply(st.Snapshot), w.knownRead.Apply(st.Partial)
	return nil
}
