package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// FuzzParse feeds the loader any bytes (up to 64 KiB). What it refuses, it refuses in one line
// that names the file and a line the file has, the same line every time, and whatever way the
// same tables are written. What it loads holds the bounds the reference documents, loads the same
// when its tables are written out again by a TOML encoder, and, rendered as a config file
// (render, below), loads to a config that renders the same.
func FuzzParse(f *testing.F) {
	f.Add(redistest.Shipped(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		var err error
		within(t, 10*time.Second, func() { err = checkParse(data) })
		if err != nil {
			t.Fatal(err)
		}
	})
}

// checkParse loads data and says what property, if any, the load breaks.
func checkParse(data []byte) error {
	cfg, err := Parse("fuzz.toml", data, nil)
	again, err2 := Parse("fuzz.toml", data, nil)
	if fmt.Sprint(err) != fmt.Sprint(err2) || (cfg == nil) != (again == nil) {
		return fmt.Errorf("two loads differ: %v, then %v", err, err2)
	}
	recoded, decoded := reencode(data)
	if err != nil {
		if bad := checkRefusal(data, err); bad != nil {
			return bad
		}
		if decoded {
			if _, err := Parse("fuzz.toml", recoded, nil); err == nil {
				return fmt.Errorf("refused (%v), but loads as\n%s", err2, recoded)
			}
		}
		return nil
	}
	if cfg == nil {
		return errors.New("no config and no error")
	}
	if bad := checkLoaded(cfg); bad != nil {
		return bad
	}
	want := summary(cfg)
	if want != summary(again) {
		return fmt.Errorf("two loads differ:\n%s\n%s", want, summary(again))
	}
	if decoded {
		back, err := Parse("fuzz.toml", recoded, nil)
		if err != nil || summary(back) != want {
			return fmt.Errorf("written out again as\n%s\nit loads as %v\n%s\nwant\n%s", recoded, err, summaryOf(back), want)
		}
	}
	text, err := render(cfg)
	if err != nil {
		return err
	}
	back, err := Parse("fuzz.toml", text, nil)
	if err != nil {
		return fmt.Errorf("rendered as\n%s\nit does not load: %v", text, err)
	}
	if again, err := render(back); err != nil || !bytes.Equal(again, text) {
		return fmt.Errorf("rendered as\n%s\nit loads and renders as\n%s (%v)", text, again, err)
	}
	return nil
}

// TestErrorsAreTheSameEveryTime: of several problems on one line (unknown keys of an inline
// table), a file is refused for the same one at every load.
func TestErrorsAreTheSameEveryTime(t *testing.T) {
	data := []byte("ui = { theme = \"dark\", a = 1, b = 2, c = 3, d = 4 }\n")
	_, first := Parse("c.toml", data, nil)
	for range 50 {
		if _, err := Parse("c.toml", data, nil); fmt.Sprint(err) != fmt.Sprint(first) {
			t.Fatalf("one load says %v, another %v", first, err)
		}
	}
	if want := "c.toml:1: ui.a: unknown key"; !strings.HasPrefix(fmt.Sprint(first), want) {
		t.Errorf("error %v, want one starting %q", first, want)
	}
}

// within runs fn and fails if it takes more than d: a loader that hangs on some input is a
// finding like a panic (the fuzzer itself waits on a hang without end).
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// checkRefusal holds a refusal to one line that names the file and, if a line, one it has.
func checkRefusal(data []byte, err error) error {
	msg := err.Error()
	var ce *Error
	if !errors.As(err, &ce) || !strings.HasPrefix(msg, "fuzz.toml") || strings.ContainsFunc(msg, unicode.IsControl) {
		return fmt.Errorf("error %q is not one line naming the file", msg)
	}
	if lines := bytes.Count(data, []byte("\n")) + 1; ce.Line < 0 || ce.Line > lines {
		return fmt.Errorf("error %q names line %d of a file of %d lines", msg, ce.Line, lines)
	}
	return nil
}

// checkLoaded holds a loaded config to the bounds every command relies on.
func checkLoaded(cfg *Config) error {
	if cfg.Scan.Count < 1 || cfg.Scan.KeysPerSecond < 1 || cfg.UI.Refresh < snapshot.MinRefresh ||
		!slices.Contains(themes, cfg.UI.Theme) || cfg.Timezone == nil {
		return fmt.Errorf("loaded out of bounds: scan %+v, ui %+v, zone %v", cfg.Scan, cfg.UI, cfg.Timezone)
	}
	for _, w := range cfg.Warnings {
		if msg := w.Error(); !strings.HasPrefix(msg, "fuzz.toml") || strings.ContainsFunc(msg, unicode.IsControl) {
			return fmt.Errorf("warning %q is not one line naming the file", msg)
		}
	}
	names := map[string]bool{}
	for _, fam := range cfg.Counters {
		if fam.Name() == "" || names[fam.Name()] || len(fam.Granularities()) == 0 {
			return fmt.Errorf("counter %q: empty, declared twice or without windows", fam.Name())
		}
		names[fam.Name()] = true
		for _, g := range fam.Granularities() {
			if fam.Retention(g) <= 0 {
				return fmt.Errorf("counter %q keeps its %s windows for %v", fam.Name(), g, fam.Retention(g))
			}
		}
	}
	for _, p := range cfg.Profiles {
		for _, e := range p.Entries {
			if !(e.Rate > 0) || e.Rate > 1e12 {
				return fmt.Errorf("profile %q: %s %q at %v events a second", p.Name, e.Kind, e.Name, e.Rate)
			}
		}
	}
	return nil
}

// reencode decodes data as TOML and writes the tables out again with the TOML encoder: the same
// config in another hand (keys sorted, strings requoted, comments gone). ok is false when data
// is not TOML or the encoder cannot write what was decoded.
func reencode(data []byte) ([]byte, bool) {
	var raw map[string]any
	if _, err := toml.Decode(string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), &raw); err != nil {
		return nil, false
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(raw); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// render writes the top-level keys, [redis], [ui], [scan] and the [[counter]] families of cfg as a
// config file, every setting spelt out.
func render(cfg *Config) ([]byte, error) {
	redis := map[string]any{"allow_writes": cfg.Redis.AllowWrites}
	for key, v := range map[string]string{"username": cfg.Redis.Username, "password_env": cfg.Redis.PasswordEnv,
		"name": cfg.Redis.Name, "tls_ca_file": cfg.Redis.TLS.CA, "tls_cert_file": cfg.Redis.TLS.Cert, "tls_key_file": cfg.Redis.TLS.Key} {
		if v != "" {
			redis[key] = v
		}
	}
	if len(cfg.Redis.Addrs) > 0 {
		redis["addrs"] = cfg.Redis.Addrs
	}
	var counters []map[string]any
	for _, fam := range cfg.Counters {
		c := map[string]any{"name": fam.Name(), "pattern": fam.Pattern().String()}
		for _, g := range fam.Granularities() {
			wf, _ := fam.Format(g)
			c[g.String()+"_format"], c[g.String()+"_retention"] = wf.String(), fam.Retention(g).String()
		}
		if loc := fam.Location(); loc != nil {
			c["timezone"] = loc.String()
		}
		if ex := fam.Exclude().Strings(); len(ex) > 0 {
			c["exclude"] = ex
		}
		counters = append(counters, c)
	}
	doc := map[string]any{
		"timezone": cfg.TimezoneName, "redis": redis,
		"ui":   map[string]any{"refresh": cfg.UI.Refresh.String(), "theme": cfg.UI.Theme},
		"scan": map[string]any{"count": cfg.Scan.Count, "keys_per_second": cfg.Scan.KeysPerSecond, "max_call": cfg.Scan.MaxCall.String(), "live_sample": cfg.Scan.LiveSample},
	}
	if len(counters) > 0 {
		doc["counter"] = counters
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return nil, fmt.Errorf("rendering %+v: %v", doc, err)
	}
	return b.Bytes(), nil
}

// summaryOf is summary, or "nil".
func summaryOf(cfg *Config) string {
	if cfg == nil {
		return "nil"
	}
	return summary(cfg)
}

// summary writes what a loaded config means, one setting a line, to compare two loads.
func summary(cfg *Config) string {
	var b strings.Builder
	r := cfg.Redis
	fmt.Fprintf(&b, "timezone %q %v\nredis %q user %q password_env %q name %q tls %+v writes %v\nui %v %q\nscan %+v\n",
		cfg.TimezoneName, cfg.Timezone, r.Addrs, r.Username, r.PasswordEnv, r.Name, r.TLS, r.AllowWrites, cfg.UI.Refresh, cfg.UI.Theme, cfg.Scan)
	for _, fam := range cfg.Counters {
		fmt.Fprintf(&b, "counter %s\n", family(fam))
	}
	s := cfg.Structures
	for _, u := range s.Uniques {
		fmt.Fprintf(&b, "unique %v %s\n", u.Kind, family(u.Family))
	}
	for _, q := range s.DelayQueues {
		fmt.Fprintf(&b, "delay_queue %q %q %s %v %s %q\n", q.Name, q.Key, pattern(q.Pattern), q.Unit, q.InFlight, q.Exclude.Strings())
	}
	for _, q := range s.ListQueues {
		fmt.Fprintf(&b, "list_queue %q %q %s %s %q\n", q.Name, q.Key, pattern(q.Pattern), q.Processing, q.Exclude.Strings())
	}
	for _, l := range s.Limiters {
		fmt.Fprintf(&b, "limiter %+v %s %q %v %d\n", l.LimiterSpec, pattern(l.Pattern), l.Exclude.Strings(), l.Layout, l.Burst)
	}
	for _, l := range s.Locks {
		fmt.Fprintf(&b, "lock %q %s %q\n", l.Name, pattern(l.Pattern), l.Exclude.Strings())
	}
	for _, j := range s.JobQueues {
		fmt.Fprintf(&b, "job_queue %q %+v %q %q\n", j.Name, j.Source, j.Queues.Strings(), j.Exclude.Strings())
	}
	for _, p := range cfg.Profiles {
		fmt.Fprintf(&b, "profile %q %+v\n", p.Name, p.Entries)
	}
	var warnings []string
	for _, w := range cfg.Warnings {
		warnings = append(warnings, w.Key+": "+w.Msg)
	}
	slices.Sort(warnings)
	fmt.Fprintf(&b, "warnings %q\n", warnings)
	return b.String()
}

// family writes what a counter, unique or bitmap family is.
func family(f *store.Family) string {
	s := fmt.Sprintf("%q %s", f.Name(), pattern(f.Pattern()))
	for _, g := range f.Granularities() {
		wf, _ := f.Format(g)
		s += fmt.Sprintf(" %s %q %v", g, wf, f.Retention(g))
	}
	zone := "-"
	if f.Location() != nil {
		zone = f.Location().String()
	}
	return s + fmt.Sprintf(" zone %s exclude %q", zone, f.Exclude().Strings())
}

func pattern(p *store.Pattern) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%q", p.String())
}
