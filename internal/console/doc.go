// Package console runs the terminal console. It builds a Watcher (internal/watch) as the tui's data
// source and starts the Bubble Tea program with the views of package tui. Only when the target is
// writable does it give the views their writes (inject, test traffic, repair), through traffic and
// scanner. Its session adds the entries discover proposes for unclaimed keys to the running
// Watcher, parsed by config as the config in use would read them. It also writes the proposal to a
// new file. Neither writes to Redis, so a read-only console has them too. With no config file its
// entries are inferred from the keys (internal/infer) and the file written holds them. When
// standard output is no terminal it prints a line of live totals instead (PrintTotals). The views
// themselves never touch Redis; this package is where their Redis work is wired. Of hourglass's
// packages it imports internal/config, internal/discover, internal/format, internal/infer,
// internal/inspect, internal/target, internal/traffic, internal/watch, scanner, snapshot, store,
// theme and tui.
package console
