// Package tui is the console. One root Bubble Tea model dispatches to one child model per view
// (overview, counters, TTL health, queues, limiters, uniques, unclaimed), each with its drill-down
// levels. Redis work runs only in tea.Cmds against a Source that returns a Snapshot. Update and
// View never do I/O, and every style comes from the theme package. Of hourglass's packages it
// imports snapshot, theme, internal/cells, internal/format and internal/discover. It takes the
// Snapshot from snapshot, the cells the text report shows too from cells, and the unclaimed groups'
// proposals from discover. It never imports the scanner, store or a Redis client: its writes go
// through the Actions it is given.
package tui
