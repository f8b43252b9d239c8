// Package discover infers, from a keyspace nobody has described to hourglass, what its keys are:
// it splits each key name into segments, tells time windows, ids and literals apart, groups the
// names into patterns, and from a few keys of each group read by the sweep (type, TTL, value or
// scores) decides the kind of each group (counter, delay queue, limiter, unique, bitmap, lock,
// list queue, a job library's or a limiter library's keys) with its evidence and how confident it
// is; a job library whose users choose its prefix (Sidekiq's namespace, BullMQ's prefix) is found
// under any prefix by the keys it names alike in every app, its marks, which its row in
// store/jobs gives: discover names no library. It renders what it found as
// config.toml entries.
//
// What it holds is bounded by the number of groups, never by the number of keys. It does no Redis
// I/O: the scanner feeds it the names a sweep leaves unclaimed and the samples it reads. Of
// hourglass's packages it imports store, store/jobs, store/limits, internal/format and
// internal/estimate: store's window formats and score units and the libraries' layouts and
// marks (store/jobs, store/limits) are what it reads keys with, internal/format writes
// numbers and bytes as every front end writes them, and internal/estimate scales each group's
// keys seen to the whole keyspace when the sweep stopped before its end.
package discover
