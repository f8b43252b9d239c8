// Package tui is the console: one root Bubble Tea model that dispatches to one child model per
// view (overview, counters, TTL health, queues, limiters, uniques). Redis work runs only in
// tea.Cmds against a Source that returns a Snapshot; Update and View never do I/O, and every
// style comes from the theme package. It imports scanner (the Snapshot), theme and
// internal/format, never store or a Redis client: its writes go through the Actions it is given.
package tui
