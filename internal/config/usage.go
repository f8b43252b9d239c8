package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/hourglass-dev/hourglass/store"
)

// UsageError is a mistake in what the user asked for, on the command line or in the config: the
// command ends with exit code 2. A config file's own mistakes are *Error, which names the line.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Counter finds the counter family named name, or the first one when name is empty.
func (cfg *Config) Counter(name string) (*store.Family, error) {
	if len(cfg.Counters) == 0 {
		return nil, Usagef("the config declares no [[counter]] family")
	}
	if name == "" {
		return cfg.Counters[0], nil
	}
	var names []string
	for _, f := range cfg.Counters {
		if f.Name() == name {
			return f, nil
		}
		names = append(names, f.Name())
	}
	return nil, Usagef("no counter family %q (the config has: %v)", name, names)
}

// RequireWrites refuses a write command (what: "inject", "repair") on a real Redis that the
// config and flags leave read-only, before anything connects.
func (cfg *Config) RequireWrites(what string) error {
	if !cfg.Redis.Real() || cfg.Redis.AllowWrites {
		return nil
	}
	return Usagef("refusing to %s on %s: a real Redis is read-only unless --allow-writes (or allow_writes = true under [redis])",
		what, cfg.Redis.Shown())
}

// Target is the Redis the [redis] table names: its addresses (or Sentinel master), user,
// password and TLS settings. A mistake in them is a usage error.
func (r RedisConfig) Target() (store.Target, error) {
	password, err := r.Password()
	if err != nil {
		return store.Target{}, UsageError{err}
	}
	var tg store.Target
	if r.Sentinel.Master != "" {
		tg, err = store.SentinelTarget(r.Sentinel.Addrs, store.Sentinel{Master: r.Sentinel.Master}, r.Username, password)
	} else {
		tg, err = store.ParseTarget(r.Addrs, r.Username, password)
	}
	if err != nil {
		return store.Target{}, UsageError{err}
	}
	if tg.Sentinel != nil {
		tg.Sentinel.Username = r.Sentinel.Username
		if tg.Sentinel.Password, err = r.Sentinel.password(); err != nil {
			return store.Target{}, UsageError{err}
		}
	}
	if r.TLS.Any() {
		if err := tg.UseTLS(r.TLS); err != nil {
			return store.Target{}, UsageError{err}
		}
	}
	return tg, nil
}

// ProfileNamed finds the [[profile]] named name; nil for the built-in "demo", and a usage error
// naming the profiles there are for any other name the config lacks.
func (cfg *Config) ProfileNamed(name string) (*Profile, error) {
	names := []string{"demo"}
	for i := range cfg.Profiles {
		if cfg.Profiles[i].Name == name {
			return &cfg.Profiles[i], nil
		}
		names = append(names, cfg.Profiles[i].Name)
	}
	if name == "demo" {
		return nil, nil
	}
	return nil, Usagef("inject: no profile %q (the config has: %s)", name, strings.Join(names, " "))
}

// password is the Sentinels' password: the variable PasswordEnv names, or "" when none is
// named. A name whose variable is unset or empty is an error, as for the data nodes' password.
func (s SentinelConfig) password() (string, error) {
	if s.PasswordEnv == "" {
		return "", nil
	}
	p, ok := os.LookupEnv(s.PasswordEnv)
	if ok && p != "" {
		return p, nil
	}
	err := s.passwordEnvAt
	err.Msg = fmt.Sprintf("names %s, which is not set", s.PasswordEnv)
	if ok {
		err.Msg = fmt.Sprintf("names %s, which is set but empty, so no password would be sent", s.PasswordEnv)
	}
	if err.File == "" {
		return "", fmt.Errorf("sentinel_password_env %s", err.Msg)
	}
	return "", &err
}
