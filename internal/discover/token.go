package discover

import "time"

// class is what a segment of a key name looks like.
type class uint8

const (
	clWord    class = iota // letters and safe punctuation: a literal, unless it varies a lot
	clNum                  // digits that are not a time
	clID                   // letters and digits mixed (app12, u9x3)
	clHex                  // eight or more hex digits with a letter among them, or sixteen or more
	clUUID                 // 8-4-4-4-12 hex
	clIP                   // an IPv4 address
	clBlob                 // bytes no literal of a pattern may hold (control, non-ASCII, quotes, <>)
	clEmpty                // nothing between two separators
	clHour                 // yyyyMMddHH
	clDay                  // yyyyMMdd
	clDayDash              // yyyy-MM-dd
	clMinute               // yyyyMMddHHmm
	clWeek                 // an ISO week: yyyy-Www or yyyyWww
	clUnixS                // Unix seconds
	clUnixMS               // Unix milliseconds
	numClasses
)

// classCode spells a class in a skeleton key.
const classCode = "wnixuibeHDdMWsm"

// timeClass reports whether c is a time token.
func (c class) timeClass() bool { return c >= clHour }

// dateWindow reports whether c names a window in a date format hourglass families read.
func (c class) dateWindow() bool { return c == clHour || c == clDay || c == clDayDash }

// format is the Java-style window format of a date window class.
func (c class) format() string {
	switch c {
	case clHour:
		return "yyyyMMddHH"
	case clDay:
		return "yyyyMMdd"
	case clDayDash:
		return "yyyy-MM-dd"
	}
	return ""
}

// describe names a class for the evidence.
func (c class) describe() string {
	return [...]string{"word", "number", "id", "hex", "UUID", "IPv4", "binary", "empty",
		"yyyyMMddHH", "yyyyMMdd", "yyyy-MM-dd", "yyyyMMddHHmm", "ISO week", "Unix seconds",
		"Unix milliseconds"}[c]
}

// token is one segment of a key name: name[start:end], of class cls, after separator sep (0 for
// the first).
type token struct {
	start, end int
	sep        byte
	cls        class
}

// Bounds that keep the work for one name small whatever it holds.
const (
	maxTokens  = 24  // past this, the rest of the name is one blob segment
	maxNameLen = 256 // past this, the rest of the name is one blob segment
)

func isSep(c byte) bool {
	switch c {
	case ':', '.', '_', '-', '/', '|', '{', '}', ',', '#', '@', '=':
		return true
	}
	return false
}

// tokenize splits name into segments, appending to buf. Compound tokens that hold separators
// (UUIDs, IPv4 addresses, yyyy-MM-dd dates, ISO weeks) are taken whole first.
func tokenize(name string, buf []token) []token {
	out := buf[:0]
	var sep byte
	i := 0
	for i <= len(name) {
		if len(out) == maxTokens-1 || i >= maxNameLen {
			out = append(out, token{start: i, end: len(name), sep: sep, cls: clBlob})
			return out
		}
		end, cls := compound(name, i)
		if end < 0 {
			end = i
			for end < len(name) && !isSep(name[end]) {
				end++
			}
			cls = classify(name[i:end])
		}
		out = append(out, token{start: i, end: end, sep: sep, cls: cls})
		if end >= len(name) {
			return out
		}
		sep = name[end]
		i = end + 1
	}
	return out
}

// compound returns the end of a UUID, IPv4 address, dashed date or ISO week starting at i and
// ending at a separator or the end of name, or -1.
func compound(name string, i int) (int, class) {
	rest := name[i:]
	ends := func(n int) bool { return len(rest) == n || len(rest) > n && isSep(rest[n]) }
	switch {
	case len(rest) >= 36 && ends(36) && isUUID(rest[:36]):
		return i + 36, clUUID
	case len(rest) >= 10 && ends(10) && isDashDate(rest[:10]):
		return i + 10, clDayDash
	case len(rest) >= 8 && ends(8) && isWeek(rest[:4], rest[4:5], rest[5:8]):
		return i + 8, clWeek
	}
	if n := ipv4Len(rest); n > 0 {
		return i + n, clIP
	}
	return -1, 0
}

// classify says what a segment without separators is.
func classify(s string) class {
	if s == "" {
		return clEmpty
	}
	letters, digits, hexLetters, unsafe := 0, 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hexLetters++
			letters++
		case c >= 'g' && c <= 'z' || c >= 'G' && c <= 'Z':
			letters++
		case c == '+' || c == '~' || c == '%' || c == '!' || c == '$' || c == '&' || c == '(' || c == ')':
		default:
			unsafe = true
		}
	}
	switch {
	case unsafe:
		return clBlob
	case digits == len(s):
		return digitClass(s)
	case len(s) == 7 && digits == 6 && (s[4] == 'W' || s[4] == 'w') && isWeek(s[:4], "-", s[5:7]):
		return clWeek
	case digits > 0 && letters == hexLetters && (len(s) >= 16 || len(s) >= 8 && hexLetters > 0):
		return clHex
	case digits > 0:
		return clID
	}
	return clWord
}

// digitClass tells a run of digits that is a time from a number.
func digitClass(s string) class {
	switch len(s) {
	case 8:
		if compactTime(s) {
			return clDay
		}
	case 10:
		if compactTime(s) {
			return clHour
		}
		if v := atoi(s); v >= 1e9 && v < 4e9 {
			return clUnixS
		}
	case 12:
		if compactTime(s) {
			return clMinute
		}
	case 13:
		if v := atoi(s); v >= 1e12 && v < 4e12 {
			return clUnixMS
		}
	}
	return clNum
}

// compactTime reports whether s, all digits, is a date of 2000 to 2099 in the layout of its
// length: yyyyMMdd (8), yyyyMMddHH (10) or yyyyMMddHHmm (12). It accepts what time.Parse accepts
// in those layouts, without its cost: every key's digits go through it.
func compactTime(s string) bool {
	if len(s) < 8 || s[0] != '2' || s[1] != '0' {
		return false
	}
	year, month, day := int(atoi(s[:4])), atoi(s[4:6]), atoi(s[6:8])
	days := int64(31)
	switch month {
	case 2:
		days = 28
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			days = 29
		}
	case 4, 6, 9, 11:
		days = 30
	}
	switch {
	case month < 1 || month > 12 || day < 1 || day > days:
		return false
	case len(s) >= 10 && atoi(s[8:10]) > 23:
		return false
	}
	return len(s) < 12 || atoi(s[10:12]) <= 59
}

// parseCompact parses a date in layout, in UTC, for years 2000 to 2099.
func parseCompact(s, layout string) (time.Time, bool) {
	if len(s) < 4 || s[:2] != "20" {
		return time.Time{}, false
	}
	t, err := time.Parse(layout, s)
	return t, err == nil
}

func atoi(s string) int64 {
	var v int64
	for i := 0; i < len(s) && i < 18; i++ {
		v = v*10 + int64(s[i]-'0')
	}
	return v
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isUUID(s string) bool {
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isDashDate(s string) bool {
	if s[4] != '-' || s[7] != '-' {
		return false
	}
	_, ok := parseCompact(s, "2006-01-02")
	return ok
}

// isWeek reports whether year, sep ("-" or "W") and rest ("Www" or "ww") spell an ISO week.
func isWeek(year, sep, rest string) bool {
	if len(year) != 4 || year[:2] != "20" || !allDigits(year) {
		return false
	}
	w := rest
	if sep == "-" && len(rest) == 3 {
		if rest[0] != 'W' && rest[0] != 'w' {
			return false
		}
		w = rest[1:]
	} else if sep != "-" && sep != "W" && sep != "w" {
		return false
	}
	if len(w) != 2 || !allDigits(w) {
		return false
	}
	n := atoi(w)
	return n >= 1 && n <= 53
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ipv4Len returns the length of a dotted IPv4 address at the start of s that ends at a separator
// other than '.' or at the end of s, or 0.
func ipv4Len(s string) int {
	i := 0
	for part := 0; part < 4; part++ {
		n, v := 0, 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 4 {
			v = v*10 + int(s[i]-'0')
			i++
			n++
		}
		if n == 0 || n > 3 || v > 255 {
			return 0
		}
		if part < 3 {
			if i >= len(s) || s[i] != '.' {
				return 0
			}
			i++
		}
	}
	if i < len(s) && (!isSep(s[i]) || s[i] == '.') {
		return 0
	}
	return i
}

// windowOf reads a date window token in loc: its start and length.
func windowOf(c class, s string, loc *time.Location) (time.Time, time.Duration, bool) {
	layout, length := "", time.Duration(0)
	switch c {
	case clHour:
		layout, length = "2006010215", time.Hour
	case clDay:
		layout, length = "20060102", 24*time.Hour
	case clDayDash:
		layout, length = "2006-01-02", 24*time.Hour
	case clMinute:
		layout, length = "200601021504", time.Minute
	case clUnixS:
		return time.Unix(atoi(s), 0), 0, true
	case clUnixMS:
		return time.UnixMilli(atoi(s)), 0, true
	default:
		return time.Time{}, 0, false
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		return time.Time{}, 0, false
	}
	if length == 24*time.Hour {
		return t, t.AddDate(0, 0, 1).Sub(t), true // a day with a DST change is 23 or 25 hours
	}
	return t, length, true
}

// alignOf narrows align (in seconds; 0 before any value) by the Unix time text of class c: to the
// longest of a day, an hour, a minute and a second that it is a multiple of (1 for none of them).
func alignOf(text string, c class, align int64) int64 {
	v := atoi(text)
	if c == clUnixMS {
		if v%1000 != 0 {
			return 1
		}
		v /= 1000
	}
	a := int64(1)
	for _, step := range []int64{86400, 3600, 60} {
		if v%step == 0 {
			a = step
			break
		}
	}
	if align != 0 {
		a = min(a, align)
	}
	return a
}
