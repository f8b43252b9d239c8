package inspect

import (
	"context"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TaskSections are the sections of ref's queue the drill-down lists, in the order it shows them:
// a delay queue's due, later and in-flight tasks, a list queue's waiting and in-flight ones (in
// flight only where the queue keeps a companion key), a job library's as its layout keeps them.
// None for a ref no Snapshot made. It reads nothing.
func (in *Inspector) TaskSections(ref scanner.QueueRef) []scanner.TaskSection {
	if ref.Open() == nil {
		return nil
	}
	return ref.Open().Sections()
}

// Tasks reads one page of a section of ref's queue: count tasks from offset, in the section's
// order (see TaskSections), against the server's clock. count is held to 1..jobs.MaxTaskPage and
// to the sweep's keys per second, and what the page reads is charged to that budget. A refusal
// names its command, key and user; a transient error is returned as it is.
func (in *Inspector) Tasks(ctx context.Context, ref scanner.QueueRef, sec scanner.TaskSection, offset int64, count int) (scanner.TaskPage, error) {
	if ref.Open() == nil {
		return scanner.TaskPage{}, errNoQueue
	}
	page, err := ref.Open().Tasks(ctx, in.rdb, sec, offset, in.pageCount(count), in.w.Now())
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
