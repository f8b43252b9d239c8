package tui

import (
	"context"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// Source is the console's only way to the data: polled in a tea.Cmd, never from Update or View.
// The Watcher (internal/watch) is the real one; tests give a fake.
type Source interface {
	// Poll sweeps on for slice and reads the status; focus is the family on screen ("" none),
	// whose current windows the source reads again live.
	Poll(ctx context.Context, slice time.Duration, focus string) (snapshot.Status, error)
}

// Actions are the console's writes. A read-only console has none (Options.Actions nil).
type Actions interface {
	// Inject writes a burst of test events into a counter family and says what it wrote.
	Inject(ctx context.Context, family string, events int) (string, error)
	// SetTraffic starts or stops steady test traffic into a family and says what now runs; an
	// error means it did not start. It is called in Update, so it must not block: the traffic
	// runs on goroutines of its own.
	SetTraffic(family string, on bool) (string, error)
	// Repair gives family keys without a TTL their window-aligned expiry (DryRun: only counts).
	Repair(ctx context.Context, dryRun bool) (snapshot.RepairCounts, error)
	// TrafficNews waits until the steady test traffic has news, or ctx ends. News is a write that
	// failed and is being retried, writes going through again, or a traffic that ended by itself.
	// It returns what happened since the last call (nil once ctx has ended). It runs in a tea.Cmd,
	// which the console issues again after each answer.
	TrafficNews(ctx context.Context) []TrafficNews
}

// TrafficNews is what became of a family's steady test traffic.
type TrafficNews struct {
	Family string
	// Err is the last write that failed: retried while Ended is false. nil: writes go through
	// again after failing since Since.
	Err   error
	Since time.Time // when the writes began to fail (the server's clock)
	Ended bool      // the traffic stopped by itself; Err says why
}

// Inspector reads what the drill-down views show, one structure's keys at a time, on demand:
// called in tea.Cmds, never in Update. internal/inspect's Inspector is the real one.
type Inspector interface {
	// Dim reads every retained window of the dims tuple whose current key is key.
	Dim(ctx context.Context, family, key string) (snapshot.DimDetail, error)
	// TaskSections are the sections the queue keeps, in the order shown (no Redis I/O). ref is
	// the one the queue's row of the Snapshot carries.
	TaskSections(ref snapshot.QueueRef) []snapshot.TaskSection
	// Tasks reads one page of a queue's section.
	Tasks(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, offset int64, count int) (snapshot.TaskPage, error)
	LimiterKey(ctx context.Context, limiter, key string) (snapshot.LimiterKeyDetail, error)
	LockHolder(ctx context.Context, lock, key string) (snapshot.LockDetail, error)
	// RedisCLI is the redis-cli command line that runs args against the target, quoted for a
	// shell (no Redis I/O).
	RedisCLI(args ...string) string
}

// KeyActions are the drill-down's writes, each on one task or key. A read-only console has none
// (Options.KeyActions nil). Each says in one line what it did.
type KeyActions interface {
	ActOnTask(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, t snapshot.Task, a snapshot.TaskAction) (string, error)
	// RepairKey gives one counter key without a TTL its window-aligned expiry.
	RepairKey(ctx context.Context, family, key string) (string, error)
	// ReleaseLock deletes a lock that has no TTL, if holder still holds it.
	ReleaseLock(ctx context.Context, lock, key, holder string) (string, error)
}

// Session changes what the running console counts, and writes what it found to a file of the
// operator's. Neither writes to Redis, so a read-only console has one too. Its methods run in
// tea.Cmds, never in Update.
type Session interface {
	// Claim adds entry to the session: the sweep counts the keys it claims under it from the
	// next sweep. It says what now counts them; an error says why it was refused (a name the
	// config already uses, an entry the config refuses), and nothing was added.
	Claim(ctx context.Context, entry discover.Entry) (string, error)
	// WriteProposal writes to a new file at path the config in use followed by the entries
	// added to the session and those proposed for p's groups, as `hourglass discover --merge`
	// prints them, and says what it wrote. It never overwrites a file: an existing path is an
	// error.
	WriteProposal(ctx context.Context, path string, p Proposal) (string, error)
}

// Proposal is what the Unclaimed view shows, for WriteProposal: the groups and the sweep they
// come from.
type Proposal struct {
	Result   discover.Result
	TakenAt  time.Time     // when that sweep completed, or when the sweep under way started
	Elapsed  time.Duration // how long it ran
	KeysSeen int64
	Complete bool // false while the first sweep is under way: the groups are what it found so far
}

// Options describe the console's target and how to run.
type Options struct {
	Target  string // the address(es), passwords hidden, after the name when there is one
	Name    string // the target's [redis] name: what a destructive action asks to have typed
	Mode    string // embedded, standalone or cluster
	Demo    bool   // an embedded Redis with demo traffic
	Source  Source
	Actions Actions
	Session Session // nil: the Unclaimed view's a and w are off
	// Inspector feeds the drill-down views (nil: enter goes no deeper than the Snapshot);
	// KeyActions are their writes (nil when writes are off).
	Inspector  Inspector
	KeyActions KeyActions
	// Bulk are the drill-down's bulk writes on a queue's section, and their undo (nil when
	// writes are off).
	Bulk BulkActions
	// ReadOnlyWhy says why writes are off, shown where a write key is pressed.
	ReadOnlyWhy string
	Refresh     time.Duration // poll interval (at least snapshot.MinRefresh)
	// WaitWarning is how long a queue's oldest ready task may wait before the Overview warns (a
	// minute when 0).
	WaitWarning time.Duration
	Families    []FamilyInfo
	Now         func() time.Time // the server clock (time.Now when nil)
	Location    *time.Location
	Context     context.Context // ends the console's Redis work (context.Background when nil)
}

// FamilyInfo is what the console knows of a family from the config.
type FamilyInfo struct {
	Name, Pattern string
}
