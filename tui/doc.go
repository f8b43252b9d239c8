// Package tui is the console: one root Bubble Tea model that dispatches to one child model per
// view (overview, counters, TTL health, queues, limiters, uniques, unclaimed), with drill-down
// levels below the views' rows that read one structure's keys on demand. Each view and level
// keeps its rows in a list set once per poll or read, and declares its keys; the footer and ?
// are composed from them. Redis work runs only in tea.Cmds against a Source that returns a
// Snapshot, an Inspector for the drill-down's reads, and Actions, KeyActions and a Session for
// writes; Update and View never do I/O, and every style comes from the theme package. It imports
// scanner (the Snapshot and the drill-down's types), theme, internal/format and
// internal/discover, never store or a Redis client.
package tui
