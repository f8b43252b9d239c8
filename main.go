// Command hourglass watches and exercises Redis counting structures: windowed hour/day counters
// (and, as they arrive, queues, limiters, uniques and locks). With no Redis address it runs on
// an embedded in-process Redis with demo traffic.
//
//	hourglass [flags]           run on the configured Redis (the embedded one by default)
//	hourglass inject [flags]    write counter test traffic through the batch writer
//	hourglass snapshot [flags]  sweep once and report every family's windows and TTL health
//	hourglass repair [flags]    give keys without a TTL their window-aligned expiry
//	hourglass serve [flags]     export the Snapshot as Prometheus metrics
//	hourglass bench [flags]     measure the writers and the sweep
//
// Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// Exit codes, as DESIGN.md promises them.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// usageError is a mistake in the command line or the config: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errInterrupted is a command stopped by ctrl+c before it had done anything.
var errInterrupted = errors.New("interrupted")

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
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// tuneGC collects garbage less often than Go's default unless GOGC says otherwise. hourglass's
// live heap is small and bounded (a sweep holds a few pages, never the keyspace), so with the
// default a collection runs every few MB allocated, and a sweep allocates that in milliseconds:
// it cost a sixth of the sweep's CPU in BenchmarkSweep. Four times the live heap is still a few
// tens of MB.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// run dispatches a command line and turns its error into one line on stderr and an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	var err error
	switch name {
	case "":
		err = cmdWatch(ctx, rest, stdout, stderr)
	case "inject":
		err = cmdInject(ctx, rest, stdout, stderr)
	case "snapshot":
		err = cmdSnapshot(ctx, rest, stdout, stderr)
	case "repair":
		err = cmdRepair(ctx, rest, stdout, stderr)
	case "serve":
		err = cmdServe(ctx, rest, stdout, stderr)
	case "bench":
		err = cmdBench(ctx, rest, stdout, stderr)
	case "help":
		if len(rest) > 0 { // help COMMAND is COMMAND --help
			return run(ctx, []string{rest[0], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	default:
		err = usagef("unknown command %q (run hourglass --help)", name)
	}
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)), errors.As(err, new(*ConfigError)):
		fmt.Fprintln(stderr, "hourglass: "+oneLine(err))
		return exitUsage
	default:
		fmt.Fprintln(stderr, "hourglass: "+oneLine(err))
		return exitRuntime
	}
}

// oneLine keeps an error to one line however many were joined into it.
func oneLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s (and %d more)", lines[0], len(lines)-1)
}

const mainUsage = `hourglass: watch and exercise Redis counting structures (hour/day counters, and more to come).

Usage:
  hourglass [flags]            run against the configured Redis; with no address, an embedded
                               Redis with demo counter traffic and a line of live totals a second
  hourglass inject [flags]     write counter test traffic through the batch writer
  hourglass snapshot [flags]   sweep the keyspace once and report every counter family: windows,
                               totals, top dims, series, TTL health, reconciliation (--json)
  hourglass repair [flags]     give family keys that have no TTL their window-aligned expiry
                               (--dry-run lists what it would do)
  hourglass serve [flags]      keep sweeping and export the Snapshot as Prometheus metrics
  hourglass bench [flags]      measure the writers and the sweep next to redis-benchmark and SCAN
  hourglass help               this text

Every command takes --help. Flags override config.toml; config.toml overrides built-in defaults.
Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.
`

// commonFlags are the flags every command that talks to Redis takes.
type commonFlags struct {
	config      string
	addrs       stringList
	allowWrites bool
	insecure    bool
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config file (default ./config.toml when present, else the built-in defaults)")
	fs.Var(&c.addrs, "addr", "Redis `address`: host:port, or a redis:// or rediss:// URL; repeat for a\ncluster's seeds (overrides [redis] addrs)")
	fs.BoolVar(&c.allowWrites, "allow-writes", false, "allow writes to a real Redis (the embedded one always allows them)")
	fs.BoolVar(&c.insecure, "insecure", false, "TLS without verifying the server's certificate (a test server only; never from the config file)")
}

// load reads the config the flags name and applies the flags over it.
func (c *commonFlags) load() (*Config, error) {
	if len(c.addrs) > 0 {
		if _, err := store.ParseTarget(c.addrs, "", ""); err != nil {
			return nil, usagef("--addr: %v", err)
		}
	}
	path := c.config
	if path == "" {
		if _, err := os.Stat("config.toml"); err == nil {
			path = "config.toml"
		}
	}
	var cfg *Config
	var err error
	if path != "" {
		cfg, err = loadConfig(path, c.addrs)
	} else {
		cfg, err = parseConfig("config.toml", shippedConfig, c.addrs)
		if cfg != nil {
			cfg.Path = ""
		}
	}
	if err != nil {
		return nil, usageError{err}
	}
	if c.allowWrites {
		cfg.Redis.AllowWrites = true
	}
	cfg.Redis.TLS.Insecure = c.insecure
	return cfg, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// newFlagSet returns a flag set whose --help prints usage to stdout and whose errors are usage
// errors.
func newFlagSet(name, usage string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args, turning mistakes into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err // the flag package has printed the usage
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
