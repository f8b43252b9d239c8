package store

import (
	"fmt"
	"regexp"
	"strings"
)

// Globs are the exclude patterns of a family or structure, in Redis's glob syntax as SCAN MATCH
// reads it: * any run of bytes, ? one byte, [abc] and [a-z] one of a set ([^...] or [!...] none
// of it), \ escapes the next byte. A key that matches any of them is left out.
type Globs struct {
	texts []string
	re    *regexp.Regexp // all of them as one alternation; nil when there are none
}

// ParseGlobs compiles exclude patterns.
func ParseGlobs(patterns []string) (Globs, error) {
	if len(patterns) == 0 {
		return Globs{}, nil
	}
	alts := make([]string, len(patterns))
	for i, p := range patterns {
		if p == "" {
			return Globs{}, fmt.Errorf("empty exclude pattern")
		}
		re, err := globRegexp(p)
		if err != nil {
			return Globs{}, fmt.Errorf("exclude %q: %w", p, err)
		}
		alts[i] = re
	}
	re, err := regexp.Compile(`^(?s:` + strings.Join(alts, "|") + `)$`)
	if err != nil {
		return Globs{}, fmt.Errorf("exclude: %w", err)
	}
	return Globs{texts: append([]string(nil), patterns...), re: re}, nil
}

// Match reports whether key matches one of the patterns.
func (g Globs) Match(key string) bool { return g.re != nil && g.re.MatchString(key) }

// Empty reports whether there are no patterns.
func (g Globs) Empty() bool { return g.re == nil }

// Strings returns the patterns as given.
func (g Globs) Strings() []string { return append([]string(nil), g.texts...) }

// globRegexp translates one glob into a regular expression.
func globRegexp(glob string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(glob) {
				i++
			}
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return "", fmt.Errorf("unclosed '['")
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	return b.String(), nil
}
