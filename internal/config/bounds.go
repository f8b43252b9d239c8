package config

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The bounds of the file and of its numeric settings. Each is in the table of bounds in the
// configuration reference (docs/configuration.md), which a test holds to these values. A value
// outside them is refused at its file:line: past them a setting is a typo or an attack, never a
// need, and some (a SCAN COUNT of millions, a budget no sweep can keep) would hurt the Redis
// watched.
const (
	// MaxFileSize is the largest config file read: it is refused before it is parsed, so loading
	// takes a bounded time (a file of this size loads in well under a second).
	MaxFileSize = 1 << 20
	// maxNesting is how deep arrays and inline tables may nest; a config needs two levels
	// (profile = { counter = { flow = 500 } }), and the TOML decoder's time grows with depth.
	maxNesting = 16
	// maxListItems is how many items a list (addrs, exclude, queues) may hold.
	maxListItems = 1000

	maxScanCount     = 100_000             // [scan] count: SCAN's COUNT hint
	maxKeysPerSecond = 10_000_000          // [scan] keys_per_second
	maxMaxCall       = time.Second         // [scan] max_call
	minRedisTime     = 0.0001              // [scan] max_redis_time: 0.01% of a core; at most 100%
	maxRefresh       = time.Hour           // [ui] refresh
	maxWaitWarning   = 30 * 24 * time.Hour // [ui] wait_warning
	maxRetention     = 3650 * 24 * time.Hour
	maxLimiterWindow = 366 * 24 * time.Hour
	maxLimiterLimit  = 1_000_000_000_000 // [[limiter]] limit and burst
	maxProfileRate   = 1_000_000         // [[profile]] events a second per structure
	minLimiterWindow = time.Millisecond
)

// bom is the UTF-8 byte order mark some editors put at the start of a file.
var bom = []byte("\xef\xbb\xbf")

// precheck refuses what must not reach the TOML decoder: a file over MaxFileSize, and arrays or
// inline tables nested deeper than maxNesting. It returns data without a leading byte order mark,
// which TOML does not allow but editors on some systems write.
func precheck(name string, data []byte) ([]byte, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("the file is larger than 1 MiB (%s bytes), the limit of a config file: is it the right file?",
			spell(MaxFileSize))}
	}
	data = bytes.TrimPrefix(data, bom)
	if line := tooDeep(data); line > 0 {
		return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("arrays and inline tables nest more than %d deep", maxNesting)}
	}
	return data, nil
}

// tooDeep returns the line on which brackets and braces outside strings and comments first open
// more than maxNesting deep, or 0. It only counts: the decoder checks that they match.
func tooDeep(data []byte) int {
	line, depth := 1, 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i-- // the newline is counted above
		case '"', '\'':
			end := skipString(data, i)
			line += bytes.Count(data[i:end], []byte("\n"))
			i = end - 1
		case '[', '{':
			if depth++; depth > maxNesting {
				return line
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return 0
}

// skipString returns the index just past the string starting at data[i] (one or three quotes,
// basic or literal), or len(data) when it does not end.
func skipString(data []byte, i int) int {
	q := data[i]
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		if end := bytes.Index(data[i+3:], []byte{q, q, q}); end >= 0 {
			return i + 3 + end + 3
		}
		return len(data)
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case '\n':
			return j // a single-line string never spans lines; the decoder says what is wrong
		case q:
			return j + 1
		}
	}
	return len(data)
}

// intIn reads an integer key that must lie in [lo, hi].
func (c *checker) intIn(t table, key string, lo, hi int) (int, bool) {
	n, ok := c.integer(t, key)
	if !ok {
		return 0, false
	}
	switch {
	case n < lo:
		c.fail(joinPath(t.path, key), "must be at least %d, got %d", lo, n)
	case n > hi:
		c.fail(joinPath(t.path, key), "must be at most %s, got %d", spell(hi), n)
	default:
		return n, true
	}
	return n, false
}

// percentIn reads a share written as a percentage ("1%", "0.5%") that must lie in [lo, hi], as
// a fraction (0.01 for "1%").
func (c *checker) percentIn(t table, key string, lo, hi float64) (float64, bool) {
	text, ok := c.str(t, key)
	if !ok {
		return 0, false
	}
	num, isPct := strings.CutSuffix(strings.TrimSpace(text), "%")
	pct, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	v := pct / 100
	switch {
	case !isPct || err != nil || math.IsNaN(pct) || math.IsInf(pct, 0):
		c.fail(joinPath(t.path, key), "want a percentage such as \"1%%\", got %q", text)
	case v < lo:
		c.fail(joinPath(t.path, key), "must be at least %s, got %q", percent(lo), text)
	case v > hi:
		c.fail(joinPath(t.path, key), "must be at most %s, got %q", percent(hi), text)
	default:
		return v, true
	}
	return 0, false
}

// percent writes a fraction as a percentage: 0.0001 is "0.01%".
func percent(v float64) string { return strconv.FormatFloat(100*v, 'g', 6, 64) + "%" }

// durationIn reads a duration key that must lie in [lo, hi]; lo of 0 means above zero.
func (c *checker) durationIn(t table, key string, lo, hi time.Duration) (time.Duration, bool) {
	d, ok := c.duration(t, key)
	if !ok {
		return 0, false
	}
	switch {
	case lo == 0 && d <= 0:
		c.fail(joinPath(t.path, key), "must be positive, got %q", t.m[key])
	case d < lo:
		c.fail(joinPath(t.path, key), "must be at least %v, got %q", lo, t.m[key])
	case d > hi:
		c.fail(joinPath(t.path, key), "must be at most %s, got %q", days(hi), t.m[key])
	default:
		return d, true
	}
	return d, false
}

// rateIn checks a rate (events a second): a finite number above zero and at most hi.
func rateIn(v any, hi float64) (float64, string) {
	r, ok := number(v)
	switch {
	case !ok || math.IsNaN(r):
		return 0, fmt.Sprintf("want events a second above zero, got %s", describe(v))
	case r <= 0:
		return 0, fmt.Sprintf("want events a second above zero, got %s", describe(v))
	case r > hi || math.IsInf(r, 0):
		return 0, fmt.Sprintf("must be at most %s events a second, got %s", spell(int(hi)), describe(v))
	}
	return r, ""
}

// spell writes n with commas between thousands, as the reference's table does.
func spell(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// days writes a bound of whole days as the file would ("3650d"), any other as Go does.
func days(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}
