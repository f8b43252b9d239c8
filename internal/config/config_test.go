package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// src joins lines with newlines, so a fixture's line N is its Nth argument.
func src(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// TestShippedConfig holds the built-in config, and the same file parsed and loaded from disk, to
// what a reader of config.toml's text finds in it, written out here by hand.
func TestShippedConfig(t *testing.T) {
	parsed, err := Parse("config.toml", redistest.Shipped(t), nil)
	if err != nil {
		t.Fatalf("shipped config.toml: %v", err)
	}
	t.Chdir(filepath.Join("..", "..")) // the shipped file stands at the module's root
	loaded, err := Load("config.toml", nil)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	def := Builtin(redistest.Shipped(t))
	if def.Path != "" || parsed.Path != "config.toml" || loaded.Path != "config.toml" {
		t.Errorf("paths: default %q, parsed %q, loaded %q", def.Path, parsed.Path, loaded.Path)
	}
	if string(def.Builtin) != string(redistest.Shipped(t)) || parsed.Builtin != nil || loaded.Builtin != nil {
		t.Error("the default does not carry the text it was parsed from, or a file's config carries a text")
	}
	if Builtin(redistest.Shipped(t)) == Builtin(redistest.Shipped(t)) || Builtin(redistest.Shipped(t)).Counters[0] == Builtin(redistest.Shipped(t)).Counters[0] {
		t.Error("DefaultConfig shares state between calls")
	}
	for name, cfg := range map[string]*Config{"built in": def, "parsed": parsed, "loaded": loaded} {
		t.Run(name, func(t *testing.T) { checkShipped(t, cfg) })
	}
}

// checkShipped checks cfg against the settings config.toml's text spells out.
func checkShipped(t *testing.T, cfg *Config) {
	t.Helper()
	want := Config{
		Redis: RedisConfig{Addrs: []string{}},
		UI:    UIConfig{Refresh: time.Second, Theme: "dark", WaitWarning: time.Minute},
		Scan:  ScanConfig{Count: 1000, KeysPerSecond: 20000, MaxCall: time.Millisecond, LiveSample: 2000, MaxRedisTime: 0.008},

		Timezone: time.Local, TimezoneName: "Local",
	}
	got := *cfg
	got.Path, got.Builtin = "", nil
	got.Counters, got.file, got.patternLine = nil, "", nil // bookkeeping for later errors
	st, profiles := got.Structures, got.Profiles
	got.Structures, got.Profiles = scanner.Structures{}, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shipped settings = %+v, want %+v", got, want)
	}
	if dq := st.DelayQueues; len(dq) != 1 || dq[0].Name != "orders" || dq[0].Key != "delay:orders" || dq[0].Unit != store.AutoUnit || dq[0].Pattern != nil ||
		len(st.ListQueues) != 1 || st.ListQueues[0].Name != "emails" || st.ListQueues[0].Key != "queue:emails" ||
		len(st.Limiters) != 1 || st.Limiters[0].LimiterSpec != (store.LimiterSpec{Name: "api", Pattern: "rl:api:<user>", Kind: store.Sliding, Window: time.Minute, Limit: 100}) ||
		len(st.Locks) != 1 || st.Locks[0].Pattern.String() != "lock:job:<id>" || len(st.JobQueues) != 0 ||
		len(st.Blooms) != 1 || st.Blooms[0].Name != "lookups" || st.Blooms[0].Pattern.String() != "bf:<table>" {
		t.Errorf("shipped structures = %+v", st)
	}
	type family struct {
		name, pattern         string
		hourFormat, dayFormat string // "" for none
		hourKeep, dayKeep     time.Duration
	}
	describe := func(f *store.Family) family {
		d := family{name: f.Name(), pattern: f.Pattern().String(), hourKeep: f.Retention(store.Hour), dayKeep: f.Retention(store.Day)}
		if wf, ok := f.Format(store.Hour); ok {
			d.hourFormat = wf.String()
		}
		if wf, ok := f.Format(store.Day); ok {
			d.dayFormat = wf.String()
		}
		if f.Location() != time.Local {
			t.Errorf("family %s's windows are cut in %v, want Local", f.Name(), f.Location())
		}
		return d
	}
	var counters []family
	for _, f := range cfg.Counters {
		counters = append(counters, describe(f))
	}
	const day = 24 * time.Hour
	if want := []family{
		{"flow", "flow:count:<app>:<device>:<ip>:<window>", "yyyyMMddHH", "", 48 * time.Hour, 0},
		{"ad_revenue", "{<channel>:<ad>}:<window>", "yyyyMMddHH", "yyyyMMdd", 48 * time.Hour, 30 * day},
		{"api_calls", "api:calls:{<tenant>:<endpoint>}:<window>", "yyyyMMddHH", "yyyyMMdd", 7 * day, 90 * day},
	}; !slices.Equal(counters, want) {
		t.Errorf("counter families = %+v\nwant %+v", counters, want)
	}
	var uniques []family
	var kinds []store.UniqueKind
	for _, u := range st.Uniques {
		uniques, kinds = append(uniques, describe(u.Family)), append(kinds, u.Kind)
	}
	if want := []family{
		{"page_uv", "uv:{<page>}:<window>", "", "yyyyMMdd", 0, 90 * day},
		{"dau", "dau:{<app>}:<window>", "", "yyyyMMdd", 0, 90 * day},
	}; !slices.Equal(uniques, want) || !slices.Equal(kinds, []store.UniqueKind{store.HyperLogLog, store.Bitmap}) {
		t.Errorf("unique families = %+v of kinds %v\nwant %+v, a HyperLogLog and a bitmap", uniques, kinds, want)
	}
	// The families with day windows tag their dims, so a cluster keeps a family's hour and day
	// keys in one slot; flow has hour windows only.
	for _, f := range cfg.Counters[1:] {
		if !f.Pattern().SharesSlot() {
			t.Errorf("%s's pattern %s does not keep its windows in one slot", f.Name(), f.Pattern())
		}
	}
	if want := []ProfileEntry{
		{"counter", "ad_revenue", 2000}, {"counter", "flow", 500}, {"delay_queue", "orders", 100}, {"list_queue", "emails", 50},
		{"limiter", "api", 300}, {"unique", "page_uv", 500}, {"bitmap", "dau", 500}, {"lock", "jobs", 10}, {"bloom", "lookups", 300},
	}; len(profiles) != 1 || profiles[0].Name != "steady" || !sameEntries(profiles[0].Entries, want) {
		t.Errorf("shipped profiles = %+v, want one named steady of %v", profiles, want)
	}
}

// sameEntries says a and b hold the same entries, in any order.
func sameEntries(a, b []ProfileEntry) bool {
	key := func(e ProfileEntry) string { return e.Kind + "/" + e.Name }
	cmp := func(x, y ProfileEntry) int { return strings.Compare(key(x), key(y)) }
	return slices.Equal(slices.SortedFunc(slices.Values(a), cmp), slices.SortedFunc(slices.Values(b), cmp))
}

// The shipped families must stay valid when an operator points the file at a cluster.
func TestShippedFamiliesAreClusterSafe(t *testing.T) {
	text := strings.Replace(string(redistest.Shipped(t)), "\naddrs = []\n", "\naddrs = [\"10.0.0.1:7000\", \"10.0.0.2:7000\"]\n", 1)
	if text == string(redistest.Shipped(t)) {
		t.Fatal("config.toml no longer has an addrs = [] line")
	}
	if _, err := Parse("config.toml", []byte(text), nil); err != nil {
		t.Fatal(err)
	}
}

// Every key the loader accepts is documented in a comment of the shipped file.
func TestShippedConfigDocumentsEveryKey(t *testing.T) {
	for _, key := range []string{
		"addrs", "username", "password_env", "allow_writes",
		"refresh", "theme", "timezone",
		"count", "keys_per_second", "max_call", "live_sample", "max_redis_time",
		"name", "pattern", "hour_format", "day_format", "hour_retention", "day_retention",
	} {
		documented := regexp.MustCompile(`(?m)^#\s+` + key + `\b`)
		if !documented.Match(redistest.Shipped(t)) {
			t.Errorf("config.toml has no comment line starting with %s", key)
		}
	}
}

func TestDefaultsForAbsentKeys(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty tables": src("[redis]", "[ui]", "[scan]"),
		"only a zone":  src(`timezone = "Local"`),
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("c.toml", data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Redis.Addrs) != 0 || cfg.Redis.AllowWrites || cfg.Redis.Username != "" || cfg.Redis.PasswordEnv != "" {
				t.Errorf("redis = %+v", cfg.Redis)
			}
			wantUI := UIConfig{Refresh: time.Second, Theme: "dark", WaitWarning: time.Minute}
			if cfg.UI != wantUI || cfg.Timezone != time.Local || cfg.TimezoneName != "Local" || len(cfg.Warnings) != 0 {
				t.Errorf("ui = %+v, want %+v; timezone %v %q; warnings %v", cfg.UI, wantUI, cfg.Timezone, cfg.TimezoneName, cfg.Warnings)
			}
			if cfg.Scan != (ScanConfig{Count: 1000, KeysPerSecond: 20000, MaxCall: time.Millisecond, LiveSample: 2000, MaxRedisTime: 0.008}) {
				t.Errorf("scan = %+v", cfg.Scan)
			}
			if len(cfg.Counters) != 0 || cfg.Path != "c.toml" {
				t.Errorf("counters %d, path %q", len(cfg.Counters), cfg.Path)
			}
		})
	}
}

func TestParseSettings(t *testing.T) {
	cfg, err := Parse("c.toml", src(
		`[redis]`,
		`addrs = [`,
		`  "10.0.0.1:7000",                      # a comment`,
		`  "rediss://user@redis.example:6380/0",`,
		`]`,
		`username = "ops"`,
		`password_env = "HG_PASS"`,
		`allow_writes = true`,
		`[ui]`,
		`refresh = "1500ms"`,
		`theme = "none"`,
		`timezone = "Asia/Shanghai"`,
		`[scan]`,
		`count = 10`,
		`keys_per_second = 1`,
		`max_call = "250us"`,
		`live_sample = 0`,
		`max_redis_time = " 2.5% "`,
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantRedis := RedisConfig{
		Addrs:    []string{"10.0.0.1:7000", "rediss://user@redis.example:6380/0"},
		Username: "ops", PasswordEnv: "HG_PASS", AllowWrites: true,
	}
	cfg.Redis.passwordEnvAt = Error{} // where password_env was set: for its error, below
	if !reflect.DeepEqual(cfg.Redis, wantRedis) {
		t.Errorf("redis = %+v, want %+v", cfg.Redis, wantRedis)
	}
	if cfg.UI.Refresh != 1500*time.Millisecond || cfg.UI.Theme != "none" ||
		cfg.TimezoneName != "Asia/Shanghai" || cfg.Timezone.String() != "Asia/Shanghai" {
		t.Errorf("ui = %+v, timezone %v", cfg.UI, cfg.Timezone)
	}
	// [ui] timezone is the setting's old place: it still works, with a warning naming the new.
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Error(), "c.toml:12: ui.timezone: has moved: write timezone = \"Asia/Shanghai\" at the top") {
		t.Errorf("warnings = %v", cfg.Warnings)
	}
	if cfg.Scan != (ScanConfig{Count: 10, KeysPerSecond: 1, MaxCall: 250 * time.Microsecond, MaxRedisTime: 0.025}) || cfg.SweepOptions(false).LiveSample != -1 {
		t.Errorf("scan = %+v, live sample %d", cfg.Scan, cfg.SweepOptions(false).LiveSample) // 0: the top keys only
	}
}

// counter is a valid hour-only [[counter]] table, four lines long, for fixtures to build on.
func counter(name string) []string {
	return []string{
		`[[counter]]`,
		`name = "` + name + `"`,
		`pattern = "` + name + `:<id>:<window>"`,
		`hour_format = "yyyyMMddHH"`,
		`hour_retention = "48h"`,
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		line int
		key  string
		msg  string // substring of the message
	}{
		{"syntax error keeps the parser's line", src(`[ui]`, `theme = "dark`, `[scan]`), 2, "", ""},
		{"duplicate key is a syntax error", src(`[ui]`, `theme = "dark"`, `theme = "light"`), 3, "", ""},

		{"unknown top-level table", src(`[ui]`, `theme = "dark"`, `[redis_cluster]`, `addrs = []`), 3, "redis_cluster", "unknown table"},
		{"unknown top-level key", src(`# c`, `verbose = true`), 2, "verbose", "unknown"},
		{"unknown key in [ui]", src(`[ui]`, `theme = "dark"`, `colour = "red"`), 3, "ui.colour", "[ui] takes refresh, theme, timezone"},
		{"unknown key in [scan]", src(`[scan]`, `cont = 5`), 2, "scan.cont", "unknown key"},
		{"unknown key in [redis]", src(`[redis]`, `addr = "127.0.0.1:6379"`), 2, "redis.addr", "addrs"},
		{"unknown key in the second counter", src(slices.Concat(counter("a"), counter("b"), []string{`colour = "red"`})...), 11, "counter.colour", "[[counter]] takes"},
		{"unknown subtable of a counter", src(slices.Concat(counter("a"), counter("b"), []string{`[counter.extra]`, `x = 1`})...), 11, "counter.extra", "unknown key"},
		{"password in the file", src(`[redis]`, `addrs = []`, `password = "hunter2"`), 3, "redis.password", "set REDISCLI_AUTH, or name another variable with password_env"},

		{"string for a duration", src(`[ui]`, `refresh = 5`), 2, "ui.refresh", `want a duration string such as "48h" or "30d", got integer 5`},
		{"string for addrs", src(`[redis]`, `addrs = "127.0.0.1:6379"`), 2, "redis.addrs", "want an array of strings"},
		{"number in addrs", src(`[redis]`, `addrs = [`, `  "127.0.0.1:6379",`, `  6380,`, `]`), 4, "redis.addrs", "want a string, got integer 6380"},
		{"string for a bool", src(`[redis]`, `allow_writes = "yes"`), 2, "redis.allow_writes", "want true or false"},
		{"string for an integer", src(`[scan]`, `count = "10"`), 2, "scan.count", `want an integer, got string "10"`},
		{"float for an integer", src(`[scan]`, `keys_per_second = 1.5`), 2, "scan.keys_per_second", "got float 1.5"},
		{"array of tables for a table", src(`[[redis]]`, `addrs = []`), 1, "redis", "want a [redis] table, got array of tables"},
		{"value for a table", src(`ui = "dark"`), 1, "ui", "want a [ui] table"},
		{"table for [[counter]]", src(`[counter]`, `name = "a"`), 1, "counter", "want [[counter]] tables, got table"},
		{"integer for a name", src(`[[counter]]`, `name = 5`, `pattern = "a:<window>"`, `hour_format = "yyyyMMddHH"`, `hour_retention = "1h"`), 2, "counter.name", "want a string"},
		{"inline array of counters points at the element", src(
			`counter = [`,
			`  {name = "a", pattern = "a:<window>", hour_format = "yyyyMMddHH", hour_retention = "1h"},`,
			`  {name = "b", pattern = "b:<window>", hour_format = "yyyyMMddHH", hour_retention = "1x"},`,
			`]`,
		), 3, "counter.hour_retention", "bad duration"},
		{"inline table falls back to its key", src(`# c`, `ui = { theme = "pink" }`), 2, "ui.theme", "unknown theme"},

		{"bad duration in the second counter", src(slices.Concat(counter("a"), counter("b")[:4], []string{`hour_retention = "48x"`})...), 10, "counter.hour_retention", `bad duration "48x" (use e.g. 48h, 30d)`},
		{"bad day duration", src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "1.5d"`), 5, "counter.day_retention", `bad duration "1.5d"`},
		{"zero retention", src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `hour_retention = "0s"`, `hour_format = "yyyyMMddHH"`), 4, "counter.hour_retention", `must be positive, got "0s"`},
		{"negative retention", src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "-1d"`), 5, "counter.day_retention", `must be positive, got "-1d"`},
		{"format without retention", src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `hour_format = "yyyyMMddHH"`), 4, "counter.hour_format", "need hour_retention"},
		{"retention without format", src(slices.Concat(counter("a"), []string{`day_retention = "30d"`})...), 6, "counter.day_retention", "set without day_format"},
		{"neither format", src(`# c`, `[[counter]]`, `name = "a"`, `pattern = "a:<window>"`), 2, "counter.hour_format", "a counter family needs hour_format, day_format or both"},
		{"missing name", src(`[[counter]]`, `pattern = "a:<window>"`, `hour_format = "yyyyMMddHH"`, `hour_retention = "1h"`), 1, "counter.name", "missing"},
		{"missing pattern", src(slices.Concat(counter("a"), []string{`[[counter]]`, `name = "b"`, `day_format = "yyyyMMdd"`, `day_retention = "1d"`})...), 6, "counter.pattern", "missing"},
		{"duplicate name", src(slices.Concat(counter("a"), counter("a"))...), 7, "counter.name", `duplicate family name "a" (first declared at line 2)`},
		{"pattern without <window>", src(`[[counter]]`, `name = "a"`, `pattern = "a:<id>:<hour>"`, `hour_format = "yyyyMMddHH"`, `hour_retention = "1h"`), 3, "counter.pattern", "no <window> placeholder"},
		{"bad pattern syntax", src(`[[counter]]`, `name = "a"`, `hour_format = "yyyyMMddHH"`, `pattern = "a:<id:<window>"`, `hour_retention = "1h"`), 4, "counter.pattern", "placeholder"},
		{"hour format without HH", src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `hour_format = "yyyyMMdd"`, `hour_retention = "1h"`), 4, "counter.hour_format", ""},

		{"delay queue without key", src(`[[delay_queue]]`, `name = "q"`, `score_unit = "ms"`), 1, "delay_queue.key", "missing: every [[delay_queue]] needs a key"},
		{"delay queue with key and pattern", src(`[[delay_queue]]`, `name = "q"`, `key = "q"`, `pattern = "q:<topic>"`), 4, "delay_queue.pattern", "not both"},
		{"delay queue bad unit", src(`[[delay_queue]]`, `name = "q"`, `key = "q"`, `score_unit = "min"`), 4, "delay_queue.score_unit", `want "ms", "s", "us", "bullmq" or "auto"`},
		{"inflight template without <key> on a pattern", src(`[[delay_queue]]`, `name = "q"`, `pattern = "q:<t>"`, `inflight = "wip"`), 4, "delay_queue.inflight", "<key>"},
		{"bad exclude glob", src(`[[list_queue]]`, `name = "q"`, `pattern = "q:<t>"`, `exclude = ["q:[x"]`), 4, "list_queue.exclude", "unclosed"},
		{"exclude not a list", src(slices.Concat(counter("a"), []string{`exclude = "a:*"`})...), 6, "counter.exclude", "want an array of strings"},
		{"job queue without layout", src(`[[job_queue]]`, `name = "j"`), 1, "job_queue.layout", "missing"},
		{"job queue unknown layout", src(`[[job_queue]]`, `name = "j"`, `layout = "resque"`), 3, "job_queue.layout", "want sidekiq, bullmq, rq, celery or asynq"},
		{"job queue unknown key", src(`[[job_queue]]`, `name = "j"`, `layout = "rq"`, `namespace = "x"`), 4, "job_queue.namespace", "[[job_queue]] takes"},
		{"dead bound on a library without one", src(`[[job_queue]]`, `name = "j"`, `layout = "rq"`, `dead_max_jobs = 5`), 4, "job_queue.dead_max_jobs", "Sidekiq's option"},
		{"no dead jobs kept", src(`[[job_queue]]`, `name = "j"`, `layout = "sidekiq"`, `dead_max_jobs = 0`), 4, "job_queue.dead_max_jobs", "at least 1"},
		{"absurd dead timeout", src(`[[job_queue]]`, `name = "j"`, `layout = "sidekiq"`, `dead_timeout = "40000d"`), 4, "job_queue.dead_timeout", "at most"},
		{"duplicate delay queue", src(`[[delay_queue]]`, `name = "q"`, `key = "a"`, `[[delay_queue]]`, `name = "q"`, `key = "b"`), 5, "delay_queue.name", `duplicate [[delay_queue]] name "q" (first declared at line 2)`},
		{"unknown key in a list queue", src(`[[list_queue]]`, `name = "q"`, `key = "a"`, `visibility = "1m"`), 4, "list_queue.visibility", "[[list_queue]] takes"},
		{"limiter with a window placeholder", src(`[[limiter]]`, `name = "l"`, `pattern = "rl:<user>:<window>"`, `window = "1m"`, `limit = 5`), 3, "limiter.pattern", "not windowed"},
		{"limiter bad kind", src(`[[limiter]]`, `name = "l"`, `pattern = "rl:<user>"`, `kind = "leaky"`, `window = "1m"`, `limit = 5`), 4, "limiter.kind", `want "sliding" or "fixed"`},
		{"limiter without limit", src(`[[limiter]]`, `name = "l"`, `pattern = "rl:<user>"`, `window = "1m"`), 1, "limiter.limit", "missing"},
		{"limiter zero limit", src(`[[limiter]]`, `name = "l"`, `pattern = "rl:<user>"`, `window = "1m"`, `limit = 0`), 5, "limiter.limit", "must be at least 1"},
		{"unique without window", src(`[[unique]]`, `name = "uv"`, `pattern = "uv:<page>"`, `day_format = "yyyyMMdd"`, `day_retention = "30d"`), 3, "unique.pattern", "no <window>"},
		{"bitmap without retention", src(`[[bitmap]]`, `name = "dau"`, `pattern = "dau:<window>"`, `day_format = "yyyyMMdd"`), 4, "bitmap.day_format", "need day_retention"},
		{"lock without pattern", src(`[[lock]]`, `name = "l"`), 1, "lock.pattern", "missing: every [[lock]] needs a pattern"},
		{"profile naming a missing structure", src(slices.Concat(counter("a"), []string{`[[profile]]`, `name = "p"`, `counter = { a = 10, b = 5 }`})...), 8, "profile.counter.b", `no counter named "b"`},
		{"profile with a zero rate", src(slices.Concat(counter("a"), []string{`[[profile]]`, `name = "p"`, `counter = { a = 0 }`})...), 8, "profile.counter.a", "above zero"},
		{"profile named demo", src(slices.Concat(counter("a"), []string{`[[profile]]`, `name = "demo"`, `counter = { a = 1 }`})...), 7, "profile.name", "demo is built in"},

		{"bad timezone", src(`[ui]`, `timezone = "Mars/Olympus"`), 2, "ui.timezone", `unknown time zone "Mars/Olympus"`},
		{"empty timezone", src(`[ui]`, `timezone = ""`), 2, "ui.timezone", "unknown time zone"},
		{"bad theme", src(`[ui]`, `theme = "solarized"`), 2, "ui.theme", "use dark, light, none"},
		{"refresh too fast", src(`[ui]`, `refresh = "100ms"`), 2, "ui.refresh", `must be at least 250ms, got "100ms"`},
		{"refresh zero", src(`[ui]`, `refresh = "0"`), 2, "ui.refresh", "must be at least 250ms"},
		{"scan count zero", src(`[scan]`, `count = 0`), 2, "scan.count", "must be at least 1, got 0"},
		{"keys per second negative", src(`[scan]`, `count = 5`, `keys_per_second = -1`), 3, "scan.keys_per_second", "must be at least 1"},

		{"addr without port", src(`[redis]`, `addrs = ["localhost"]`), 2, "redis.addrs", `bad addr "localhost" (want host:port`},
		{"addr with a bad port", src(`[redis]`, `addrs = ["localhost:redis"]`), 2, "redis.addrs", `port "redis"`},
		{"addr without host", src(`[redis]`, `addrs = [":6379"]`), 2, "redis.addrs", "want host:port"},
		{"addr with another scheme", src(`[redis]`, `addrs = ["http://localhost:6379"]`), 2, "redis.addrs", "redis://, rediss:// or redis-sentinel://"},
		{"unparseable URL", src(`[redis]`, `addrs = ["redis://localhost:6379/notadb"]`), 2, "redis.addrs", "bad addr"},
		{"bad addr on its own line", src(`[redis]`, `addrs = [`, `  "10.0.0.1:7000",`, `  "10.0.0.2",`, `  "10.0.0.3:7000",`, `]`), 4, "redis.addrs", `bad addr "10.0.0.2"`},
		{"bad password_env", src(`[redis]`, `password_env = "$HG_PASS"`), 2, "redis.password_env", "not an environment variable name"},

		{"first problem in the file wins", src(`[ui]`, `theme = "x"`, `refresh = "1ms"`, `[scan]`, `count = 0`), 2, "ui.theme", ""},
		{"multi-line string does not move lines", src(
			`[ui]`,
			`theme = "dark"`,
			`[[counter]]`,
			`name = """`,
			`[[counter]]`,
			`name = "x"`,
			`"""`,
			`pattern = "a:<window>"`,
			`hour_format = "yyyyMMddHH"`,
			`hour_retention = '''`,
			`48x'''`,
		), 10, "counter.hour_retention", "bad duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("config.toml", tt.src, nil)
			if err == nil {
				t.Fatalf("no error; config %+v", cfg)
			}
			t.Log(err)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *Error", err, err)
			}
			if ce.File != "config.toml" || ce.Line != tt.line || ce.Key != tt.key || !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("got  %v\nwant config.toml:%d: %s: ...%s...", err, tt.line, tt.key, tt.msg)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestSidekiqDeadBounds: a Sidekiq entry's dead_max_jobs and dead_timeout reach its source, and
// an entry without them keeps 0 (Sidekiq's defaults).
func TestSidekiqDeadBounds(t *testing.T) {
	cfg, err := Parse("config.toml", src(`[[job_queue]]`, `name = "a"`, `layout = "sidekiq"`, `dead_max_jobs = 500`, `dead_timeout = "30d"`,
		`[[job_queue]]`, `name = "b"`, `layout = "sidekiq"`, `prefix = "b"`), nil)
	if err != nil {
		t.Fatal(err)
	}
	jq := cfg.Structures.JobQueues
	if len(jq) != 2 || jq[0].Source.DeadMax != 500 || jq[0].Source.DeadTimeout != 30*24*time.Hour || jq[1].Source.DeadMax != 0 || jq[1].Source.DeadTimeout != 0 {
		t.Fatalf("job queues %+v", jq)
	}
}

func TestConfigErrorText(t *testing.T) {
	_, err := Parse("config.toml", src(slices.Concat(counter("a"), counter("b")[:4], []string{`hour_retention = "48x"`})...), nil)
	want := `config.toml:10: counter.hour_retention: bad duration "48x" (use e.g. 48h, 30d)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	cfg, err := Load("testdata/config/split-slots.toml", nil)
	if err != nil {
		t.Fatalf("a family split across slots is for the command to refuse or warn of, not the loader: %v", err)
	}
	if err := cfg.CheckCluster(); err == nil || !strings.HasPrefix(err.Error(), "testdata/config/split-slots.toml:8: counter.pattern: ") ||
		!strings.Contains(err.Error(), `hash tag: pattern = "ad:{<channel>:<ad>}:<window>"`) {
		t.Errorf("cluster check %v does not name the file, the line and the fix", err)
	}
	if _, err := Load("testdata/config/absent.toml", nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestLoadClusterConfig(t *testing.T) {
	cfg, err := Load("testdata/config/cluster.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != "testdata/config/cluster.toml" || len(cfg.Redis.Addrs) != 3 || !cfg.Redis.AllowWrites {
		t.Errorf("cfg = %+v", cfg)
	}
	for _, f := range cfg.Counters {
		if !f.SharesSlot() {
			t.Errorf("family %s splits slots", f.Name())
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"48h", 48 * time.Hour, true},
		{"30d", 30 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"1d30m15s", 24*time.Hour + 30*time.Minute + 15*time.Second, true},
		{"+2d", 48 * time.Hour, true},
		{"-1d", -24 * time.Hour, true},
		{"250ms", 250 * time.Millisecond, true},
		{"1.5h", 90 * time.Minute, true},
		{"0", 0, true},
		{"0d", 0, true},
		{"", 0, false},
		{"d", 0, false},
		{"1.5d", 0, false},
		{"48x", 0, false},
		{"48", 0, false},
		{"1h1d", 0, false},
		{"1d-1h", 0, false},
		{"--1h", 0, false},
		{"1dd", 0, false},
		{"200000d", 0, false},
		{"106751d23h59m", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseDuration(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseDuration(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestPassword(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string // variables to set; the others are unset
		passEnv string
		want    string
		err     bool
	}{
		{"neither", nil, "", "", false},
		{"REDISCLI_AUTH as redis-cli", map[string]string{"REDISCLI_AUTH": "cli"}, "", "cli", false},
		{"password_env wins", map[string]string{"REDISCLI_AUTH": "cli", "HG_PASS": "mine"}, "HG_PASS", "mine", false},
		{"password_env unset is an error", map[string]string{"REDISCLI_AUTH": "cli"}, "HG_PASS", "", true},
		{"password_env set empty is an error", map[string]string{"REDISCLI_AUTH": "cli", "HG_PASS": ""}, "HG_PASS", "", true},
		{"password_env without REDISCLI_AUTH", map[string]string{"HG_PASS": "mine"}, "HG_PASS", "mine", false},
		{"REDISCLI_AUTH unset, password_env unset", nil, "HG_PASS", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"REDISCLI_AUTH", "HG_PASS"} {
				t.Setenv(name, "") // restores the outer value when the test ends
				if v, ok := tt.env[name]; ok {
					t.Setenv(name, v)
				} else {
					os.Unsetenv(name)
				}
			}
			cfg, err := Parse("c.toml", src(`[redis]`, `password_env = "`+tt.passEnv+`"`), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.Redis.Password()
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("Password() = %q, %v; want %q, error %v", got, err, tt.want, tt.err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "c.toml:2: redis.password_env: names HG_PASS, which is ") {
				t.Errorf("Password() error %q does not name the file and line", err)
			}
		})
	}
}

// The fix suggested for a family that splits slots must itself be accepted.
func TestHashTaggedSuggestionSharesSlot(t *testing.T) {
	for _, pattern := range []string{
		"flow:count:<app>:<device>:<ip>:<window>",
		"stats:<window>",
		"<tenant>:<window>",
		"a:<id>-<window>",
		"{<x>:<window>}",
		"<window>:<id>",
	} {
		t.Run(pattern, func(t *testing.T) {
			fixed := hashTagged(pattern)
			f, err := store.NewFamily(store.FamilySpec{
				Name: "x", Pattern: fixed,
				HourFormat: "yyyyMMddHH", HourRetention: time.Hour,
				DayFormat: "yyyyMMdd", DayRetention: time.Hour,
			})
			if err != nil || !f.SharesSlot() {
				t.Errorf("hashTagged(%q) = %q: err %v", pattern, fixed, err)
			}
		})
	}
}

func TestIndexLines(t *testing.T) {
	idx := indexLines(strings.Join([]string{
		`top = 1`,                            // 1
		`[a]`,                                // 2
		`"quoted key" = 'x # not a comment'`, // 3
		`dotted.key = 2`,                     // 4
		`list = [ # items`,                   // 5
		`  [1, 2], { k = "]" },`,             // 6
		`  'three',`,                         // 7
		`]`,                                  // 8
		`text = """`,                         // 9
		`not = "a key" \"""`,                 // 10
		`"""`,                                // 11
		`[[t]]`,                              // 12
		`[ t . sub ]`,                        // 13
		`[[t]] # second`,                     // 14
		`k = 1`,                              // 15
		`[[ 't'.'inner' ]]`,                  // 16
		"crlf = 1\r",                         // 17
	}, "\n"))
	want := map[string]int{
		"top": 1, "a": 2, "a.quoted key": 3, "a.dotted": 4, "a.dotted.key": 4,
		"a.list": 5, "a.list[0]": 6, "a.list[1]": 6, "a.list[2]": 7, "a.text": 9,
		"t": 12, "t[0]": 12, "t[0].sub": 13, "t[1]": 14, "t[1].k": 15,
		"t[1].inner": 16, "t[1].inner[0]": 16, "t[1].inner[0].crlf": 17,
	}
	if !reflect.DeepEqual(map[string]int(idx), want) {
		t.Errorf("index = %v\nwant    %v", idx, want)
	}
	if got := idx.lineOf("t[1].inner[0].missing"); got != 16 {
		t.Errorf("lineOf falls back to %d, want 16", got)
	}
}

// TestClusterErrorsNameTheirPatternLine: a family a cluster cannot write in one script is named
// by its own pattern's line, even when a unique family carries the same name.
func TestClusterErrorsNameTheirPatternLine(t *testing.T) {
	data := src(
		`[[counter]]`,
		`name = "dup"`,
		`pattern = "a:<x>:<window>"`, // line 3: untagged, hour and day keys may part
		`hour_format = "yyyyMMddHH"`,
		`hour_retention = "48h"`,
		`day_format = "yyyyMMdd"`,
		`day_retention = "30d"`,
		`[[unique]]`,
		`name = "dup"`,
		`pattern = "u:{<x>}:<window>"`, // line 10
		`day_format = "yyyyMMdd"`,
		`day_retention = "30d"`,
		`[[unique]]`,
		`name = "uv"`,
		`pattern = "v:<x>:<window>"`, // line 15: untagged, unions cannot read in one command
		`day_format = "yyyyMMdd"`,
		`day_retention = "30d"`,
	)
	cfg, err := Parse("dup.toml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ce *Error
	if err := cfg.CheckCluster(); !errors.As(err, &ce) || ce.Line != 3 || ce.Key != "counter.pattern" {
		t.Fatalf("cluster check: %v, want the counter's pattern on dup.toml:3", err)
	}
	cfg.Counters = nil
	if err := cfg.CheckCluster(); !errors.As(err, &ce) || ce.Line != 15 || ce.Key != "unique.pattern" {
		t.Fatalf("cluster check of the uniques: %v, want uv's pattern on dup.toml:15", err)
	}
}

// TestTLSFilesAreReadAtLoad: a CA file that holds no certificate, or a client certificate that
// does not load, is a config error at its line, not a failure at connect time.
func TestTLSFilesAreReadAtLoad(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		line int
		key  string
	}{
		{"CA without PEM", src(`[redis]`, `tls_ca_file = "`+notPEM+`"`), 2, "redis.tls_ca_file"},
		{"client certificate that does not load", src(`[redis]`, `tls_cert_file = "`+notPEM+`"`, `tls_key_file = "`+notPEM+`"`), 2, "redis.tls_cert_file"},
	} {
		_, err := Parse("c.toml", c.data, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != c.line || ce.Key != c.key {
			t.Errorf("%s: %v, want an error at c.toml:%d %s", c.name, err, c.line, c.key)
		}
	}
}

// TestTimezones: the zone windows are cut in is a setting of the families: a top-level default
// that every family takes, a family's own that overrides it, and [ui] timezone, its old place,
// still read (with a warning) unless the top-level one is set, when it is ignored (with another).
func TestTimezones(t *testing.T) {
	cfg, err := Parse("c.toml", src(slices.Concat(
		[]string{`timezone = "Asia/Shanghai"`, `[ui]`, `timezone = "UTC"`},
		counter("a"),
		counter("b"), []string{`timezone = "America/New_York"`},
		[]string{`[[unique]]`, `name = "uv"`, `pattern = "uv:{<page>}:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "7d"`},
		[]string{`[[bitmap]]`, `name = "dau"`, `pattern = "dau:{<app>}:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "7d"`, `timezone = "UTC"`},
	)...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timezone.String() != "Asia/Shanghai" || cfg.TimezoneName != "Asia/Shanghai" || cfg.SweepOptions(false).Location != cfg.Timezone {
		t.Errorf("top-level timezone %v %q, sweep %v", cfg.Timezone, cfg.TimezoneName, cfg.SweepOptions(false).Location)
	}
	zones := map[string]string{"a": "Asia/Shanghai", "b": "America/New_York", "uv": "Asia/Shanghai", "dau": "UTC"}
	got := map[string]string{}
	for _, f := range cfg.Counters {
		got[f.Name()] = f.Location().String()
	}
	for _, u := range cfg.Structures.Uniques {
		got[u.Family.Name()] = u.Family.Location().String()
	}
	if !reflect.DeepEqual(got, zones) {
		t.Errorf("family zones = %v, want %v", got, zones)
	}
	if len(cfg.Warnings) != 1 || !strings.HasPrefix(cfg.Warnings[0].Error(), "c.toml:3: ui.timezone: ignored") {
		t.Errorf("warnings = %v", cfg.Warnings)
	}

	// With no zone anywhere, families take Local, as before.
	cfg, err = Parse("c.toml", src(counter("a")...), nil)
	if err != nil || cfg.Counters[0].Location() != time.Local || len(cfg.Warnings) != 0 {
		t.Fatalf("no zone: err %v, zone %v, warnings %v", err, cfg.Counters[0].Location(), cfg.Warnings)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"bad family zone", src(slices.Concat(counter("a"), []string{`timezone = "Mars/Olympus"`})...), `c.toml:6: counter.timezone: unknown time zone "Mars/Olympus"`},
		{"bad top-level zone", src(`timezone = ""`), `c.toml:1: timezone: unknown time zone ""`},
		{"zone on a queue", src(`[[delay_queue]]`, `name = "q"`, `key = "q"`, `timezone = "UTC"`), `c.toml:4: delay_queue.timezone: unknown key`},
	} {
		if _, err := Parse("c.toml", c.data, nil); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}
