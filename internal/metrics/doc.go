// Package metrics exports a Snapshot as Prometheus metrics: a collector that answers
// every scrape from the latest status (a scrape never waits on Redis), and the loop that polls
// within the sweep budget and serves /metrics. Of hourglass's packages it imports internal/format
// and snapshot; it reads Redis only through the Watcher it polls (a Poller).
package metrics
