package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/store"
)

// A timezone may be a fixed offset from UTC, at the top and per family, bounded to the zones in
// use, with the line of a bad one; entries added to a session take theirs too.
func TestFixedOffsetZones(t *testing.T) {
	cfg, err := Parse("c.toml", src(slices.Concat(
		[]string{`timezone = "+08:00"`},
		counter("a"),
		counter("b"), []string{`timezone = "-05:30"`},
		counter("c"), []string{`timezone = "+00:00"`},
		counter("d"), []string{`timezone = "UTC"`},
	)...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TimezoneName != "+08:00" || cfg.Timezone.String() != "+08:00" {
		t.Errorf("top-level zone %q %v", cfg.TimezoneName, cfg.Timezone)
	}
	at := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	want := map[string]time.Duration{"a": 8 * time.Hour, "b": -(5*time.Hour + 30*time.Minute), "c": 0, "d": 0}
	for _, f := range cfg.Counters {
		_, off := at.In(f.Location()).Zone()
		if time.Duration(off)*time.Second != want[f.Name()] {
			t.Errorf("%s: offset %ds, want %v", f.Name(), off, want[f.Name()])
		}
	}
	// The window a UTC+8 writer names 2026112620 is the current hour at 12:34 UTC.
	if w := store.WindowAt(store.Hour, at, cfg.Counters[0].Location()); w.Start.In(cfg.Counters[0].Location()).Format("2006010215") != "2026112620" {
		t.Errorf("current hour at +08:00 starts %v", w.Start)
	}
	for _, c := range []struct{ zone, want string }{
		{"+14:01", `c.toml:6: counter.timezone: bad UTC offset "+14:01": +14:01 is more than 14 hours from UTC`},
		{"-15:00", `c.toml:6: counter.timezone: bad UTC offset "-15:00"`},
		{"+05:60", `c.toml:6: counter.timezone: bad UTC offset "+05:60": minutes 60 past 59`},
		{"+8:00", `c.toml:6: counter.timezone: unknown time zone "+8:00"`},
		{"+08:0x", `c.toml:6: counter.timezone: unknown time zone "+08:0x"`},
		{"08:00", `c.toml:6: counter.timezone: unknown time zone "08:00"`},
	} {
		_, err := Parse("c.toml", src(slices.Concat(counter("a"), []string{`timezone = "` + c.zone + `"`})...), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.zone, err, c.want)
		}
	}
	if _, err := Parse("c.toml", src(`timezone = "+14:00"`, `[ui]`, `refresh = "1s"`), nil); err != nil {
		t.Errorf("+14:00 refused: %v", err)
	}

	// An entry discover proposes with the zone its data shows is read in that zone, not the
	// session's.
	en := discover.Entry{Table: "counter", Name: "pv", Pattern: "pv:<site>:<window>", HourFormat: "yyyyMMddHH", HourRetention: "48h", Timezone: "+08:00"}
	e, err := cfg.ParseEntries("entry", []byte(en.TOML()))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Counters[0].Location().String(); got != "+08:00" {
		t.Errorf("the entry's zone %s, want +08:00", got)
	}
	en.Timezone = "UTC"
	if e, err = cfg.ParseEntries("entry", []byte(en.TOML())); err != nil || e.Counters[0].Location().String() != "UTC" {
		t.Errorf("the entry's zone: %v", err)
	}
}

// The host's zone is taken by name only when the name loads and agrees with the zone in use.
func TestHostZoneNamed(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	for _, name := range []string{"", "Mars/Olympus", "/etc/localtime", "Local"} {
		if z := hostZoneNamed(name, now); z != nil {
			t.Errorf("%q: %v, want none", name, z)
		}
	}
	_, off := now.In(time.Local).Zone()
	for _, name := range []string{"Asia/Shanghai", "/usr/share/zoneinfo/Asia/Shanghai", "America/New_York", "UTC"} {
		loc, _ := time.LoadLocation(strings.TrimPrefix(name, "/usr/share/zoneinfo/"))
		_, o1 := now.In(loc).Zone()
		_, o2 := now.AddDate(0, 6, 0).In(loc).Zone()
		_, l2 := now.AddDate(0, 6, 0).In(time.Local).Zone()
		z := hostZoneNamed(name, now)
		if agrees := o1 == off && o2 == l2; agrees != (z != nil) || z != nil && z.String() != loc.String() {
			t.Errorf("%q: %v (agrees with Local: %v)", name, z, agrees)
		}
	}
}
