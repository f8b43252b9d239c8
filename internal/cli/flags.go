package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/store"
)

// targetFlags are the flags every command that talks to Redis takes, and the sweep budget of
// those that sweep.
type targetFlags struct {
	command     string // for errors
	config      string
	addrs       stringList
	allowWrites bool
	insecure    bool
	budget      int        // --keys-per-second; -1: the config's
	readFrom    string     // --read-from; "": the config's
	replicas    stringList // --replica
	// writes says whether the command writes to Redis with a config: on a cluster, one that
	// writes refuses an entry whose keys would cross slots, one that only reads warns of it. By
	// default inject and repair write and the others read.
	writes func(*config.Config) bool
	// watches is set for the commands that report on the config's entries (snapshot, serve, the
	// console): they warn when it has none.
	watches bool
	fs      *flag.FlagSet // the command's flags, for a parse-only run (see parsed)
	// shipped is the config.toml the binary was built with: the config when none is given.
	shipped []byte
}

// commandFlags starts a command's flag set with the flags every command that talks to Redis
// takes.
func commandFlags(name, usage string, shipped []byte, stdout io.Writer) (*flag.FlagSet, *targetFlags) {
	fs := newFlagSet(name, usage, stdout)
	writer := name == "inject" || name == "repair"
	tf := &targetFlags{command: name, budget: -1, shipped: shipped, writes: func(*config.Config) bool { return writer },
		watches: name == "snapshot" || name == "serve" || name == "hourglass"}
	tf.register(fs)
	return fs, tf
}

// maxKeysPerSecond is the largest --keys-per-second, as for [scan] keys_per_second.
const maxKeysPerSecond = 10_000_000

// withBudget adds --keys-per-second, which load applies over [scan] keys_per_second.
func (c *targetFlags) withBudget(fs *flag.FlagSet) {
	numberVar(fs, &c.budget, "keys-per-second", -1, 0, maxKeysPerSecond,
		"sweep budget in keys per second, `N` from 0 (no budget) to 10,000,000 (default: [scan] keys_per_second)")
}

func (c *targetFlags) register(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.config, "config", "", "config file (default ./config.toml when present, else the built-in defaults)")
	fs.Var(&c.addrs, "addr", "Redis `address`: host:port, or a redis:// or rediss:// URL; repeat for a\ncluster's seeds; or redis-sentinel://host:port[,host:port…]/<master-name> for a\nprimary behind Sentinel (overrides [redis] addrs and sentinel_master)")
	fs.BoolVar(&c.allowWrites, "allow-writes", false, "allow writes to a real Redis (the embedded one always allows them)")
	fs.StringVar(&c.readFrom, "read-from", "", "where sweeps read: `primary` or replica (overrides [redis] read_from)")
	fs.Var(&c.replicas, "replica", "a standalone primary's replica `host:port` to read from with --read-from replica;\nrepeat for several, best first (overrides [redis] replica_addrs)")
	fs.BoolVar(&c.insecure, "insecure", false, "TLS without verifying the server's certificate (a test server only; never from the config file)")
}

// load reads the config the flags name and applies the flags over it. The config's warnings (a
// setting in its old place) go to stderr, one line each with its file:line.
func (c *targetFlags) load(stderr io.Writer) (*config.Config, error) {
	if len(c.addrs) > 0 {
		if _, err := store.ParseTarget(c.addrs, "", ""); err != nil {
			return nil, config.Usagef("--addr: %v", err)
		}
	}
	cfg, err := config.Open(c.config, c.addrs, c.shipped)
	if err != nil {
		return nil, config.UsageError{Err: err}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "hourglass: warning: "+w.Error())
	}
	if c.watches && cfg.Path == "" && len(c.addrs) > 0 {
		// An address and no config: the entries come from the keys themselves.
		cfg = cfg.Bare()
	}
	if c.watches && !cfg.Watches() && !cfg.Inferred {
		fmt.Fprintf(stderr, "hourglass: warning: %s declares no entry ([[counter]], queues, limiters, uniques, locks or job queues): "+
			"nothing is watched and every key counts as unclaimed; hourglass discover proposes entries\n", cfg.Path)
	}
	if c.allowWrites {
		cfg.Redis.AllowWrites = true
	}
	if c.budget >= 0 {
		cfg.Scan.KeysPerSecond = c.budget
	}
	cfg.Redis.TLS.Insecure = c.insecure
	if err := c.applyReadFrom(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// applyReadFrom applies --read-from and --replica, and refuses reading from a replica when
// none is known.
func (c *targetFlags) applyReadFrom(cfg *config.Config) error {
	if c.readFrom != "" && c.readFrom != config.ReadPrimary && c.readFrom != config.ReadReplica {
		return config.Usagef("--read-from %q: want primary or replica", c.readFrom)
	}
	for _, a := range c.replicas {
		if _, _, err := net.SplitHostPort(a); err != nil || strings.Contains(a, "://") {
			return config.Usagef("--replica %q: want host:port", a)
		}
	}
	cfg.Redis.SetReadFrom(c.readFrom, c.replicas)
	return cfg.Redis.ReplicaProblem(false)
}

// parseOpen parses the command's arguments, then opens its target as open does.
func (c *targetFlags) parseOpen(ctx context.Context, args []string, stderr io.Writer, check func(*config.Config) error) (*config.Config, *target.Target, error) {
	if err := parseFlags(c.fs, args); err != nil {
		return nil, nil, err
	}
	return c.open(ctx, stderr, check)
}

// open loads the config, lets check refuse it (nil: no check) before anything connects, and
// opens the target it names. The caller closes the target.
//
// On a cluster the config's entries are checked for keys that would cross slots (see
// clusterCheck): before anything connects when several addresses make it a cluster, else once
// the one address turns out to be a cluster node.
func (c *targetFlags) open(ctx context.Context, stderr io.Writer, check func(*config.Config) error) (*config.Config, *target.Target, error) {
	cfg, err := c.load(stderr)
	if err == nil && check != nil {
		err = check(cfg)
	}
	if err != nil {
		return nil, nil, err
	}
	seeds := len(cfg.Redis.Addrs) > 1
	if seeds {
		if err := c.clusterCheck(cfg, stderr); err != nil {
			return nil, nil, err
		}
	}
	if err := parsed(ctx, c.fs, cfg); err != nil {
		return nil, nil, err
	}
	t, err := target.Open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if !seeds && t.Mode == "cluster" {
		if err := c.clusterCheck(cfg, stderr); err != nil {
			t.Close()
			return nil, nil, err
		}
	}
	return cfg, t, nil
}

// clusterCheck refuses, for a command that writes to a cluster, a config with an entry whose keys
// would cross slots (config.ClusterProblems: a counter's hour and day keys, which one script
// writes together; a unique's windows, which its unions read together). A command that only
// reads goes on: a counter's keys read one by one, and a unique's unions show their error; it
// warns, one line for each such entry.
func (c *targetFlags) clusterCheck(cfg *config.Config, stderr io.Writer) error {
	problems := cfg.ClusterProblems()
	if len(problems) == 0 {
		return nil
	}
	if c.writes(cfg) {
		return config.UsageError{Err: problems[0]}
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "hourglass: warning: %s (%s only reads, so it goes on; writes to it are refused)\n", p, c.reader())
	}
	return nil
}

// reader names the command in a warning.
func (c *targetFlags) reader() string {
	if c.command == "hourglass" {
		return "a read-only console"
	}
	return c.command
}

// numeric are the kinds of number a flag can hold.
type numeric interface {
	~int | ~int64 | ~float64
}

// numberFlag is a numeric flag that takes only values from lo to hi. Set refuses NaN, infinities
// and anything outside the range. So a command never runs with a count that allocates without end,
// a rate no loop can keep, or a negative duration. parseFlags turns a refusal into one usage line
// naming the command, the flag and the range (exit 2). The default is not checked, so a sentinel
// outside the range (-1: the config's) stays possible.
type numberFlag[T numeric] struct {
	p       *T
	lo, hi  T
	refused string // the value Set refused and why, for parseFlags
}

// numberVar defines a flag holding a T from lo to hi: an int, an int64, a float64 or a
// time.Duration, written as the flag package's own flags of that type are. Put the value's name
// in backquotes in usage (`N`) for --help.
func numberVar[T numeric](fs *flag.FlagSet, p *T, name string, def, lo, hi T, usage string) {
	*p = def
	fs.Var(&numberFlag[T]{p: p, lo: lo, hi: hi}, name, usage)
}

func (f *numberFlag[T]) String() string {
	if f == nil || f.p == nil {
		return ""
	}
	return spellNumber(*f.p)
}

func (f *numberFlag[T]) Get() any { return *f.p }

func (f *numberFlag[T]) Set(s string) error {
	v, err := parseNumber[T](s)
	switch {
	case err != nil:
	case math.IsNaN(float64(v)) || math.IsInf(float64(v), 0):
		err = fmt.Errorf("is not a finite number")
	case v < f.lo && f.lo == 0:
		err = fmt.Errorf("must not be negative")
	case v < f.lo:
		err = fmt.Errorf("must be at least %s", spellNumber(f.lo))
	case v > f.hi:
		err = fmt.Errorf("must be at most %s", spellNumber(f.hi))
	}
	if err != nil {
		f.refused = fmt.Sprintf("%s %v", s, err)
		return err
	}
	*f.p = v
	return nil
}

// parseNumber reads s as the flag package reads a T: a duration as time.ParseDuration does, an
// integer in any base strconv knows, a float as strconv does (NaN and Inf included, for Set to
// refuse by name).
func parseNumber[T numeric](s string) (T, error) {
	var zero T
	switch any(zero).(type) {
	case time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return zero, fmt.Errorf("is not a duration such as 30s or 2m")
		}
		return T(d), nil
	case float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return zero, fmt.Errorf("is not a number")
		}
		return T(v), nil // out of range: ±Inf, refused as not finite
	default:
		v, err := strconv.ParseInt(s, 0, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return zero, fmt.Errorf("is far too large")
		case err != nil:
			return zero, fmt.Errorf("is not a whole number")
		case int64(T(v)) != v:
			return zero, fmt.Errorf("is far too large")
		}
		return T(v), nil
	}
}

// spellNumber writes v as a user writes it: a duration as Go does, a whole number with commas.
func spellNumber[T numeric](v T) string {
	switch x := any(v).(type) {
	case time.Duration:
		return x.String()
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return format.Commas(int64(x))
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return format.Commas(int64(v))
}

// refusal returns the flag a numberFlag refused, as "--name value reason"; "" when none was.
func refusal(fs *flag.FlagSet) string {
	var msg string
	fs.VisitAll(func(f *flag.Flag) {
		if r, ok := f.Value.(interface{ refusedValue() string }); ok && msg == "" && r.refusedValue() != "" {
			msg = "--" + f.Name + " " + r.refusedValue()
		}
	})
	return msg
}

func (f *numberFlag[T]) refusedValue() string { return f.refused }

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
		if refusal(fs) != "" {
			return // a number out of range: its one line says enough
		}
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}
