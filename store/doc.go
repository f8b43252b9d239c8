// Package store is how services count correctly in Redis. It writes windowed hour/day counters with
// one atomic Lua script and window-aligned expiry. A pre-aggregating batch writer flushes as one
// pipeline. It reads one window or a series of windows, and window boundaries follow the Redis
// server clock.
//
// It takes a redis.UniversalClient, so it works the same on a standalone Redis and on Redis
// Cluster. It holds no per-key state beyond a batch that has not been flushed. It never uses KEYS,
// and never loops over single commands where a pipeline serves. The keys hourglass writes for
// itself are spelled once, in keys.go. Of hourglass's packages it imports none: services import it
// alone.
package store
