package config

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// oneLine writes the control characters and line separators in s (a newline the TOML decoder
// quotes from the file, a key spelt with one) as escapes, so that an error stays on its line.
func oneLine(s string) string {
	breaks := func(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) }
	if !strings.ContainsFunc(s, breaks) {
		return s // bytes that are not UTF-8 stay as they are here
	}
	return format.EscapeFunc(s, 0, func(r rune, raw string) (string, bool) {
		switch {
		case r == utf8.RuneError && len(raw) == 1:
			return "\uFFFD", true // as ranging over s reads it
		case breaks(r):
			q := strconv.QuoteRune(r)
			return q[1 : len(q)-1], true
		}
		return "", false
	})
}

// lineIndex maps a key path to the line (1-based) that declares it. Paths name array-of-tables
// elements and array items by index: "redis", "redis.addrs", "redis.addrs[1]", "counter[1]",
// "counter[1].name".
//
// It exists because the TOML decoder reports positions only for syntax errors: its metadata has
// no positions at all, and an [[array]] element's keys could not be told apart even by key name.
// The indexer runs only on source the decoder has accepted, so it can be a line scanner that
// tracks just enough state (multi-line strings, open brackets) not to mistake a value for a key.
type lineIndex map[string]int

// lineOf returns the line of path or, when path itself was not indexed (a key inside an inline
// table, say), of its nearest indexed parent; 0 when nothing along the path was.
func (idx lineIndex) lineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if n, ok := idx[p]; ok {
			return n
		}
	}
	return 0
}

// parentPath strips the last ".key" or "[i]" from path.
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// indexLines records the line of every table header, key and multi-line array item in src.
func indexLines(src string) lineIndex {
	idx := lineIndex{}
	elems := map[string]int{} // array-of-tables path (without index) -> elements seen so far
	table := ""               // path of the current table
	var sc valueScanner
	for i, line := range strings.Split(src, "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		if sc.open() {
			sc.scan(idx, line, n)
			continue
		}
		text := strings.TrimSpace(line)
		switch {
		case text == "" || text[0] == '#':
		case strings.HasPrefix(text, "[["):
			parts, _ := splitKey(text[2:])
			base := resolveTable(parts[:len(parts)-1], elems)
			base = joinPath(base, parts[len(parts)-1])
			table = base + "[" + strconv.Itoa(elems[base]) + "]"
			elems[base]++
			idx.add(base, n) // the array as a whole is where its first element starts
			idx.add(table, n)
		case text[0] == '[':
			parts, _ := splitKey(text[1:])
			table = joinPath(resolveTable(parts[:len(parts)-1], elems), parts[len(parts)-1])
			idx.add(table, n)
		default:
			parts, rest := splitKey(text)
			path := table
			for _, p := range parts {
				path = joinPath(path, p) // a dotted key also declares its parents
				idx.add(path, n)
			}
			rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "="))
			sc.start(path)
			sc.scan(idx, rest, n)
		}
	}
	return idx
}

// add keeps the first line a path appears on: later ones can only be continuations of it.
func (idx lineIndex) add(path string, n int) {
	if _, ok := idx[path]; !ok && path != "" {
		idx[path] = n
	}
}

func joinPath(table, key string) string {
	if table == "" {
		return key
	}
	return table + "." + key
}

// resolveTable turns a header's parent keys into a path, pointing each array of tables among
// them at its latest element, as TOML does: [counter.extra] after [[counter]] belongs to it.
func resolveTable(parts []string, elems map[string]int) string {
	path := ""
	for _, p := range parts {
		path = joinPath(path, p)
		if k := elems[path]; k > 0 {
			path += "[" + strconv.Itoa(k-1) + "]"
		}
	}
	return path
}

// splitKey reads a possibly dotted, possibly quoted key from the start of s and returns its parts
// and the rest of s. It always returns at least one part.
func splitKey(s string) (parts []string, rest string) {
	for {
		s = strings.TrimLeft(s, " \t")
		var part string
		switch {
		case strings.HasPrefix(s, `"`):
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			end = min(end+1, len(s))
			part = s[:end]
			if u, err := strconv.Unquote(part); err == nil {
				part = u
			} else {
				part = strings.Trim(part, `"`)
			}
			s = s[end:]
		case strings.HasPrefix(s, "'"):
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				end = len(s) - 1
			}
			part, s = s[1:end+1], s[min(end+2, len(s)):]
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			})
			if end < 0 {
				end = len(s)
			}
			part, s = s[:end], s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return parts, s
		}
		s = s[1:]
	}
}

// valueScanner follows a value across lines: whether a multi-line string or a bracket is still
// open, and, for an array, the line each item starts on.
type valueScanner struct {
	path      string // key whose value is being scanned
	multi     string // `"""` or `'''` while inside a multi-line string
	depth     int    // open [ and { brackets
	isArray   bool   // the value is an array, so its items are indexed
	item      int    // index of the next top-level item
	wantsItem bool   // the next value character starts a top-level item
}

func (sc *valueScanner) start(path string) { *sc = valueScanner{path: path} }

func (sc *valueScanner) open() bool { return sc.multi != "" || sc.depth > 0 }

// scan advances over one line of a value, recording where top-level array items start.
func (sc *valueScanner) scan(idx lineIndex, line string, n int) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if sc.multi != "" {
			if c == '\\' && sc.multi == `"""` {
				i++
			} else if strings.HasPrefix(line[i:], sc.multi) {
				i += 2
				sc.multi = ""
			}
			continue
		}
		if c == ' ' || c == '\t' {
			continue
		}
		if c == '#' {
			return
		}
		if sc.depth == 1 && sc.isArray && sc.wantsItem && c != ',' && c != ']' {
			idx.add(sc.path+"["+strconv.Itoa(sc.item)+"]", n)
			sc.item++
			sc.wantsItem = false
		}
		switch c {
		case '[', '{':
			if sc.depth == 0 {
				sc.isArray, sc.wantsItem = c == '[', c == '['
			}
			sc.depth++
		case ']', '}':
			sc.depth--
		case ',':
			sc.wantsItem = sc.depth == 1
		case '"', '\'':
			q := string(c)
			if strings.HasPrefix(line[i:], q+q+q) {
				sc.multi = q + q + q
				i += 2
				continue
			}
			for i++; i < len(line) && line[i] != c; i++ {
				if c == '"' && line[i] == '\\' {
					i++
				}
			}
		}
	}
}
