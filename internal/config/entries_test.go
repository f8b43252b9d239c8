package config

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestParseEntriesInTheContextOfTheConfig: entries added to a config in use are cut in its time
// zone, and a name it already gives an entry of the same table is refused with the entry's line.
func TestParseEntriesInTheContextOfTheConfig(t *testing.T) {
	shipped := strings.Replace(string(redistest.Shipped(t)), "\ntimezone = \"Local\"\n", "\ntimezone = \"Asia/Shanghai\"\n", 1)
	cfg, err := Parse("config.toml", []byte(shipped), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := cfg.ParseEntries("session", []byte(`[[counter]]
name = "hits"
pattern = "hits:<page>:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"

[[counter]]
name = "hits_utc"
pattern = "hits_utc:<page>:<window>"
day_format = "yyyyMMdd"
day_retention = "30d"
timezone = "UTC"

[[lock]]
name = "mutex"
pattern = "mutex:<job>"

[[delay_queue]]
name = "jobs" # a lock is called jobs; a delay queue may be
key = "delay:jobs"
inflight = ""
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Counters) != 2 || e.Counters[0].Name() != "hits" || len(e.Structures.Locks) != 1 || len(e.Structures.DelayQueues) != 1 {
		t.Fatalf("entries %+v", e)
	}
	if got := e.Counters[0].Zone(nil).String(); got != "Asia/Shanghai" {
		t.Errorf("hits is cut in %s, want the config's Asia/Shanghai", got)
	}
	if got := e.Counters[1].Zone(nil).String(); got != "UTC" {
		t.Errorf("hits_utc is cut in %s, want its own UTC", got)
	}
	all := cfg.WithEntries(e)
	if len(all.Counters) != len(cfg.Counters)+2 || len(all.Structures.Locks) != len(cfg.Structures.Locks)+1 {
		t.Fatalf("WithEntries: %d counters, %d locks", len(all.Counters), len(all.Structures.Locks))
	}
	if _, err := all.ParseEntries("session", []byte("[[lock]]\nname = \"mutex\"\npattern = \"m2:<x>\"\n")); err == nil {
		t.Error("a name added before is not taken in the config that holds it")
	}

	for _, c := range []struct{ entry, want string }{
		{"[[counter]]\nname = \"flow\"\npattern = \"f2:<a>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n",
			`session:2: counter.name: the config in use already has a [[counter]] named "flow"`},
		{"\n[[bitmap]]\nname = \"page_uv\"\npattern = \"b:<a>:<window>\"\nday_format = \"yyyyMMdd\"\nday_retention = \"30d\"\n",
			`session:3: bitmap.name: the config in use already has a [[bitmap]] named "page_uv"`},
		{"[[lock]]\nname = \"jobs\"\npattern = \"l2:<id>\"\n", `session:2: lock.name: the config in use already has a [[lock]] named "jobs"`},
		{"[redis]\naddrs = [\"10.0.0.1:6379\"]\n", "session:1: redis: not an entry"},
		{"[[counter]]\nname = \"x\"\npattern = \"x:<a>:<window>\"\nhour_format = \"yyyyMMddHH\"\n", "session:4: counter.hour_format: hour windows need hour_retention"},
		{"[[counter]\n", "session:2: expected end of table array name"},
	} {
		_, err := cfg.ParseEntries("session", []byte(c.entry))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s…", c.entry, err, c.want)
		}
	}
}

// Entries added to a running console (a file the operator names, a proposal) are held to the
// same bounds as a config file: a byte order mark is dropped, and an oversize or deeply nested
// text is refused before it is decoded.
func TestParseEntriesKeepsTheFileBounds(t *testing.T) {
	cfg, err := Parse("config.toml", redistest.Shipped(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	entry := "[[counter]]\nname = \"hits\"\npattern = \"hits:<page>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n"
	if _, err := cfg.ParseEntries("bom", append([]byte("\xef\xbb\xbf"), entry...)); err != nil {
		t.Errorf("an entry after a byte order mark: %v", err)
	}
	huge := entry + "# " + strings.Repeat("x", MaxFileSize) + "\n"
	if _, err := cfg.ParseEntries("huge", []byte(huge)); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("an entry text over 1 MiB: %v", err)
	}
	deep := "x = " + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "\n"
	if _, err := cfg.ParseEntries("deep", []byte(deep)); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("an entry text nested 1,000 deep: %v", err)
	}
}
