package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"hourglass/internal/config"
	"hourglass/internal/target"
	"hourglass/store"
)

// commonFlags are the flags every command that talks to Redis takes, and the sweep budget of
// those that sweep.
type commonFlags struct {
	command     string // for errors
	config      string
	addrs       stringList
	allowWrites bool
	insecure    bool
	budget      int // --keys-per-second; -1: the config's
}

// commandFlags starts a command's flag set with the flags every command that talks to Redis
// takes.
func commandFlags(name, usage string, stdout io.Writer) (*flag.FlagSet, *commonFlags) {
	fs := newFlagSet(name, usage, stdout)
	common := &commonFlags{command: name, budget: -1}
	common.register(fs)
	return fs, common
}

// withBudget adds --keys-per-second, which load applies over [scan] keys_per_second.
func (c *commonFlags) withBudget(fs *flag.FlagSet) {
	fs.IntVar(&c.budget, "keys-per-second", -1, "sweep budget in keys per second, 0 for none (default: [scan] keys_per_second)")
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config file (default ./config.toml when present, else the built-in defaults)")
	fs.Var(&c.addrs, "addr", "Redis `address`: host:port, or a redis:// or rediss:// URL; repeat for a\ncluster's seeds (overrides [redis] addrs)")
	fs.BoolVar(&c.allowWrites, "allow-writes", false, "allow writes to a real Redis (the embedded one always allows them)")
	fs.BoolVar(&c.insecure, "insecure", false, "TLS without verifying the server's certificate (a test server only; never from the config file)")
}

// load reads the config the flags name and applies the flags over it. The config's warnings (a
// setting in its old place) go to stderr, one line each with its file:line.
func (c *commonFlags) load(stderr io.Writer) (*config.Config, error) {
	if c.budget < -1 {
		return nil, config.Usagef("%s: --keys-per-second must not be negative", c.command)
	}
	if len(c.addrs) > 0 {
		if _, err := store.ParseTarget(c.addrs, "", ""); err != nil {
			return nil, config.Usagef("--addr: %v", err)
		}
	}
	cfg, err := config.Open(c.config, c.addrs)
	if err != nil {
		return nil, config.UsageError{Err: err}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "hourglass: warning: "+w.Error())
	}
	if c.allowWrites {
		cfg.Redis.AllowWrites = true
	}
	if c.budget >= 0 {
		cfg.Scan.KeysPerSecond = c.budget
	}
	cfg.Redis.TLS.Insecure = c.insecure
	return cfg, nil
}

// open loads the config, lets check refuse it (nil: no check) before anything connects, and
// opens the target it names. The caller closes the target.
func (c *commonFlags) open(ctx context.Context, stderr io.Writer, check func(*config.Config) error) (*config.Config, *target.Target, error) {
	cfg, err := c.load(stderr)
	if err == nil && check != nil {
		err = check(cfg)
	}
	if err != nil {
		return nil, nil, err
	}
	t, err := target.Open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, t, nil
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
