package snapshot

import (
	"time"

	"github.com/hourglass-dev/hourglass/store/jobs"
)

// The console's drill-down reads one structure's keys on demand, in a tea.Cmd, never in a sweep. It
// reads a dims tuple's windows, a page of a queue's tasks, a limiter key or a lock.
// internal/inspect answers, reading within the Watcher's budget (watched.go). These are the types
// it answers in. They sit beside the Snapshot so the tui renders them without importing the package
// that reads.

// The task types are the store's: the tui reaches them through the snapshot.
type (
	Task        = jobs.Task
	TaskPage    = jobs.TaskPage
	TaskSection = jobs.TaskSection
	TaskAction  = jobs.TaskAction

	// A bulk action's dry run and what it did (store/jobs/bulk.go).
	BulkPlan   = jobs.BulkPlan
	BulkResult = jobs.BulkResult
)

// The sections and actions, as the store names them.
const (
	SectionDue      = jobs.SectionDue
	SectionLater    = jobs.SectionLater
	SectionInFlight = jobs.SectionInFlight
	SectionWaiting  = jobs.SectionWaiting
	SectionRetry    = jobs.SectionRetry
	SectionDead     = jobs.SectionDead

	ActionRunNow  = jobs.ActionRunNow
	ActionReturn  = jobs.ActionReturn
	ActionDelete  = jobs.ActionDelete
	ActionArchive = jobs.ActionArchive
)

// Queue kinds of a QueueRef.
const (
	QueueDelay = "delay"
	QueueList  = "list"
	QueueJob   = "job" // a job library's queue
)

// QueueRef is one queue of the Snapshot as the drill-down opens it: each queue row carries its
// own (DelayQueue.Ref, ListQueue.Ref, JobQueue.Ref), and the console hands it back to read a
// page or act on a task. It is data only: the drill-down (internal/inspect) finds the entry it
// names among the entries watched now and opens the queue through it, so it reads and acts only
// on queues those entries cover.
type QueueRef struct {
	Kind string // QueueDelay, QueueList or QueueJob
	Name string // the entry's name ([[delay_queue]], [[list_queue]] or [[job_queue]])
	Key  string // a delay or list queue's key (raw)
	// Queue is a job library's queue (raw); "" for the library's shared sets (Sidekiq's
	// scheduled, retry and dead sets; Celery's unacked tasks).
	Queue string
}

// DimDetail is one dims tuple of a counter family, window by window, read on demand.
type DimDetail struct {
	Family string
	Dims   map[string]string // escaped, as the Snapshot's
	// Windows are every retained window of the tuple, hours then days, each oldest first and
	// ending at the current window.
	Windows []WindowValue
	ReadAt  time.Time // the server's clock
	// Command is the redis-cli command line that reads the current hour's key (or the first
	// window's), quoted for a POSIX shell, ready to paste.
	Command string
}

// WindowValue is one window's key of a dims tuple.
type WindowValue struct {
	Granularity string    // hour or day
	Window      string    // as the family's pattern writes it
	Start       time.Time // the window's start, in the family's time zone
	Key         string    // raw
	// Value is nil when it could not be read: Missing (no key: the window had no event, or
	// its key expired), or Note says why (another type, not an integer).
	Value   *int64
	Missing bool
	// TTLMS is the key's PTTL: -1 none, -2 missing. ExpiresAt is when it expires (server
	// clock; zero for none); WantExpiresAt the window-aligned expiry a writer gives it.
	TTLMS         int64
	ExpiresAt     time.Time
	WantExpiresAt time.Time
	// MemoryBytes is MEMORY USAGE; nil when not read (missing, or the command refused: Note).
	MemoryBytes *int64
	Note        string
}

// LimiterKeyDetail is one limiter key, read on demand.
type LimiterKeyDetail struct {
	Limiter string
	Key     string // raw
	Hits    int64  // in the current window
	Limit   int64
	// Remaining and Refused are what a library's layout answers for the key (nil for
	// hourglass's own; Refused nil too for a key that keeps no count of what it refuses).
	Remaining *int64
	Refused   *int64
	TTLMS     int64
	// Buckets are the window's hits over time, oldest first, each BucketMS long: read from a
	// sliding log's entries. Nil where the layout keeps one count for the window (BucketsNote
	// says so).
	Buckets     []int64
	BucketMS    int64
	BucketsNote string
	ReadAt      time.Time
	Command     string // redis-cli command that reads the key
	// AtLimit is set for a library's key that would refuse the next hit, and AllowedInMS is
	// then the time until the library allows one again (-1 unknown or never).
	AtLimit     bool
	AllowedInMS int64
}

// LockDetail is one lock key, read on demand.
type LockDetail struct {
	Lock   string
	Key    string // raw
	Holder string // the value, raw; "" when Gone
	Gone   bool   // released or expired since the sweep
	// PTTLMS is -1 when the lock has no TTL: held until someone deletes it.
	PTTLMS int64
	// HeldMS is how long it has been held, from the token when it says when it was taken
	// (hourglass's own "<unix ms>-<hex>"); -1 when it does not.
	HeldMS  int64
	ReadAt  time.Time
	Command string // redis-cli command that reads the key
}
