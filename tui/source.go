package tui

import (
	"context"
	"time"

	"hourglass/scanner"
)

// Source is the console's only way to the data: polled in a tea.Cmd, never from Update or View.
// scanner.Watcher is the real one; tests give a fake.
type Source interface {
	// Poll sweeps on for slice and reads the status; focus is the family on screen ("" none),
	// whose current windows the source reads again live.
	Poll(ctx context.Context, slice time.Duration, focus string) (scanner.Status, error)
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
	Repair(ctx context.Context, dryRun bool) (scanner.RepairCounts, error)
}

// Options describe the console's target and how to run.
type Options struct {
	Target  string // the address(es), passwords hidden, after the name when there is one
	Name    string // the target's [redis] name: what a destructive action asks to have typed
	Mode    string // embedded, standalone or cluster
	Demo    bool   // an embedded Redis with demo traffic
	Source  Source
	Actions Actions
	// ReadOnlyWhy says why writes are off, shown where a write key is pressed.
	ReadOnlyWhy string
	Refresh     time.Duration // poll interval (at least scanner.MinRefresh)
	Families    []FamilyInfo
	Now         func() time.Time // the server clock (time.Now when nil)
	Location    *time.Location
	Context     context.Context // ends the console's Redis work (context.Background when nil)
}

// FamilyInfo is what the console knows of a family from the config.
type FamilyInfo struct {
	Name, Pattern string
}
