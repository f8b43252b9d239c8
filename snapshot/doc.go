// Package snapshot is the data every front end reads. It holds the Snapshot of a sweep and every
// type in it: counter families, queues, limiters, uniques, locks, job libraries, Bloom filters,
// health, estimates. It also holds the Status a Watcher's Poll returns, and the types the
// drill-down answers in. It is data and small pure helpers only: no Redis client, no I/O. The
// scanner fills it; the console, the text report, the JSON and metrics read it. Its JSON field
// names are stable. Of hourglass's packages it imports store, store/jobs, internal/discover and
// internal/estimate. It takes the task types the drill-down shares from store/jobs, the error
// classes from store, the unclaimed keys' groups from discover, and the estimates shown from
// estimate.
package snapshot
