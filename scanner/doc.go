// Package scanner is the sweep engine: it sweeps a Redis (every master of a cluster) with SCAN,
// never KEYS, classifies each key to the family whose pattern it matches, and aggregates what it
// finds into the Snapshot that every front end renders: counter totals per window, TTL health,
// reconciliation. The sweep does all the reading, its last step (Sweep.Finish) included; making
// the Snapshot from its pages and reads (Aggregator) does none.
//
// A sweep is budgeted in keys per second so that watching a production Redis never hurts it, and
// its memory is bounded by families, windows and top-K dims, never by the number of keys. While a
// sweep is under way its Snapshot scales what it has seen to the whole keyspace, as estimates with
// their 95% intervals. The Watcher that repeats sweeps for the front ends and reads live figures
// between them is internal/watch's: it steps a Sweep and shares its Pacer, and this package never
// imports it. Of hourglass's packages it imports store, store/jobs, store/limits, snapshot,
// internal/discover, internal/estimate and internal/format: it fills snapshot's types, reads keys
// with store's layouts and parsers and other programs' with store/jobs' and store/limits',
// escapes what it reads with format, hands discover the names of the keys no entry claims and the
// samples it reads of them, and has estimate scale a sweep under way and put intervals on what it
// projects from a sample.
package scanner
