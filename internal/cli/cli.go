package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/format"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// command is one subcommand: its name, its line in `hourglass help`, and what runs it.
type command struct {
	name, summary string
	run           func(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error
}

// commands are hourglass's subcommands in the order help lists them; "" is the console.
func commands() []command {
	return []command{
		{"", "the console; with no address, an embedded Redis with demo traffic", cmdWatch},
		{"inject", "write test traffic: counter events, or a [[profile]] of every kind", cmdInject},
		{"snapshot", "sweep once; report every family and structure, as text or --json", cmdSnapshot},
		{"discover", "sweep once; propose config entries for the keys no entry claims", cmdDiscover},
		{"repair", "give family keys without a TTL their window-aligned expiry", cmdRepair},
		{"undo", "undo the last bulk action the console did on a Redis, from its journal", cmdUndo},
		{"serve", "keep sweeping; export the Snapshot as Prometheus metrics", cmdServe},
		{"search", "search a job queue's tasks for a payload substring or JSON field", cmdSearch},
		{"bench", "measure the writers and the sweep beside redis-benchmark and SCAN", cmdBench},
		{"version", "the version, the source revision and the Go release it was built from", cmdVersion},
		{"help", "this list; help COMMAND shows that command's flags", nil},
	}
}

// Run runs a command line and turns its error into one line on stderr and an exit code. shipped is
// the config.toml the binary was built with (the root package embeds it). A command runs with it
// when no config is given.
func Run(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) int {
	name, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		name, rest = "version", nil
	}
	if name == "help" {
		if len(rest) > 0 { // help COMMAND is COMMAND --help
			return Run(ctx, shipped, []string{rest[0], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, mainUsage())
		return exitOK
	}
	err := config.Usagef("unknown command %q (run hourglass --help)", name)
	for _, c := range commands() {
		if c.name == name && c.run != nil {
			err = c.run(ctx, shipped, rest, stdout, stderr)
		}
	}
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(config.UsageError)), errors.As(err, new(*config.Error)):
		fmt.Fprintln(stderr, "hourglass: "+format.OneLine(err))
		return exitUsage
	default:
		fmt.Fprintln(stderr, "hourglass: "+format.OneLine(err))
		return exitRuntime
	}
}

// mainUsage is `hourglass help`: every command with its line.
func mainUsage() string {
	var b strings.Builder
	b.WriteString("hourglass: watch and exercise the counting structures in Redis: hour/day counters,\n")
	b.WriteString("delay and list queues, limiters, uniques and locks.\n\nUsage:\n")
	for _, c := range commands() {
		line := "hourglass " + c.name + " [flags]"
		switch c.name {
		case "":
			line = "hourglass [flags]"
		case "help":
			line = "hourglass help [COMMAND]"
		case "version":
			line = "hourglass version"
		}
		fmt.Fprintf(&b, "  %-27s%s\n", line, c.summary)
	}
	b.WriteString("\nEvery command takes --help. Flags override config.toml; config.toml overrides the\n")
	b.WriteString("built-in defaults.\n")
	b.WriteString("Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.\n")
	return b.String()
}

// parseFlags parses args, turning mistakes into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err // the flag package has printed the usage
		}
		if r := refusal(fs); r != "" { // a number out of its range, said as the user typed it
			if fs.Name() != "hourglass" {
				r = fs.Name() + ": " + r
			}
			return config.Usagef("%s", r)
		}
		return config.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return config.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
