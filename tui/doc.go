// Package tui is the console: one root Bubble Tea model that dispatches to one child model per
// view (overview, counters, TTL health, queues, limiters, uniques). Redis work runs only in
// tea.Cmds against a Source that returns a Snapshot; Update and View never do I/O.
package tui

// The console is built on the Bubble Tea v2 family. These imports hold the versions in go.mod
// that build with the module proxy this project uses (bubbletea v2.1.x needs a dependency
// version it refuses) until the views use the packages themselves.
import (
	_ "charm.land/bubbles/v2/key"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
)
