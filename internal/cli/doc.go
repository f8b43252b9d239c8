// Package cli is hourglass's command line: one file per command, each parsing its flags and
// handing over to the package that does the work (console, traffic, scanner with report,
// metrics, bench), with the flag and usage helpers they share and the mapping of errors to exit
// codes (0 ok, 1 runtime, 2 usage or config). It is the one package that may import every other:
// of hourglass's packages it imports any.
package cli
