package store

import (
	"fmt"
)

// Globs are the exclude patterns of a family or structure: a key that matches any of them is left
// out. They are in Redis's glob syntax as SCAN MATCH reads it, byte by byte. `*` is any run of
// bytes and `?` one byte. `[abc]` and `[a-z]` are one byte of a set, `[^...]` or `[!...]` one byte
// outside it. `\` escapes the next byte, inside a set too.
type Globs struct {
	texts []string
}

// ParseGlobs checks exclude patterns: none may be empty or leave a '[' open.
func ParseGlobs(patterns []string) (Globs, error) {
	if len(patterns) == 0 {
		return Globs{}, nil
	}
	for _, p := range patterns {
		if p == "" {
			return Globs{}, fmt.Errorf("empty exclude pattern")
		}
		if err := checkGlob(p); err != nil {
			return Globs{}, fmt.Errorf("exclude %q: %w", p, err)
		}
	}
	return Globs{texts: append([]string(nil), patterns...)}, nil
}

// Match reports whether key matches one of the patterns.
func (g Globs) Match(key string) bool {
	for _, p := range g.texts {
		if globMatches(p, key) {
			return true
		}
	}
	return false
}

// Empty reports whether there are no patterns.
func (g Globs) Empty() bool { return len(g.texts) == 0 }

// Strings returns the patterns as given.
func (g Globs) Strings() []string { return append([]string(nil), g.texts...) }

// checkGlob refuses a '[' that no ']' closes, which Redis would read to the end of the pattern:
// in a config file it is more likely a mistake.
func checkGlob(glob string) error {
	for i := 0; i < len(glob); i++ {
		switch glob[i] {
		case '\\':
			i++
		case '[':
			_, next := globSet(glob, i+1, 0)
			if next > len(glob) {
				return fmt.Errorf("unclosed '['")
			}
			i = next - 1
		}
	}
	return nil
}

// globMatches matches key against one glob. Every element but * stands for exactly one byte, so
// on a mismatch only the last * need take one byte more: the time is bounded by the product of
// the two lengths, whatever the pattern.
func globMatches(glob, key string) bool {
	p, k := 0, 0
	star, starKey := -1, 0
	for k < len(key) {
		if p < len(glob) && glob[p] == '*' {
			star, starKey = p, k
			p++
			continue
		}
		if p < len(glob) {
			if next, ok := globByte(glob, p, key[k]); ok {
				p, k = next, k+1
				continue
			}
		}
		if star < 0 {
			return false
		}
		starKey++
		p, k = star+1, starKey
	}
	for p < len(glob) && glob[p] == '*' {
		p++
	}
	return p == len(glob)
}

// globByte reports whether the element of glob at p (not a *) matches c, and where the next
// element starts.
func globByte(glob string, p int, c byte) (int, bool) {
	switch glob[p] {
	case '?':
		return p + 1, true
	case '[':
		in, next := globSet(glob, p+1, c)
		return next, in && next <= len(glob)
	case '\\':
		if p+1 < len(glob) {
			return p + 2, glob[p+1] == c
		}
	}
	return p + 1, glob[p] == c
}

// globSet reads the set that starts at glob[p], just after its '[': whether c is in it, and where
// the glob goes on after its ']' (past len(glob) when no ']' closes it). A range may run either
// way round (z-a is a-z); a '-' first or last in the set is itself.
func globSet(glob string, p int, c byte) (bool, int) {
	not := p < len(glob) && (glob[p] == '^' || glob[p] == '!')
	if not {
		p++
	}
	in := false
	for ; p < len(glob) && glob[p] != ']'; p++ {
		lo := glob[p]
		if lo == '\\' && p+1 < len(glob) {
			p++
			lo = glob[p]
		}
		hi := lo
		if p+2 < len(glob) && glob[p+1] == '-' && glob[p+2] != ']' {
			hi = glob[p+2]
			p += 2
			if hi == '\\' && p+1 < len(glob) {
				p++
				hi = glob[p]
			}
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		in = in || lo <= c && c <= hi
	}
	return in != not, p + 1
}
