package config

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	// Operators run the console on servers and in slim containers that often lack a zoneinfo
	// database; embedding it keeps ui.timezone working everywhere.
	_ "time/tzdata"

	"github.com/BurntSushi/toml"

	"hourglass/scanner"
	"hourglass/store"
)

// shippedConfig is config.toml as released: the built-in default and the documented reference.
//
//go:embed config.toml
var shippedConfig []byte

// Config is a validated configuration.
type Config struct {
	Path     string // file it was read from; "" for the built-in default
	Redis    RedisConfig
	UI       UIConfig
	Scan     ScanConfig
	Counters []*store.Family
	// Structures are the queues, limiters, uniques and locks to watch.
	Structures scanner.Structures
	// Profiles are the [[profile]] mixes `inject --profile` runs (demo is built in).
	Profiles []Profile

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

	passwordEnvAt Error // where PasswordEnv was set, for the error when it names no variable
}

// Password returns the password: the variable named by PasswordEnv, or, when no PasswordEnv is
// set, REDISCLI_AUTH (as redis-cli does); "" if that is unset too. A PasswordEnv naming a variable
// that is not set is an error rather than a quiet fall back to REDISCLI_AUTH, which could log in
// as someone else. It is read when called, never stored in the Config, so a Config can be printed
// or logged without leaking it.
func (r RedisConfig) Password() (string, error) {
	if r.PasswordEnv != "" {
		p, ok := os.LookupEnv(r.PasswordEnv)
		if !ok {
			err := r.passwordEnvAt
			err.Msg = fmt.Sprintf("names %s, which is not set", r.PasswordEnv)
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
	Refresh      time.Duration // poll interval, at least MinRefresh
	Theme        string        // "dark", "light" or "none"
	Timezone     *time.Location
	TimezoneName string // as written in the file, e.g. "Local" or "Asia/Shanghai"
}

// ScanConfig budgets the SCAN sweeps so the console never hurts the Redis it watches.
type ScanConfig struct {
	Count         int // COUNT hint per SCAN call
	KeysPerSecond int // ceiling on keys visited per second, per sweep
}

// MinRefresh is the shortest poll interval: faster than a person can read, and each poll costs
// the watched Redis a round of reads.
const MinRefresh = 250 * time.Millisecond

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
	return b.String()
}

// Default returns the shipped config.toml, parsed. The file is compiled in, so a failure is a
// bug in the release; a test guards it.
func Default() *Config {
	cfg, err := Parse("config.toml", shippedConfig, nil)
	if err != nil {
		panic("built-in " + err.Error())
	}
	cfg.Path = ""
	return cfg
}

// Shipped returns the text of the shipped config.toml: the built-in default and the documented
// reference.
func Shipped() []byte { return slices.Clone(shippedConfig) }

// Open finds and loads the config a command runs with: the file at path; with no path,
// ./config.toml when there is one, else the built-in default. addrs, from --addr, replace the
// file's addresses when there are any.
func Open(path string, addrs []string) (*Config, error) {
	if path == "" {
		if _, err := os.Stat("config.toml"); err != nil {
			cfg, err := Parse("config.toml", shippedConfig, addrs)
			if cfg != nil {
				cfg.Path = ""
			}
			return cfg, err
		}
		path = "config.toml"
	}
	return Load(path, addrs)
}

// Load reads and validates the config file at path, with its addresses replaced by addrs (from
// --addr) when there are any, before the checks that depend on them.
func Load(path string, addrs []string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, addrs)
}

// Parse validates data as a config file called name (used in errors and as Config.Path), with
// its addresses replaced by addrs when there are any. When the file has several problems the
// error is the first one in the file, as a compiler would report it; it is always an *Error.
func Parse(name string, data []byte, addrs []string) (*Config, error) {
	src := string(data)
	var raw map[string]any
	if _, err := toml.Decode(src, &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	c := &checker{file: name, lines: indexLines(src), patternLine: map[string]int{}}
	cfg := c.config(raw)
	cfg.file, cfg.patternLine = name, c.patternLine
	if len(addrs) > 0 {
		cfg.Redis.Addrs = addrs
	}
	if len(c.errs) == 0 && len(cfg.Redis.Addrs) > 1 {
		if err := cfg.CheckCluster(); err != nil {
			return nil, err
		}
	}
	if len(c.errs) > 0 {
		// Sort by line, keeping discovery order among equals, so the report is stable.
		slices.SortStableFunc(c.errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, c.errs[0]
	}
	cfg.Path = name
	return cfg, nil
}

// checker walks the decoded file, collecting every problem with its line.
type checker struct {
	file        string
	lines       lineIndex
	errs        []*Error
	patternLine map[string]int // "<table>:<name>" -> line of its pattern (a unique may share a counter's name)
}

// table is one decoded TOML table and the path its keys are found under in the line index.
type table struct {
	path string
	m    map[string]any
}

var indexSuffix = regexp.MustCompile(`\[\d+\]`)

// fail records a problem with the key at path (e.g. "counter[1].name").
func (c *checker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, &Error{
		File: c.file,
		Line: c.lines.lineOf(path),
		Key:  indexSuffix.ReplaceAllString(path, ""),
		Msg:  fmt.Sprintf(format, args...),
	})
}

func (c *checker) config(raw map[string]any) *Config {
	cfg := &Config{
		UI:   UIConfig{Refresh: time.Second, Theme: "dark", Timezone: time.Local, TimezoneName: "Local"},
		Scan: ScanConfig{Count: 1000, KeysPerSecond: 20000},
	}
	root := table{m: raw}
	c.onlyKeys(root, "", "redis", "ui", "scan", "counter", "delay_queue", "list_queue", "limiter", "unique", "bitmap", "lock", "profile")
	if t, ok := c.subtable(root, "redis"); ok {
		cfg.Redis = c.redis(t)
	}
	if t, ok := c.subtable(root, "ui"); ok {
		c.ui(t, &cfg.UI)
	}
	if t, ok := c.subtable(root, "scan"); ok {
		c.scan(t, &cfg.Scan)
	}
	cfg.Counters = c.counters(root)
	cfg.Structures = c.structures(root)
	cfg.Profiles = c.profiles(root, cfg)
	return cfg
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *checker) redis(t table) RedisConfig {
	var r RedisConfig
	c.onlyKeys(t, "[redis]", "addrs", "username", "password_env", "allow_writes", "name", "tls_ca_file", "tls_cert_file", "tls_key_file")
	r.Name, _ = c.str(t, "name")
	readable := map[string]bool{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"tls_ca_file", &r.TLS.CA}, {"tls_cert_file", &r.TLS.Cert}, {"tls_key_file", &r.TLS.Key}} {
		if v, ok := c.str(t, f.key); ok {
			if _, err := os.Stat(v); err != nil {
				c.fail(t.path+"."+f.key, "cannot read %s: %v", v, errors.Unwrap(err))
			} else {
				readable[f.key] = true
			}
			*f.dst = v
		}
	}
	// The files' contents are checked now, so a bad one is named by its line.
	if readable["tls_ca_file"] {
		if _, err := store.LoadCA(r.TLS.CA); err != nil {
			c.fail(t.path+".tls_ca_file", "%v", err)
		}
	}
	switch {
	case (r.TLS.Cert == "") != (r.TLS.Key == ""):
		c.fail(t.path+".tls_cert_file", "a client certificate needs tls_cert_file and tls_key_file both")
	case readable["tls_cert_file"] && readable["tls_key_file"]:
		if _, err := store.LoadClientCert(r.TLS.Cert, r.TLS.Key); err != nil {
			c.fail(t.path+".tls_cert_file", "%v", err)
		}
	}
	if addrs, ok := c.stringList(t, "addrs"); ok {
		for i, a := range addrs {
			if msg := checkAddr(a); msg != "" {
				c.fail(t.path+".addrs["+strconv.Itoa(i)+"]", "%s", msg)
			}
		}
		r.Addrs = addrs
	}
	r.Username, _ = c.str(t, "username")
	if v, ok := c.str(t, "password_env"); ok {
		if v != "" && !envName.MatchString(v) {
			c.fail(t.path+".password_env", "%q is not an environment variable name", v)
		}
		r.PasswordEnv = v
		r.passwordEnvAt = Error{File: c.file, Line: c.lines.lineOf(t.path + ".password_env"), Key: "redis.password_env"}
	}
	r.AllowWrites, _ = c.boolean(t, "allow_writes")
	return r
}

// checkAddr returns what is wrong with a Redis address, or "".
func checkAddr(a string) string {
	if _, err := store.ParseTarget([]string{a}, "", ""); err != nil {
		return err.Error()
	}
	return ""
}

func (c *checker) ui(t table, ui *UIConfig) {
	c.onlyKeys(t, "[ui]", "refresh", "theme", "timezone")
	if d, ok := c.duration(t, "refresh"); ok {
		if d < MinRefresh {
			c.fail(t.path+".refresh", "%v is below the %v minimum", d, MinRefresh)
		}
		ui.Refresh = d
	}
	if v, ok := c.str(t, "theme"); ok {
		if !slices.Contains(themes, v) {
			c.fail(t.path+".theme", "unknown theme %q (use %s)", v, strings.Join(themes, ", "))
		}
		ui.Theme = v
	}
	if v, ok := c.str(t, "timezone"); ok {
		// LoadLocation("") means UTC, which would hide a half-edited line.
		loc, err := time.LoadLocation(v)
		if v == "" || err != nil {
			c.fail(t.path+".timezone", "unknown time zone %q (use Local, UTC or an IANA name such as Asia/Shanghai)", v)
		} else {
			ui.Timezone, ui.TimezoneName = loc, v
		}
	}
}

func (c *checker) scan(t table, s *ScanConfig) {
	c.onlyKeys(t, "[scan]", "count", "keys_per_second")
	if n, ok := c.integer(t, "count"); ok {
		if n < 1 {
			c.fail(t.path+".count", "must be at least 1, got %d", n)
		}
		s.Count = n
	}
	if n, ok := c.integer(t, "keys_per_second"); ok {
		if n < 1 {
			c.fail(t.path+".keys_per_second", "must be at least 1, got %d", n)
		}
		s.KeysPerSecond = n
	}
}

// counters builds the [[counter]] families.
func (c *checker) counters(root table) []*store.Family {
	var fams []*store.Family
	firstLine := map[string]int{} // family name -> line of its name key
	for _, t := range c.arrayTables(root, "counter") {
		if f := c.counter(t, firstLine, "[[counter]]"); f != nil {
			fams = append(fams, f)
		}
	}
	return fams
}

// arrayTables returns the [[name]] tables of root.
func (c *checker) arrayTables(root table, name string) []table {
	var tables []table
	switch v := root.m[name].(type) {
	case nil:
		return nil
	case []map[string]any:
		for i, m := range v {
			tables = append(tables, table{name + "[" + strconv.Itoa(i) + "]", m})
		}
	case []any: // name = [{...}, {...}]: legal TOML, so accepted
		for i, e := range v {
			path := name + "[" + strconv.Itoa(i) + "]"
			if m, ok := e.(map[string]any); ok {
				tables = append(tables, table{path, m})
			} else {
				c.fail(path, "want a table, got %s", describe(e))
			}
		}
	default:
		c.fail(name, "want [[%s]] tables, got %s", name, describe(v))
	}
	return tables
}

// counter checks one [[counter]] table (or [[unique]], [[bitmap]]: windowed the same way) and
// builds its family; nil if anything is wrong.
func (c *checker) counter(t table, firstLine map[string]int, header string) *store.Family {
	start := len(c.errs)
	c.onlyKeys(t, header, "name", "pattern", "hour_format", "day_format", "hour_retention", "day_retention")
	at := func(key string) string { return t.path + "." + key }
	var spec store.FamilySpec
	var ok bool
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &spec.Name}, {"pattern", &spec.Pattern}} {
		if _, present := t.m[f.key]; !present {
			c.fail(at(f.key), "missing: every %s needs a %s", header, f.key)
		}
		*f.dst, _ = c.str(t, f.key)
	}
	// Format and retention come in pairs; checking them here rather than leaving it to
	// store.NewFamily points at the line to edit and reports every pair, not just the first.
	formats := 0
	for _, g := range []struct {
		gran, example string
		format        *string
		retention     *time.Duration
	}{
		{"hour", "yyyyMMddHH", &spec.HourFormat, &spec.HourRetention},
		{"day", "yyyyMMdd", &spec.DayFormat, &spec.DayRetention},
	} {
		fkey, rkey := g.gran+"_format", g.gran+"_retention"
		_, badFormat := t.m[fkey]
		*g.format, ok = c.str(t, fkey)
		badFormat = badFormat && !ok
		*g.retention, ok = c.duration(t, rkey)
		switch {
		case ok && *g.retention <= 0:
			c.fail(at(rkey), "must be positive, got %q", t.m[rkey])
		case *g.format != "" && !ok:
			if _, present := t.m[rkey]; !present {
				c.fail(at(fkey), "%s windows need %s (how long a window is kept after it ends), e.g. %s = \"48h\"",
					g.gran, rkey, rkey)
			}
		case *g.format == "" && ok && !badFormat:
			c.fail(at(rkey), "set without %s: add %s = %q or remove it", fkey, fkey, g.example)
		}
		if *g.format != "" || badFormat {
			formats++
		}
	}
	if formats == 0 {
		c.fail(at("hour_format"), "a counter family needs hour_format, day_format or both")
	}
	if spec.Name != "" {
		if line, dup := firstLine[spec.Name]; dup {
			c.fail(at("name"), "duplicate family name %q (first declared at line %d)", spec.Name, line)
		} else {
			firstLine[spec.Name] = c.lines.lineOf(at("name"))
		}
	}
	fam, err := store.NewFamily(spec)
	var se *store.SpecError
	switch {
	case errors.As(err, &se):
		if !reportedPair(c.errs[start:], se.Field) {
			c.fail(at(se.Field), "%s", strings.TrimPrefix(se.Msg, se.Field+": "))
		}
		return nil
	case err != nil:
		c.fail(t.path, "%v", err)
		return nil
	}
	c.patternLine[indexSuffix.ReplaceAllString(t.path, "")+":"+spec.Name] = c.lines.lineOf(at("pattern"))
	if len(c.errs) > start {
		return nil
	}
	return fam
}

// CheckCluster refuses, for a Redis Cluster, a family whose hour and day keys can land in
// different slots: one script could not write both. It runs once the addresses are final (after
// --addr) or when a single address turns out to be a cluster node, and names the pattern's line.
func (cfg *Config) CheckCluster() error {
	for _, f := range cfg.Counters {
		if !f.SharesSlot() {
			return &Error{
				File: cfg.file, Line: cfg.patternLine["counter:"+f.Name()], Key: "counter.pattern",
				Msg: fmt.Sprintf("hour and day keys of %q can land in different cluster slots, so one script "+
					"cannot write both; put the dims in a hash tag: pattern = %q", f.Name(), hashTagged(f.Pattern().String())),
			}
		}
	}
	for _, u := range cfg.Structures.Uniques {
		if f := u.Family; !f.Pattern().SharesSlot() {
			table := "unique" // the [[unique]] table holds the HyperLogLogs
			if u.Kind == store.Bitmap {
				table = "bitmap"
			}
			return &Error{
				File: cfg.file, Line: cfg.patternLine[table+":"+f.Name()], Key: table + ".pattern",
				Msg: fmt.Sprintf("the windows of %q can land in different cluster slots, so its 7- and 30-day unions "+
					"cannot be read in one command; put the part before <window> in a hash tag: pattern = %q", f.Name(), hashTagged(f.Pattern().String())),
			}
		}
	}
	return nil
}

// reportedPair reports whether errs already hold a problem with field, or with the other half of
// its format/retention pair: store.NewFamily stops at the first problem it sees, which is then
// often one this file has already explained better.
func reportedPair(errs []*Error, field string) bool {
	gran, _, _ := strings.Cut(field, "_")
	for _, e := range errs {
		k := e.Key[strings.LastIndexByte(e.Key, '.')+1:] // counter.day_format, bitmap.day_format...
		if k == field || (gran == "hour" || gran == "day") && strings.HasPrefix(k, gran+"_") {
			return true
		}
	}
	return false
}

// hashTagged suggests a version of pattern whose hour and day keys share a cluster slot: the
// text from its first placeholder up to the separator before <window>, wrapped in braces.
func hashTagged(pattern string) string {
	const example = "stat:{<tenant>:<endpoint>}:<window>"
	w := strings.Index(pattern, "<window>")
	if strings.ContainsAny(pattern, "{}") || w < 2 || strings.LastIndexByte(pattern, '<') != w {
		return example
	}
	from := strings.IndexByte(pattern, '<')
	if from == w {
		from = 0 // no dims: tag the literal prefix
	}
	return pattern[:from] + "{" + pattern[from:w-1] + "}" + pattern[w-1:]
}

// SweepOptions are the scanner's options as the config sets them: the [scan] budget and the [ui]
// zone windows are cut in, with the queues, limiters, uniques and locks when withStructures.
func (cfg *Config) SweepOptions(withStructures bool) scanner.Options {
	opt := scanner.Options{Count: cfg.Scan.Count, KeysPerSecond: cfg.Scan.KeysPerSecond, Location: cfg.UI.Timezone}
	if withStructures {
		opt.Structures = cfg.Structures
	}
	return opt
}
