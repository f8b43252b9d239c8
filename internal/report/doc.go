// Package report writes what hourglass found as plain text for a terminal or a log: the
// snapshot report (families, windows, TTL health, reconciliation, queues, limiters, uniques,
// locks, the keys no entry claims), repair's lines, and the aligned Table that bench prints with
// too. It formats with internal/format, as the console does, so both read alike. Of hourglass's
// packages it imports internal/cells, internal/discover, internal/format, snapshot and store (cells
// for the cells the console shows too, discover for the estimates of the unclaimed groups, store
// for a family's pattern and retention). It does no I/O but writing to the io.Writer it is given.
package report
