package jobs

import (
	"errors"
	"time"
)

// The console's drill-down into a queue lists its tasks a page at a time, section by section,
// and acts on one task, through a Queue (queue.go). This file holds the types every queue layout
// answers in: hourglass's own delay and list queues (own_tasks.go) and each job library's
// (<library>_tasks.go).

// TaskSection is a part of a queue listed on its own.
type TaskSection string

// The sections. A delay queue has due, later and in_flight; a list queue waiting and in_flight;
// a job library the sections its own states map to (TaskSections says which).
const (
	SectionDue      TaskSection = "due"       // due now, the oldest due first
	SectionLater    TaskSection = "later"     // not yet due, the next due first
	SectionInFlight TaskSection = "in_flight" // claimed or popped and not acknowledged, the oldest deadline first
	SectionWaiting  TaskSection = "waiting"   // a list's tasks, the next to be taken first
	SectionRetry    TaskSection = "retry"     // failed, to run again: the next retry first
	SectionDead     TaskSection = "dead"      // failed for good (dead, failed, archived): the newest first
)

// PayloadCap is the most of a task's body a page holds: a preview, never the whole of a 1 MB
// payload. Task.PayloadBytes says how big the whole is.
const PayloadCap = 4096

// MaxTaskPage is the most tasks one page reads.
const MaxTaskPage = 200

// Task is one task as the console lists it. Member is what the actions act on, so it is the
// entry exactly as it is stored; every text is raw bytes, which the view escapes.
type Task struct {
	// Member is the task's entry in the key the page was read from: a sorted set's member or a
	// list's element (for our in-flight set, "<claim id>|<task>").
	Member string
	// ID is the library's job id when entries name a job kept elsewhere (BullMQ, RQ, asynq);
	// "" when the entry is the task itself.
	ID string
	// Payload is the task's body, cut to PayloadCap bytes; PayloadBytes its whole size (-1 when
	// it could not be read: Note says why).
	Payload      string
	PayloadBytes int64
	Due          time.Time // when it falls due; zero when the section keeps no due time
	Deadline     time.Time // an in-flight task's deadline; zero when none is kept
	Enqueued     time.Time // when it was queued, when the layout keeps it; zero otherwise
	Note         string    // what could not be read of it (its job hash gone, a score that is no time)
}

// TaskPage is one page of a queue's section.
type TaskPage struct {
	Section TaskSection
	Key     string // the key the page was read from
	Offset  int64  // the first task's place in the section
	Total   int64  // the section's size when read; -1 when unknown
	Tasks   []Task
	ReadAt  time.Time // the server's clock when read
}

// TaskAction is what the console may do to one task.
type TaskAction string

// The per-task actions.
const (
	ActionRunNow TaskAction = "run_now" // make a task due now (a later, retry or dead task)
	ActionReturn TaskAction = "return"  // give an in-flight task back to the queue, due now
	ActionDelete TaskAction = "delete"  // remove one task
	// ActionArchive moves a task to the library's dead tasks (asynq's archived), as its own
	// archive or kill does; bulk only.
	ActionArchive TaskAction = "archive"
)

// ErrNotSupported says a layout does not allow an action on a section; the error's text says
// why (wrapped with fmt.Errorf("...: %w", ErrNotSupported)).
var ErrNotSupported = errors.New("not supported")

// ErrTaskGone says the task was no longer where the page showed it: taken, acknowledged, moved
// or deleted since. Nothing was written.
var ErrTaskGone = errors.New("the task is no longer there")
