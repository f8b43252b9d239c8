// Package tui is the console: one root Bubble Tea model that dispatches to one child model per
// view (overview, counters, TTL health, queues, limiters, uniques, unclaimed), each with its
// drill-down levels. Redis work runs only in tea.Cmds against a Source that returns a Snapshot;
// Update and View never do I/O, and every style comes from the theme package. Of hourglass's
// packages it imports snapshot, theme, internal/cells, internal/format and internal/discover
// (snapshot for the Snapshot, cells for the cells the text report shows too, discover for the
// unclaimed groups' proposals); never the scanner, store or a Redis client: its
// writes go through the Actions it is given.
package tui
