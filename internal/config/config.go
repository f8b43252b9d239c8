package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	// Operators run the console on servers and in slim containers that often lack a zoneinfo
	// database; embedding it keeps timezone working everywhere.
	_ "time/tzdata"

	"github.com/BurntSushi/toml"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// Config is a validated configuration.
type Config struct {
	Path string // file it was read from; "" for the built-in default
	// Builtin is the text of the config.toml the program was built with; the root package embeds it
	// and hands it down. It is the default when no file is given. When the config in use is that
	// default, the console's proposals are written against it.
	Builtin []byte
	Redis   RedisConfig
	UI      UIConfig
	// Timezone is the zone windows are cut in (the top-level timezone), for every family that
	// does not set its own; TimezoneName is as written, e.g. "Local" or "Asia/Shanghai".
	Timezone     *time.Location
	TimezoneName string
	// Warnings are what the file does that still works but should change (a setting in its old
	// place), each with its file:line.
	Warnings []*Error
	Scan     ScanConfig
	Counters []*store.Family
	// Structures are the queues, limiters, uniques and locks to watch.
	Structures scanner.Structures
	// Profiles are the [[profile]] mixes `inject --profile` runs (demo is built in).
	Profiles []Profile
	// Inferred is set on the config of a command given an address and no config file (see
	// Bare): it holds no entries, and the sweep infers them from the keys.
	Inferred bool

	file        string         // the name errors give for the file
	patternLine map[string]int // "<table>:<name>" -> line of the family's pattern, for errors found later
}

// RedisConfig says which Redis to watch and whether the console may write to it.
type RedisConfig struct {
	Addrs       []string // host:port or redis:// / rediss:// URLs; empty means the embedded Redis
	Username    string
	PasswordEnv string // name of the variable holding the password
	// Name labels the target in the header ("prod-ads"), so an operator always knows which
	// environment is on screen; the repair confirmation asks for it.
	Name string
	// TLS files; a rediss:// address or any of them turns TLS on. Skipping verification is
	// only ever a flag (--insecure), never the file.
	TLS         store.TLSFiles
	AllowWrites bool // against a real Redis; the embedded one always allows writes
	// Sentinel finds the primary through Sentinels, when its Master is set (sentinel_master,
	// sentinel_addrs); Addrs are then empty.
	Sentinel SentinelConfig
	// ReadFrom says where the sweeps read (read_from, replica_addrs): the primary, or a replica.
	ReadFrom ReadFromConfig

	passwordEnvAt Error // where PasswordEnv was set, for the error when it names no variable
}

// SentinelConfig is the [redis] table's Sentinel keys: the master name, the Sentinels, and
// their own login, kept apart from the data nodes'.
type SentinelConfig struct {
	Master      string
	Addrs       []string
	Username    string
	PasswordEnv string // name of the variable holding the Sentinels' password

	passwordEnvAt Error
}

// Real reports whether the table names a real Redis: addresses, or a Sentinel master. With
// neither, commands run on the embedded one.
func (r RedisConfig) Real() bool { return len(r.Addrs) > 0 || r.Sentinel.Master != "" }

// Shown is where the table points, for messages: its addresses, or the Sentinel master and
// the Sentinels, with any URL's password hidden.
func (r RedisConfig) Shown() string {
	if r.Sentinel.Master != "" {
		return "Sentinel master " + r.Sentinel.Master + " (" + strings.Join(r.Sentinel.Addrs, ",") + ")"
	}
	return store.RedactAddrs(r.Addrs)
}

// Password returns the password. It is the variable named by PasswordEnv or, when no PasswordEnv is
// set, REDISCLI_AUTH (as redis-cli does); "" if that is unset too. A PasswordEnv naming a variable
// that is unset or empty is an error. A quiet fall back to REDISCLI_AUTH could log in as someone
// else. One to no AUTH at all could pass unnoticed on a server that lets the default user in. It is
// read when called, never stored in the Config, so a Config can be printed or logged without
// leaking it.
func (r RedisConfig) Password() (string, error) {
	if r.PasswordEnv != "" {
		p, ok := os.LookupEnv(r.PasswordEnv)
		if !ok || p == "" {
			err := r.passwordEnvAt
			err.Msg = fmt.Sprintf("names %s, which is not set", r.PasswordEnv)
			if ok {
				err.Msg = fmt.Sprintf("names %s, which is set but empty, so no password would be sent", r.PasswordEnv)
			}
			if err.File == "" { // not from a file
				return "", fmt.Errorf("password_env %s", err.Msg)
			}
			return "", &err
		}
		return p, nil
	}
	return os.Getenv("REDISCLI_AUTH"), nil
}

// UIConfig shapes the terminal console.
type UIConfig struct {
	Refresh time.Duration // poll interval, at least snapshot.MinRefresh
	Theme   string        // "dark", "light" or "none"
	// WaitWarning is how long a queue's oldest ready task may wait (a job's latency, a due task's
	// lag) before the Overview warns of it.
	WaitWarning time.Duration
}

// ScanConfig budgets the SCAN sweeps so the console never hurts the Redis it watches.
type ScanConfig struct {
	Count         int           // COUNT hint of the first SCAN call, and the most any asks for
	KeysPerSecond int           // ceiling on keys visited per second, per sweep
	MaxCall       time.Duration // the longest one call of a sweep should hold Redis
	// LiveSample is how many keys of each counter family's current window, besides its largest,
	// the console and serve read again at every refresh (0: only the largest).
	LiveSample int
	// MaxRedisTime is the share of one core of each master (0.01 is 1%) the console's and
	// serve's commands may take, measured from INFO commandstats; the sweep slows to keep it.
	MaxRedisTime float64
}

// themes are the palettes the theme package provides.
var themes = []string{"dark", "light", "none"}

// Error is a problem in a config file, reported as one line: "FILE:LINE: KEY: message".
type Error struct {
	File string
	Line int    // 1-based; 0 when unknown
	Key  string // dotted key without element indexes, e.g. "counter.pattern"; may be empty
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	return oneLine(b.String())
}

// Builtin parses text, the config.toml the program was built with, as the default config. The
// text is compiled into the binary, so a failure is a bug in the release; a test guards it.
func Builtin(text []byte) *Config {
	cfg, err := Parse("config.toml", text, nil)
	if err != nil {
		panic("built-in " + err.Error())
	}
	cfg.Path = ""
	cfg.Builtin = text
	return cfg
}

// Open finds and loads the config a command runs with: the file at path. With no path, it is
// ./config.toml when there is one, else builtin, the config.toml the program was built with. addrs,
// from --addr, replace the file's addresses when there are any.
func Open(path string, addrs []string, builtin []byte) (*Config, error) {
	if path == "" {
		if _, err := os.Stat("config.toml"); err != nil {
			cfg, err := Parse("config.toml", builtin, addrs)
			if cfg != nil {
				cfg.Path = ""
				cfg.Builtin = builtin
			}
			return cfg, err
		}
		path = "config.toml"
	}
	cfg, err := Load(path, addrs)
	if cfg != nil {
		cfg.Builtin = builtin
	}
	return cfg, err
}

// Load reads and validates the config file at path, with its addresses replaced by addrs (from
// --addr) when there are any, before the checks that depend on them.
// At most MaxFileSize bytes and one more are read, so neither a huge file nor an endless one
// (a device, a pipe) holds the command up.
func Load(path string, addrs []string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	return Parse(path, data, addrs)
}

// Parse validates data as a config file called name, used in errors and as Config.Path. Its
// addresses are replaced by addrs when there are any. When the file has several problems, the error
// is the first one in the file, as a compiler would report it. It is always an *Error.
//
// A leading byte order mark is dropped. A file over MaxFileSize is refused. So is one that holds no
// table or key at all (nothing, or only comments). An empty file is a mistake (a truncated copy,
// the wrong path), and as a config it would watch nothing without a word. Whether a family's
// windows share a cluster slot is not checked here. A command that writes refuses such a family,
// and one that reads warns (CheckCluster).
func Parse(name string, data []byte, addrs []string) (*Config, error) {
	src, raw, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, &Error{File: name, Line: 1, Msg: "the file is empty (no table or key, only blank lines or comments): " +
			"write the entries to watch in it (hourglass discover proposes them), or use another file"}
	}
	c := &checker{file: name, lines: indexLines(src), patternLine: map[string]int{}}
	cfg := c.config(raw)
	cfg.file, cfg.patternLine, cfg.Warnings = name, c.patternLine, c.warnings
	if len(addrs) > 0 {
		cfg.Redis.Addrs = addrs
		cfg.Redis.Sentinel.Master, cfg.Redis.Sentinel.Addrs = "", nil // --addr names the Redis instead
	}
	if len(c.errs) > 0 {
		// Sort by line, keeping discovery order among equals, so the report is stable.
		slices.SortStableFunc(c.errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, c.errs[0]
	}
	cfg.Path = name
	return cfg, nil
}

// SweepOptions are the scanner's options as the config sets them. They hold the [scan] budget and
// the zone windows are cut in, for families without their own. They hold this machine's zone by
// name (HostZone), for the zones discover proposes. With withStructures, they hold the queues,
// limiters, uniques and locks too.
func (cfg *Config) SweepOptions(withStructures bool) scanner.Options {
	opt := scanner.Options{Count: cfg.Scan.Count, KeysPerSecond: cfg.Scan.KeysPerSecond, MaxCall: cfg.Scan.MaxCall,
		MaxRedisTime: cfg.Scan.MaxRedisTime, Location: cfg.Timezone, LiveSample: cfg.Scan.LiveSample,
		HostZone: HostZone()}
	if opt.LiveSample == 0 {
		opt.LiveSample = -1 // the scanner's zero is its default; the config's is none
	}
	if withStructures {
		opt.Structures = cfg.Structures
	}
	return opt
}

// decode checks data's size and nesting (precheck, which drops a byte order mark) and decodes it
// as TOML. It returns the text the lines are counted in, and any error as an *Error naming
// name:line.
func decode(name string, data []byte) (string, map[string]any, error) {
	data, err := precheck(name, data)
	if err != nil {
		return "", nil, err
	}
	src := string(data)
	var raw map[string]any
	if _, err := toml.Decode(src, &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return "", nil, &Error{File: name, Line: pe.Position.Line, Msg: pe.Message}
		}
		return "", nil, &Error{File: name, Msg: err.Error()}
	}
	return src, raw, nil
}
