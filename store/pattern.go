package store

import (
	"fmt"
	"regexp"
	"strings"
)

// WindowPlaceholder is the placeholder every family pattern must hold once: the time bucket.
const WindowPlaceholder = "window"

// Pattern is a key pattern such as "flow:count:<app>:<device>:<ip>:<window>": literal text and
// named placeholders in angle brackets. Literal "{" and "}" stay literal; they are Redis Cluster
// hash tags.
type Pattern struct {
	text      string
	segments  []segment
	dims      []string // placeholder names in order, without <window>
	windowSeg int      // index of <window> in segments
}

type segment struct {
	literal string
	dim     int // index into dims, or -1 for <window>; meaningful only when literal == ""
}

var placeholderName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParsePattern parses a key pattern. It needs exactly one <window>, unique placeholder names,
// and literal text between any two placeholders so that a key can be split back into its parts.
func ParsePattern(text string) (*Pattern, error) { return parsePattern(text, true) }

// ParseKeyPattern parses a pattern for keys that are not windowed (a limiter's, a lock's): the
// same rules, with no <window>.
func ParseKeyPattern(text string) (*Pattern, error) { return parsePattern(text, false) }

func parsePattern(text string, windowed bool) (*Pattern, error) {
	if text == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	p := &Pattern{text: text, windowSeg: -1}
	seen := map[string]bool{}
	windows := 0
	rest := text
	for rest != "" {
		open := strings.IndexByte(rest, '<')
		if open < 0 {
			p.segments = append(p.segments, segment{literal: rest})
			break
		}
		if open > 0 {
			p.segments = append(p.segments, segment{literal: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '>')
		if end < 0 {
			return nil, fmt.Errorf("unclosed '<' at %q", rest[open:])
		}
		name := rest[open+1 : open+end]
		if !placeholderName.MatchString(name) {
			return nil, fmt.Errorf("bad placeholder <%s>: names are letters, digits and _", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("placeholder <%s> appears twice", name)
		}
		seen[name] = true
		if n := len(p.segments); n > 0 && p.segments[n-1].literal == "" {
			return nil, fmt.Errorf("placeholders must be separated by literal text before <%s>", name)
		}
		if name == WindowPlaceholder {
			if !windowed {
				return nil, fmt.Errorf("<%s> has no place in this pattern: its keys are not windowed", WindowPlaceholder)
			}
			windows++
			p.windowSeg = len(p.segments)
			p.segments = append(p.segments, segment{dim: -1})
		} else {
			p.segments = append(p.segments, segment{dim: len(p.dims)})
			p.dims = append(p.dims, name)
		}
		rest = rest[open+end+1:]
	}
	if windows == 0 && windowed {
		return nil, fmt.Errorf("no <%s> placeholder", WindowPlaceholder)
	}
	if strings.ContainsRune(text, '>') && strings.Count(text, ">") != strings.Count(text, "<") {
		return nil, fmt.Errorf("stray '>' in pattern")
	}
	return p, nil
}

// Match reads a key of a pattern without <window> back into its dims (in Dims order).
func (p *Pattern) Match(key string) ([]string, bool) {
	if p.windowSeg >= 0 {
		return nil, false
	}
	dims := make([]string, len(p.dims))
	if !matchSide(p.segments, key, dims) {
		return nil, false
	}
	return dims, true
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.text }

// Dims returns the placeholder names other than <window>, in the order they appear.
func (p *Pattern) Dims() []string { return append([]string(nil), p.dims...) }

// Key builds the key for dims (in Dims order) and a formatted window.
func (p *Pattern) Key(dims []string, window string) (string, error) {
	if len(dims) != len(p.dims) {
		return "", fmt.Errorf("pattern %q wants %d dims (%s), got %d",
			p.text, len(p.dims), strings.Join(p.dims, ", "), len(dims))
	}
	return p.key(dims, window), nil
}

// key builds a key without checking the number of dims.
func (p *Pattern) key(dims []string, window string) string {
	n := len(window)
	for _, s := range p.segments {
		n += len(s.literal)
	}
	for _, d := range dims {
		n += len(d)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range p.segments {
		switch {
		case s.literal != "":
			b.WriteString(s.literal)
		case s.dim < 0:
			b.WriteString(window)
		default:
			b.WriteString(dims[s.dim])
		}
	}
	return b.String()
}

// appendKey appends the key to dst, without checking the number of dims.
func (p *Pattern) appendKey(dst []byte, dims []string, window string) []byte {
	for _, s := range p.segments {
		switch {
		case s.literal != "":
			dst = append(dst, s.literal...)
		case s.dim < 0:
			dst = append(dst, window...)
		default:
			dst = append(dst, dims[s.dim]...)
		}
	}
	return dst
}

// SharesSlot reports whether every key of the pattern hashes to the same Redis Cluster slot
// whatever its window: the key's hash tag (the first "{...}") is fixed before any placeholder
// can shift it, is not empty, and closes before <window>.
func (p *Pattern) SharesSlot() bool {
	open := -1
	for i, s := range p.segments {
		if s.literal == "" {
			return false // a placeholder came first: its value could hold a '{'
		}
		if j := strings.IndexByte(s.literal, '{'); j >= 0 {
			open = i
			rest := s.literal[j+1:]
			if k := strings.IndexByte(rest, '}'); k >= 0 {
				return k > 0 // tag closed within this literal: "{}" hashes the whole key
			}
			break
		}
	}
	if open < 0 {
		return false
	}
	// The tag spans placeholders; it must close in a literal before <window>. A dim holding '}'
	// would close it early, which still keeps <window> out of the tag.
	nonEmpty := strings.IndexByte(p.segments[open].literal, '{') < len(p.segments[open].literal)-1
	for _, s := range p.segments[open+1:] {
		switch {
		case s.literal == "" && s.dim < 0:
			return false
		case s.literal == "":
			nonEmpty = true
		case strings.IndexByte(s.literal, '}') >= 0:
			return nonEmpty || strings.IndexByte(s.literal, '}') > 0
		default:
			nonEmpty = true
		}
	}
	return false
}
