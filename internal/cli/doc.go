// Package cli is hourglass's command line, one file per command. Each parses its flags and hands
// over to the package that does the work (console, traffic, scanner with report, metrics, bench).
// It also holds the flag and usage helpers they share, and maps errors to exit codes (0 ok, 1
// runtime, 2 usage or config). It is the one package that may import every other: of hourglass's
// packages it imports any.
package cli
