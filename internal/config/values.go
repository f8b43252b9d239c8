package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The typed getters below read one key of a table. They return ok=false when the key is absent
// or has the wrong TOML type; the latter is recorded as a problem, so callers only act on ok.

func (c *checker) str(t table, key string) (string, bool) {
	v, present := t.m[key]
	if !present {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.fail(joinPath(t.path, key), "want a string, got %s", describe(v))
	}
	return s, ok
}

func (c *checker) boolean(t table, key string) (bool, bool) {
	v, present := t.m[key]
	if !present {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		c.fail(joinPath(t.path, key), "want true or false, got %s", describe(v))
	}
	return b, ok
}

func (c *checker) integer(t table, key string) (int, bool) {
	v, present := t.m[key]
	if !present {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		c.fail(joinPath(t.path, key), "want an integer, got %s", describe(v))
		return 0, false
	}
	if n > math.MaxInt || n < math.MinInt {
		c.fail(joinPath(t.path, key), "%d is out of range", n)
		return 0, false
	}
	return int(n), true
}

func (c *checker) stringList(t table, key string) ([]string, bool) {
	v, present := t.m[key]
	if !present {
		return nil, false
	}
	path := joinPath(t.path, key)
	items, ok := v.([]any)
	if !ok {
		c.fail(path, "want an array of strings such as [\"127.0.0.1:6379\"], got %s", describe(v))
		return nil, false
	}
	if len(items) > maxListItems {
		c.fail(path, "holds %d items, over the limit of %s", len(items), spell(maxListItems))
		return nil, false
	}
	list := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			c.fail(path+"["+strconv.Itoa(i)+"]", "want a string, got %s", describe(item))
			continue
		}
		list = append(list, s)
	}
	return list, len(list) == len(items)
}

func (c *checker) duration(t table, key string) (time.Duration, bool) {
	v, present := t.m[key]
	if !present {
		return 0, false
	}
	s, ok := v.(string)
	if !ok {
		c.fail(joinPath(t.path, key), "want a duration string such as \"48h\" or \"30d\", got %s", describe(v))
		return 0, false
	}
	d, ok := parseDuration(s)
	if !ok {
		c.fail(joinPath(t.path, key), "bad duration %q (use e.g. 48h, 30d)", s)
	}
	return d, ok
}

// zone reads a time zone: "Local", "UTC", an IANA name, or a fixed offset from UTC. An offset is
// written "+08:00" or "-05:30" (hours at most 14, minutes 0 to 59), for writers that cut windows at
// an offset rather than in a named zone. An empty name is refused: LoadLocation("") means UTC,
// which would hide a half-edited line.
func (c *checker) zone(t table, key string) (*time.Location, string, bool) {
	v, ok := c.str(t, key)
	if !ok {
		return nil, "", false
	}
	if loc, isOffset, err := FixedOffset(v); isOffset {
		if err != nil {
			c.fail(joinPath(t.path, key), "bad UTC offset %q: %v", v, err)
			return nil, "", false
		}
		return loc, v, true
	}
	loc, err := time.LoadLocation(v)
	if v == "" || err != nil {
		c.fail(joinPath(t.path, key), "unknown time zone %q (use Local, UTC, an IANA name such as Asia/Shanghai, or an offset such as +08:00)", v)
		return nil, "", false
	}
	return loc, v, true
}

// maxOffset bounds a fixed UTC offset: the zones in use run from -12:00 to +14:00.
const maxOffset = 14 * time.Hour

// FixedOffset reads s as a fixed offset from UTC, "+08:00" or "-05:30". It reports in isOffset
// whether s has that form: a sign, two digits, a colon, two digits. Its err says why an offset is
// out of bounds: more than 14 hours, or minutes past 59. The zone is named s, so windows and times
// show the offset written.
func FixedOffset(s string) (loc *time.Location, isOffset bool, err error) {
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return nil, false, nil
	}
	digits := s[1:3] + s[4:6]
	for _, r := range digits {
		if r < '0' || r > '9' {
			return nil, false, nil
		}
	}
	h, _ := strconv.Atoi(s[1:3])
	m, _ := strconv.Atoi(s[4:6])
	if m > 59 {
		return nil, true, fmt.Errorf("minutes %02d past 59", m)
	}
	off := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if off > maxOffset {
		return nil, true, fmt.Errorf("%s is more than 14 hours from UTC", s)
	}
	if s[0] == '-' {
		off = -off
	}
	return time.FixedZone(s, int(off/time.Second)), true, nil
}

// subtable returns the table under key, recording a problem if key holds something else.
func (c *checker) subtable(t table, key string) (table, bool) {
	v, present := t.m[key]
	if !present {
		return table{}, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(joinPath(t.path, key), "want a [%s] table, got %s", key, describe(v))
	}
	return table{joinPath(t.path, key), m}, ok
}

// onlyKeys records every key of t not in known. A misspelt key must not pass
// silently: the default it leaves in place is exactly what the operator meant to change. Keys are
// checked in order, so of several on one line (an inline table) the same one is reported first
// every time.
func (c *checker) onlyKeys(t table, header string, known ...string) {
	for _, key := range slices.Sorted(maps.Keys(t.m)) {
		if slices.Contains(known, key) {
			continue
		}
		path := joinPath(t.path, key)
		switch {
		case t.path == "":
			c.fail(path, "unknown table or key (the file holds [redis], [ui], [scan] and [[counter]])")
		case t.path == "redis" && key == "password":
			c.fail(path, "passwords are not read from the file: set REDISCLI_AUTH, "+
				"or name another variable with password_env")
		default:
			c.fail(path, "unknown key (%s takes %s)", header, strings.Join(known, ", "))
		}
	}
}

// describe names a decoded TOML value's type for error messages, with the value when short.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		return fmt.Sprintf("float %v", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case time.Time: // local dates and times too, in a location of their own
		return "date-time"
	case []map[string]any:
		return "array of tables"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

// parseDuration is time.ParseDuration plus a leading day count ("30d", "1d12h"), because
// retentions are naturally written in days and Go stops at hours.
func parseDuration(s string) (time.Duration, bool) {
	rest, neg := s, false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		rest, neg = rest[1:], rest[0] == '-'
	}
	if rest == "" || rest[0] == '-' || rest[0] == '+' {
		return 0, false
	}
	var d time.Duration
	if i := strings.IndexByte(rest, 'd'); i >= 0 {
		days, err := strconv.ParseUint(rest[:i], 10, 64)
		if err != nil || i == 0 || days > uint64(math.MaxInt64/int64(24*time.Hour)) {
			return 0, false
		}
		d, rest = time.Duration(days)*24*time.Hour, rest[i+1:]
		if rest == "" {
			return sign(d, neg), true
		}
		if rest[0] == '-' || rest[0] == '+' {
			return 0, false
		}
	}
	more, err := time.ParseDuration(rest)
	if err != nil || more > math.MaxInt64-d {
		return 0, false
	}
	return sign(d+more, neg), true
}

func sign(d time.Duration, neg bool) time.Duration {
	if neg {
		return -d
	}
	return d
}
