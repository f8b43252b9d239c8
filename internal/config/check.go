package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// checker walks the decoded file, collecting every problem with its line.
type checker struct {
	file        string
	lines       lineIndex
	errs        []*Error
	patternLine map[string]int // "<table>:<name>" -> line of its pattern (a unique may share a counter's name)
	defaultZone *time.Location // the top-level timezone, for families without their own
	warnings    []*Error
	// taken are the names of the config in use, when entries are added to it (ParseEntries).
	taken map[string]bool
}

// table is one decoded TOML table and the path its keys are found under in the line index.
type table struct {
	path string
	m    map[string]any
}

var indexSuffix = regexp.MustCompile(`\[\d+\]`)

// at is a problem or a warning about the key at path (e.g. "counter[1].name"), with its line.
func (c *checker) at(path, format string, args ...any) *Error {
	return &Error{File: c.file, Line: c.lines.lineOf(path), Key: indexSuffix.ReplaceAllString(path, ""), Msg: fmt.Sprintf(format, args...)}
}

// warn records something that works but should change.
func (c *checker) warn(path, format string, args ...any) {
	c.warnings = append(c.warnings, c.at(path, format, args...))
}

// fail records a problem.
func (c *checker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, c.at(path, format, args...))
}

func (c *checker) config(raw map[string]any) *Config {
	cfg := &Config{
		UI:       UIConfig{Refresh: time.Second, Theme: "dark", WaitWarning: time.Minute},
		Scan:     ScanConfig{Count: 1000, KeysPerSecond: 20000, MaxCall: scanner.DefaultMaxCall, LiveSample: scanner.DefaultLiveSample, MaxRedisTime: 0.008},
		Timezone: time.Local, TimezoneName: "Local",
	}
	root := table{m: raw}
	c.onlyKeys(root, "", "timezone", "redis", "ui", "scan", "counter", "delay_queue", "list_queue", "limiter", "unique", "bitmap", "lock", "job_queue", "bloom", "profile")
	if loc, name, ok := c.zone(root, "timezone"); ok {
		cfg.Timezone, cfg.TimezoneName = loc, name
	}
	if t, ok := c.subtable(root, "redis"); ok {
		cfg.Redis = c.redis(t)
	}
	if t, ok := c.subtable(root, "ui"); ok {
		_, topLevel := raw["timezone"]
		c.ui(t, cfg, topLevel)
	}
	c.defaultZone = cfg.Timezone
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
	c.onlyKeys(t, "[redis]", "addrs", "username", "password_env", "allow_writes", "name", "tls_ca_file", "tls_cert_file", "tls_key_file",
		"sentinel_master", "sentinel_addrs", "sentinel_username", "sentinel_password_env", "read_from", "replica_addrs")
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
	r.PasswordEnv, r.passwordEnvAt = c.passwordEnv(t, "password_env")
	r.AllowWrites, _ = c.boolean(t, "allow_writes")
	r.Sentinel = c.sentinel(t, len(r.Addrs) > 0)
	r.ReadFrom = c.readFrom(t)
	return r
}

// passwordEnv reads key, the name of the environment variable a password is in, and where it
// was written, for the error should the variable be unset when a command runs.
func (c *checker) passwordEnv(t table, key string) (string, Error) {
	v, ok := c.str(t, key)
	if !ok {
		return "", Error{}
	}
	if v != "" && !envName.MatchString(v) {
		c.fail(t.path+"."+key, "%q is not an environment variable name", v)
	}
	return v, Error{File: c.file, Line: c.lines.lineOf(t.path + "." + key), Key: "redis." + key}
}

// sentinel reads [redis]'s Sentinel keys. A master name needs Sentinels, and the two stand
// instead of addrs (hasAddrs: the table lists some).
func (c *checker) sentinel(t table, hasAddrs bool) SentinelConfig {
	var s SentinelConfig
	s.Master, _ = c.str(t, "sentinel_master")
	addrs, listed := c.stringList(t, "sentinel_addrs")
	for i, a := range addrs {
		if _, err := store.SentinelTarget([]string{a}, store.Sentinel{Master: "m"}, "", ""); err != nil {
			c.fail(t.path+".sentinel_addrs["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	s.Addrs = addrs
	s.Username, _ = c.str(t, "sentinel_username")
	s.PasswordEnv, s.passwordEnvAt = c.passwordEnv(t, "sentinel_password_env")
	_, hasMaster := t.m["sentinel_master"]
	switch {
	case hasMaster && s.Master == "":
		c.fail(t.path+".sentinel_master", "is empty: give the master name the Sentinels know the primary by")
	case s.Master != "" && len(addrs) == 0:
		c.fail(t.path+".sentinel_master", "needs sentinel_addrs, the Sentinels' host:port addresses")
	case s.Master == "" && listed && len(addrs) > 0:
		c.fail(t.path+".sentinel_addrs", "needs sentinel_master, the master name the Sentinels know the primary by")
	case s.Master != "" && hasAddrs:
		c.fail(t.path+".sentinel_master", "and addrs both name the Redis: keep one (addrs = [] with a Sentinel master)")
	}
	return s
}

// checkAddr returns what is wrong with a Redis address, or "".
func checkAddr(a string) string {
	if _, err := store.ParseTarget([]string{a}, "", ""); err != nil {
		return err.Error()
	}
	return ""
}

// ui reads [ui], and its timezone, the top-level timezone's old place, with a warning: the zone
// decides which keys a window reads in every command, not only how the console shows times.
func (c *checker) ui(t table, cfg *Config, topLevelZone bool) {
	ui := &cfg.UI
	c.onlyKeys(t, "[ui]", "refresh", "theme", "timezone", "wait_warning")
	if d, ok := c.durationIn(t, "refresh", snapshot.MinRefresh, maxRefresh); ok {
		ui.Refresh = d
	}
	if d, ok := c.durationIn(t, "wait_warning", time.Second, maxWaitWarning); ok {
		ui.WaitWarning = d
	}
	if v, ok := c.str(t, "theme"); ok {
		if !slices.Contains(themes, v) {
			c.fail(t.path+".theme", "unknown theme %q (use %s)", v, strings.Join(themes, ", "))
		}
		ui.Theme = v
	}
	if loc, name, ok := c.zone(t, "timezone"); ok {
		if topLevelZone {
			c.warn(t.path+".timezone", "ignored: the top-level timezone sets the zone windows are cut in; remove this line")
		} else {
			cfg.Timezone, cfg.TimezoneName = loc, name
			c.warn(t.path+".timezone", "has moved: write timezone = %q at the top of the file, before any [table], "+
				"or per [[counter]], [[unique]] or [[bitmap]]; it is read here for now", name)
		}
	}
}

func (c *checker) scan(t table, s *ScanConfig) {
	c.onlyKeys(t, "[scan]", "count", "keys_per_second", "max_call", "live_sample", "max_redis_time")
	if n, ok := c.intIn(t, "count", 1, maxScanCount); ok {
		s.Count = n
	}
	if n, ok := c.intIn(t, "keys_per_second", 1, maxKeysPerSecond); ok {
		s.KeysPerSecond = n
	}
	if d, ok := c.durationIn(t, "max_call", 0, maxMaxCall); ok {
		s.MaxCall = d
	}
	if n, ok := c.intIn(t, "live_sample", 0, scanner.MaxLiveSample); ok {
		s.LiveSample = n
	}
	if v, ok := c.percentIn(t, "max_redis_time", minRedisTime, 1); ok {
		s.MaxRedisTime = v
	}
}
