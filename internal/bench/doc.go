// Package bench measures hourglass against a Redis, beside references in the same run, in
// wall-clock rates and in Redis' own time (INFO commandstats). Its cases and their floors are
// listed in docs/benchmarks.md. It starts a redis-server of its own unless given one, as the tests
// do (internal/redistest). On a given one it writes and deletes only its own keys (store.BenchKey)
// and changes none of its settings. Of hourglass's packages it imports internal/config,
// internal/format, internal/redistest, internal/report, internal/watch, scanner, snapshot and
// store.
package bench
