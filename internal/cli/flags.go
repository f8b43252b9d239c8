package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"hourglass/internal/config"
	"hourglass/store"
)

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

// load reads the config the flags name and applies the flags over it. The config's warnings (a
// setting in its old place) go to stderr, one line each with its file:line.
func (c *commonFlags) load(stderr io.Writer) (*config.Config, error) {
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
		return config.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return config.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
