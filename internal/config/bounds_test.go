package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestEmptyFileIsRefused: a file with no table or key is a mistake (the wrong path, a truncated
// copy) and is refused at its first line, not loaded as a config that watches nothing.
func TestEmptyFileIsRefused(t *testing.T) {
	for name, data := range map[string][]byte{
		"no bytes":      nil,
		"blank lines":   []byte("\n\n  \n"),
		"comments only": src("# hourglass", "# nothing here"),
		"a mark only":   []byte("\xef\xbb\xbf"),
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse("empty.toml", data, nil)
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "empty.toml" || ce.Line != 1 || !strings.Contains(ce.Msg, "the file is empty") {
				t.Fatalf("Parse = %+v, %v; want empty.toml:1: the file is empty", cfg, err)
			}
		})
	}
}

// TestByteOrderMarkIsDropped: the shipped file behind a UTF-8 byte order mark loads as the shipped
// file does, lines counted the same.
func TestByteOrderMarkIsDropped(t *testing.T) {
	withBOM := append([]byte("\xef\xbb\xbf"), redistest.Shipped(t)...)
	cfg, err := Parse("config.toml", withBOM, nil)
	if err != nil {
		t.Fatalf("a config behind a byte order mark: %v", err)
	}
	if want := Builtin(redistest.Shipped(t)); len(cfg.Counters) != len(want.Counters) || len(cfg.Counters) == 0 ||
		!reflect.DeepEqual(cfg.Structures, want.Structures) {
		t.Fatalf("loaded %d families and %+v, want the shipped %d", len(cfg.Counters), cfg.Structures, len(want.Counters))
	}
	_, err = Parse("bom.toml", append([]byte("\xef\xbb\xbf"), src(`[scan]`, `count = 0`)...), nil)
	if err == nil || err.Error() != "bom.toml:2: scan.count: must be at least 1, got 0" {
		t.Fatalf("an error behind a byte order mark: %v", err)
	}
}

// TestNumericBounds refuses every numeric setting outside its bound, at its line, with NaN and
// infinities among them.
func TestNumericBounds(t *testing.T) {
	limiter := func(lines ...string) []byte {
		return src(slices.Concat([]string{`[[limiter]]`, `name = "l"`, `pattern = "rl:<u>"`}, lines)...)
	}
	counter := func(retention string) []byte {
		return src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "`+retention+`"`)
	}
	profile := func(rate string) []byte {
		return src(`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "1d"`,
			`[[profile]]`, `name = "p"`, `counter = { a = `+rate+` }`)
	}
	tests := []struct {
		name string
		src  []byte
		line int
		key  string
		msg  string
	}{
		{"count zero", src(`[scan]`, `count = 0`), 2, "scan.count", "must be at least 1, got 0"},
		{"count absurd", src(`[scan]`, `count = 100001`), 2, "scan.count", "must be at most 100,000, got 100001"},
		{"count max int64", src(`[scan]`, `count = 9223372036854775807`), 2, "scan.count", "must be at most 100,000"},
		{"count negative", src(`[scan]`, `count = -5`), 2, "scan.count", "must be at least 1, got -5"},
		{"count nan", src(`[scan]`, `count = nan`), 2, "scan.count", "want an integer, got float NaN"},
		{"count inf", src(`[scan]`, `count = inf`), 2, "scan.count", "want an integer, got float +Inf"},
		{"budget absurd", src(`[scan]`, `keys_per_second = 1_000_000_000`), 2, "scan.keys_per_second", "must be at most 10,000,000"},
		{"budget negative", src(`[scan]`, `keys_per_second = -1`), 2, "scan.keys_per_second", "must be at least 1"},
		{"max call zero", src(`[scan]`, `max_call = "0s"`), 2, "scan.max_call", `must be positive, got "0s"`},
		{"max call negative", src(`[scan]`, `count = 5`, `max_call = "-1ms"`), 3, "scan.max_call", "must be positive"},
		{"max call absurd", src(`[scan]`, `max_call = "2s"`), 2, "scan.max_call", `must be at most 1s, got "2s"`},
		{"max call a number", src(`[scan]`, `max_call = 1`), 2, "scan.max_call", "want a duration string"},
		{"max call not a duration", src(`[scan]`, `max_call = "fast"`), 2, "scan.max_call", `bad duration "fast"`},
		{"live sample negative", src(`[scan]`, `live_sample = -1`), 2, "scan.live_sample", "must be at least 0"},
		{"live sample absurd", src(`[scan]`, `live_sample = 10_000_000`), 2, "scan.live_sample", "must be at most 100,000"},
		{"redis time zero", src(`[scan]`, `max_redis_time = "0%"`), 2, "scan.max_redis_time", `must be at least 0.01%, got "0%"`},
		{"redis time over a core", src(`[scan]`, `max_redis_time = "150%"`), 2, "scan.max_redis_time", `must be at most 100%, got "150%"`},
		{"redis time NaN", src(`[scan]`, `max_redis_time = "NaN%"`), 2, "scan.max_redis_time", `want a percentage such as "1%"`},
		{"redis time no percent", src(`[scan]`, `max_redis_time = "0.01"`), 2, "scan.max_redis_time", `want a percentage such as "1%"`},
		{"redis time a number", src(`[scan]`, `max_redis_time = 1`), 2, "scan.max_redis_time", "want a string"},
		{"refresh absurd", src(`[ui]`, `refresh = "2h"`), 2, "ui.refresh", `must be at most 1h0m0s, got "2h"`},
		{"refresh negative", src(`[ui]`, `refresh = "-1s"`), 2, "ui.refresh", "must be at least 250ms"},
		{"wait_warning zero", src(`[ui]`, `wait_warning = "0s"`), 2, "ui.wait_warning", "must be at least 1s"},
		{"wait_warning absurd", src(`[ui]`, `wait_warning = "31d"`), 2, "ui.wait_warning", "must be at most"},
		{"retention absurd", counter("3651d"), 5, "counter.day_retention", `must be at most 3650d, got "3651d"`},
		{"retention largest", counter("106751d"), 5, "counter.day_retention", "must be at most 3650d"},
		{"retention negative", counter("-1h"), 5, "counter.day_retention", "must be positive"},
		{"window absurd", limiter(`window = "367d"`, `limit = 5`), 4, "limiter.window", `must be at most 366d`},
		{"window under a millisecond", limiter(`window = "10us"`, `limit = 5`), 4, "limiter.window", "must be at least 1ms"},
		{"limit absurd", limiter(`window = "1m"`, `limit = 1_000_000_000_001`), 5, "limiter.limit", "must be at most 1,000,000,000,000"},
		{"limit negative", limiter(`window = "1m"`, `limit = -3`), 5, "limiter.limit", "must be at least 1, got -3"},
		{"burst absurd", limiter(`layout = "redis_rate"`, `window = "1s"`, `limit = 5`, `burst = 9223372036854775807`), 7, "limiter.burst", "must be at most"},
		{"burst zero", limiter(`layout = "redis_rate"`, `window = "1s"`, `limit = 5`, `burst = 0`), 7, "limiter.burst", "must be at least 1"},
		{"rate nan", profile("nan"), 8, "profile.counter.a", "want events a second above zero, got float NaN"},
		{"rate inf", profile("inf"), 8, "profile.counter.a", "must be at most 1,000,000 events a second, got float +Inf"},
		{"rate negative", profile("-2.5"), 8, "profile.counter.a", "above zero"},
		{"rate absurd", profile("1e300"), 8, "profile.counter.a", "must be at most 1,000,000"},
		{"rate not a number", profile(`"fast"`), 8, "profile.counter.a", "above zero, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("config.toml", tt.src, nil)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %+v, %v; want config.toml:%d: %s: ...%s", cfg, err, tt.line, tt.key, tt.msg)
			}
			if ce.Line != tt.line || ce.Key != tt.key || !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("got  %v\nwant config.toml:%d: %s: ...%s...", err, tt.line, tt.key, tt.msg)
			}
		})
	}
	// The bounds themselves are accepted.
	ok := src(`[scan]`, `count = 100000`, `keys_per_second = 10000000`, `max_call = "1s"`, `live_sample = 100000`, `[ui]`, `refresh = "1h"`, `wait_warning = "30d"`,
		`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "3650d"`,
		`[[limiter]]`, `name = "l"`, `pattern = "rl:<u>"`, `window = "366d"`, `limit = 1_000_000_000_000`,
		`[[profile]]`, `name = "p"`, `counter = { a = 1_000_000 }`)
	if _, err := Parse("config.toml", ok, nil); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
}

// TestFileSizeAndDepthAreBounded: a file over MaxFileSize, an endless one and one nested past any
// need are refused before they are decoded, each in a bounded time.
func TestFileSizeAndDepthAreBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	line := "# " + strings.Repeat("x", 97) + "\n"
	if err := os.WriteFile(big, []byte(strings.Repeat(line, 10<<20/len(line))), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(big, nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.File != big || ce.Msg != "the file is larger than 1 MiB (1,048,576 bytes), the limit of a config file: is it the right file?" {
		t.Fatalf("a 10 MB file: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := Load("/dev/zero", nil); !errors.As(err, &ce) || !strings.Contains(ce.Msg, "limit of a config file") {
			t.Fatalf("an endless file: %v", err)
		}
	}
	for name, text := range map[string]string{
		"open arrays":          "a = " + strings.Repeat("[", 500_000),
		"closed arrays":        "a = " + strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000),
		"inline tables":        "# x\na = " + strings.Repeat("{b=", 200_000) + "1" + strings.Repeat("}", 200_000),
		"arrays after strings": `a = "[[[[[[[[[[[[[[[[[[["` + "\n" + `b = '''` + "\n[[[[[[[[[[[[[[[[[[[[[[[[[\n'''\nc = " + strings.Repeat("[", 17),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("deep.toml", []byte(text), nil)
			if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "nest more than 16 deep") {
				t.Fatalf("got %v, want the nesting refused", err)
			}
			if wantLine := strings.Count(text[:strings.LastIndex(text, "=")], "\n") + 1; ce.Line != wantLine {
				t.Errorf("refused at line %d, want %d", ce.Line, wantLine)
			}
			// A liveness bound, ten times the second the docs promise loading ends in: a parser
			// that walks the nesting again at each level takes minutes here, not seconds.
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	// Brackets in strings and comments do not count, and a config's own nesting passes.
	text := src(`# [[[[[[[[[[[[[[[[[[[[`, `[redis]`, `name = "[[[[[[[[[[[[[[[[[[[[[[[[[[[["`, `username = '{{{{{{{{{{{{{{{{{{{{{{{{{{{'`,
		`[[counter]]`, `name = "a"`, `pattern = "a:<window>"`, `day_format = "yyyyMMdd"`, `day_retention = "1d"`,
		`exclude = [ # [[[[[[[[[[[[[[[[[[[[[[[[[[`, `  "a:[[]*",`, `]`)
	if _, err := Parse("ok.toml", text, nil); err != nil {
		t.Fatalf("brackets in strings and comments: %v", err)
	}
}

// TestListsAreBounded refuses a list over maxListItems at its line.
func TestListsAreBounded(t *testing.T) {
	items := strings.Repeat(`"x:*",`, maxListItems+1)
	_, err := Parse("c.toml", src(`[[lock]]`, `name = "l"`, `pattern = "l:<id>"`, `exclude = [`+items+`]`), nil)
	if err == nil || err.Error() != "c.toml:4: lock.exclude: holds 1001 items, over the limit of 1,000" {
		t.Fatalf("got %v", err)
	}
}

// TestBoundsAreDocumented: the configuration reference's table of bounds gives each bound as the
// loader applies it.
func TestBoundsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| `[scan]` | `count` | 1 | 100,000 |",
		"| `[scan]` | `keys_per_second` | 1 | 10,000,000 |",
		"| `[scan]` | `max_call` | above 0 | `1s` |",
		"| `[scan]` | `live_sample` | 0 | 100,000 |",
		"| `[scan]` | `max_redis_time` | `\"0.01%\"` | `\"100%\"` |",
		"| `[ui]` | `refresh` | `250ms` | `1h` |",
		"| | `wait_warning` | `1s` | `30d` |",
		"| `[[counter]]`, `[[unique]]`, `[[bitmap]]` | `hour_retention`, `day_retention` | above 0 | `3650d` |",
		"| `[[limiter]]` | `window` | `1ms` | `366d` |",
		"| `[[limiter]]` | `limit`, `burst` | 1 | 1,000,000,000,000 |",
		"| `[[profile]]` | each rate | above 0 | 1,000,000 |",
		"| every list | `addrs`, `exclude`, `queues` | | 1,000 items |",
		"| the file | | | 1 MiB (" + spell(MaxFileSize) + " bytes); arrays and inline tables nested 16 deep |",
	} {
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/configuration.md lacks the row %s", row)
		}
	}
	if maxScanCount != 100_000 || maxKeysPerSecond != 10_000_000 || maxMaxCall != time.Second || minRedisTime != 0.0001 || maxRefresh != time.Hour || maxRetention != 3650*24*time.Hour ||
		maxLimiterWindow != 366*24*time.Hour || maxLimiterLimit != 1e12 || maxProfileRate != 1e6 || maxListItems != 1000 || maxNesting != 16 {
		t.Error("a bound changed: change its row in docs/configuration.md and here")
	}
}
