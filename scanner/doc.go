// Package scanner sweeps a Redis (every master of a cluster) with SCAN, never KEYS, classifies
// each key to the family whose pattern it matches, and aggregates what it finds into the
// Snapshot that every front end renders: counter totals per window, TTL health, reconciliation.
// The sweep does all the reading, its last step (Sweep.Finish) included; making the Snapshot from
// its pages and reads (Aggregator) does none.
//
// A sweep is budgeted in keys per second so that watching a production Redis never hurts it, and
// its memory is bounded by families, windows and top-K dims, never by the number of keys. It
// imports only store, whose key layouts and parsers it reads keys with.
package scanner
