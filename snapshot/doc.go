// Package snapshot is the data every front end reads: the Snapshot of a sweep and every type in
// it (counter families, queues, limiters, uniques, locks, job libraries, Bloom filters, health,
// estimates), the Status a Watcher's Poll returns, and the types the drill-down answers in. It is
// data and small pure helpers only: no Redis client, no I/O. The scanner fills it; the console,
// the text report, the JSON and metrics read it. Its JSON field names are stable. Of hourglass's
// packages it imports store, store/jobs, internal/discover and internal/estimate (store/jobs
// for the task types the drill-down shares with it, store for the error classes, discover for the unclaimed keys' groups, estimate for the
// estimates shown).
package snapshot
