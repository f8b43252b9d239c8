// Package traffic writes test and demo traffic through the store. It holds the Zipf-like dims
// generator, inject's batch writing with its retries, and the [[profile]] mixes. It also holds the
// embedded Redis's demo: 48 hours of history, live counter traffic, queues, limiters, uniques and
// locks in motion, and the leaks TTL health should find. On a real Redis it keeps to test keys
// (store.TestQueueKey, store.TestValue), never a real application's. Of hourglass's packages it
// imports internal/config, scanner, store and store/limits. It takes the structure specs from
// scanner.
package traffic
