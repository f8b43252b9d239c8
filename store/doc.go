// Package store is how services count correctly in Redis: windowed hour/day counters written by
// one atomic Lua script with window-aligned expiry, a pre-aggregating batch writer that flushes
// as one pipeline, reads of one window or a series of windows, and the Redis server clock that
// window boundaries follow.
//
// It takes a redis.UniversalClient, so it works the same on a standalone Redis and on Redis
// Cluster. It must not hold per-key state beyond a batch that has not been flushed, never uses
// KEYS, and never loops over single commands where a pipeline serves. The keys hourglass writes
// for itself are spelled once, in keys.go. Of hourglass's packages it imports none: services
// import it alone.
package store
