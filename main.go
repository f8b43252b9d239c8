// Command hourglass watches and exercises the counting structures in a Redis or Redis Cluster:
// windowed hour/day counters and their TTL health, delay and list queues, limiters, uniques and
// locks. With no Redis address it runs on an embedded Redis with demo traffic. `hourglass help`
// lists the commands; internal/cli runs them.
//
// Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/cli"
)

func main() {
	// go-redis logs reconnect attempts to stderr on its own; hourglass reports connection trouble
	// itself, once, in words an operator can act on.
	redis.SetLogger(quietLogger{})
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first ctrl+c asks for a clean stop (inject still flushes what it generated); from
		// then on the signal's default action applies, so a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	code := cli.Run(ctx, shippedConfig, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// tuneGC collects garbage less often than Go's default, unless GOGC says otherwise. hourglass's
// live heap is small and bounded: a sweep holds a few pages, never the keyspace. With the default,
// a collection runs every few MB allocated, and a sweep allocates that in milliseconds. It cost a
// sixth of the sweep's CPU in BenchmarkSweep. Four times the live heap is still a few tens of MB.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
