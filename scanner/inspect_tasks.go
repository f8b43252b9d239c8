package scanner

import (
	"context"
	"errors"

	"hourglass/store"
)

// errNoQueue refuses a QueueRef no Snapshot made: the drill-down reads and acts only on the
// queues a Snapshot showed.
var errNoQueue = errors.New("scanner: the Snapshot showed no such queue")

// TaskSections are the sections of ref's queue the drill-down lists, in the order it shows them:
// a delay queue's due, later and in-flight tasks, a list queue's waiting and in-flight ones (in
// flight only where the queue keeps a companion key), a job library's as its layout keeps them.
// None for a ref no Snapshot made. It reads nothing.
func (w *Watcher) TaskSections(ref QueueRef) []TaskSection {
	if ref.queue == nil {
		return nil
	}
	return ref.queue.Sections()
}

// Tasks reads one page of a section of ref's queue: count tasks from offset, in the section's
// order (see TaskSections), against the server's clock. count is held to 1..store.MaxTaskPage and
// to the sweep's keys per second, and what the page reads is charged to that budget. A refusal
// names its command, key and user; a transient error is returned as it is.
func (w *Watcher) Tasks(ctx context.Context, ref QueueRef, sec TaskSection, offset int64, count int) (TaskPage, error) {
	if ref.queue == nil {
		return TaskPage{}, errNoQueue
	}
	page, err := ref.queue.Tasks(ctx, w.rdb, sec, offset, w.pageCount(count), w.inspectNow())
	key := ref.Where()
	if page.Key != "" {
		key = page.Key
	}
	// The entries read and the section's size; a job library's entry that names a job kept in a
	// key of its own is read there too.
	cost := len(page.Tasks) + 1
	for _, task := range page.Tasks {
		if task.ID != "" {
			cost++
		}
	}
	w.inspectSpend(cost)
	return page, w.inspectRefusal(err, key)
}

// pageCount holds a page's count to 1..store.MaxTaskPage and to the sweep's keys per second.
func (w *Watcher) pageCount(count int) int {
	rate := w.inspectRate()
	most := store.MaxTaskPage
	if rate > 0 {
		most = min(most, rate)
	}
	return min(max(count, 1), most)
}
