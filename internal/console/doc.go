// Package console runs the terminal console: it builds the scanner's Watcher as the tui's data
// source, starts the Bubble Tea program with the views of package tui, and gives the views their
// writes (inject, test traffic, repair) through traffic and scanner, only when the target is
// writable. When standard output is no terminal it prints a line of live totals instead
// (PrintTotals). The views themselves never touch Redis; this package is where their Redis work
// is wired. It may import config, format, target, traffic, scanner, store, theme and tui.
package console
