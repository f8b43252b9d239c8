// Package bench measures hourglass against a Redis, side by side with references in the same
// run: the counter batch writer next to redis-benchmark and go-redis alone, the limiter and the
// delay queue, a sweep next to a raw SCAN, the keys no entry claims (discover's grouping and
// sampling, its heap and its budget) next to a sweep of the same keys configured, and the
// console's own load on the server. It starts a redis-server of its own unless given one, and on
// a given one writes and deletes only its own keys (store.BenchKey). It may import config,
// format, report, scanner and store.
package bench
