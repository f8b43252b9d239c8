// Package report writes what hourglass found as plain text for a terminal or a log. That is the
// snapshot report, repair's lines, and the aligned Table that bench prints with too. The report
// covers families, windows, TTL health, reconciliation, queues, limiters, uniques, locks, and the
// keys no entry claims. It formats with internal/format, as the console does, so both read alike.
// Of hourglass's packages it imports internal/cells, internal/discover, internal/format, snapshot
// and store. It takes the cells the console shows too from cells, the estimates of the unclaimed
// groups from discover, and a family's pattern and retention from store. It does no I/O but writing
// to the io.Writer it is given.
package report
