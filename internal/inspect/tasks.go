package inspect

import (
	"context"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TaskSections are the sections of ref's queue the drill-down lists, in the order it shows them:
// a delay queue's due, later and in-flight tasks, a list queue's waiting and in-flight ones (in
// flight only where the queue keeps a companion key), a job library's as its layout keeps them.
// None for a ref no Snapshot made. It reads nothing.
func (in *Inspector) TaskSections(ref snapshot.QueueRef) []snapshot.TaskSection {
	q := in.open(ref)
	if q == nil {
		return nil
	}
	return q.Sections()
}

// Tasks reads one page of a section of ref's queue: count tasks from offset, in the section's
// order (see TaskSections), against the server's clock. count is held to 1..jobs.MaxTaskPage and
// to the sweep's keys per second, and what the page reads is charged to that budget. A refusal
// names its command, key and user; a transient error is returned as it is.
func (in *Inspector) Tasks(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, offset int64, count int) (snapshot.TaskPage, error) {
	q := in.open(ref)
	if q == nil {
		return snapshot.TaskPage{}, errNoQueue
	}
	page, err := q.Tasks(ctx, in.rdb, sec, offset, in.pageCount(count), in.w.Now())
	key := where(ref)
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
	in.w.Charge(cost)
	return page, in.refusal(err, key)
}

// pageCount holds a page's count to 1..jobs.MaxTaskPage and to the sweep's keys per second.
func (in *Inspector) pageCount(count int) int {
	rate := in.w.KeysPerSecond()
	most := jobs.MaxTaskPage
	if rate > 0 {
		most = min(most, rate)
	}
	return min(max(count, 1), most)
}

// open is the store queue ref names, opened through the entry of ref's name among the entries
// watched now; nil when none of them covers it (a ref no Snapshot made, or one of an entry since
// gone). So the drill-down reads and acts only on queues the watched entries cover.
func (in *Inspector) open(ref snapshot.QueueRef) jobs.Queue {
	st := in.w.Watched().Structures
	switch ref.Kind {
	case snapshot.QueueDelay:
		for _, q := range st.DelayQueues {
			if q.Name == ref.Name && q.Covers(ref.Key) {
				return jobs.DelayQueueOf(ref.Key, q.InFlightOf(ref.Key), q.Unit)
			}
		}
	case snapshot.QueueList:
		for _, q := range st.ListQueues {
			if q.Name == ref.Name && q.Covers(ref.Key) {
				return jobs.ListQueueOf(ref.Key, q.ProcessingOf(ref.Key))
			}
		}
	case snapshot.QueueJob:
		for _, j := range st.JobQueues {
			switch {
			case j.Name != ref.Name:
			case ref.Queue == "":
				return j.Source.SharedQueue()
			case j.Covers(ref.Queue):
				return j.Source.Queue(ref.Queue)
			}
		}
	}
	return nil
}

// where is what ref's reads and actions name in their errors: a delay or list queue's key, or a
// job library's queue.
func where(ref snapshot.QueueRef) string {
	if ref.Kind == snapshot.QueueJob {
		return ref.Queue
	}
	return ref.Key
}
