package scanner

import (
	"context"
	"fmt"

	"hourglass/store"
)

// TaskSections are the sections of ref's queue the drill-down lists, in the order it shows them:
// a delay queue's due, later and in-flight tasks, a list queue's waiting and in-flight ones (in
// flight only where the queue keeps a companion key), a job library's as its layout keeps them.
// None for a queue no entry covers. It reads nothing.
func (w *Watcher) TaskSections(ref QueueRef) []TaskSection {
	t, err := w.resolveQueue(ref)
	if err != nil {
		return nil
	}
	var secs []TaskSection
	switch ref.Kind {
	case QueueDelay:
		secs = []TaskSection{SectionDue, SectionLater}
	case QueueList:
		secs = []TaskSection{SectionWaiting}
	case QueueJob:
		return t.source.TaskSections(ref.Queue)
	}
	if t.companion != "" {
		secs = append(secs, SectionInFlight)
	}
	return secs
}

// Tasks reads one page of a section of ref's queue: count tasks from offset, in the section's
// order (see TaskSections), against the server's clock. count is held to 1..store.MaxTaskPage and
// to the sweep's keys per second, and what the page reads is charged to that budget. A refusal
// names its command, key and user; a transient error is returned as it is.
func (w *Watcher) Tasks(ctx context.Context, ref QueueRef, sec TaskSection, offset int64, count int) (TaskPage, error) {
	t, err := w.resolveQueue(ref)
	if err != nil {
		return TaskPage{}, err
	}
	count = w.pageCount(count)
	now := w.inspectNow()
	var page TaskPage
	key := ref.Key
	switch ref.Kind {
	case QueueDelay:
		page, err = store.DelayQueueTasks(ctx, w.rdb, ref.Key, t.companion, t.unit, sec, offset, count, now)
	case QueueList:
		page, err = store.ListQueueTasks(ctx, w.rdb, ref.Key, t.companion, sec, offset, count, now)
	case QueueJob:
		key = ref.Queue
		page, err = t.source.Tasks(ctx, w.rdb, ref.Queue, sec, offset, count, now)
	default:
		return page, fmt.Errorf("scanner: no queue kind %q", ref.Kind)
	}
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
