// Package bench measures hourglass against a Redis, side by side with references in the same
// run, in wall-clock rates and in Redis' own time (INFO commandstats, for the commands each case
// sent): the counter batch writer next to redis-benchmark and go-redis alone, on fresh keys and
// on keys already there, the limiter and the delay queue, a sweep next to a raw SCAN, the keys no
// entry claims (discover's grouping and sampling, its heap and its budget) next to a sweep of the
// same keys configured, and the load a console and serve put on the server. It starts a
// redis-server of its own unless given one, and on a given one writes and deletes only its own
// keys (store.BenchKey) and changes none of its settings. Of hourglass's packages it imports
// internal/config, internal/format, internal/report, scanner, snapshot and store.
package bench
