package store

import (
	"strings"
	"time"
)

// Reading a key back: which family, granularity, window and dims it holds. Sweeps do this for every
// key they see, so it is plain string work with no regular expression. It is bounded for any key,
// since a key name is untrusted: binary bytes, a megabyte of separators.
//
// Every window format has a fixed width (yyyy is 4 bytes, MM 2, a literal 1), so the window is
// found by position. When the pattern ends with the window, it is at the end of the key. Otherwise
// it stands just before an occurrence of the literal that follows it, trying occurrences from the
// left. On each side of the window, dims are matched from the left. Each ends at the first
// occurrence of the literal that follows it. The side's last dim instead takes everything up to the
// side's final literal. So in flow:count:<app>:<device>:<ip>:<window> an IPv6 address "fe80::1" is
// read back whole. Only a side's other dims must not hold their separator.

// maxWindowTries bounds the window positions tried in one key, so a key made of separators costs
// no more than a short one.
const maxWindowTries = 64

// Match reports whether key is a key of family f in a window of granularity g, cut in the
// family's own time zone or, when it has none, in loc, and returns that window and the dims (in
// Dims order).
func (f *Family) Match(g Granularity, key string, loc *time.Location) (Window, []string, bool) {
	spec := f.specs[g]
	if spec == nil {
		return Window{}, nil, false
	}
	loc = f.Zone(loc)
	segs, wi := f.pattern.segments, f.pattern.windowSeg
	before, after := segs[:wi], segs[wi+1:]
	width := len(spec.format.layout)
	try := func(end int) (Window, []string, bool) {
		if end < width {
			return Window{}, nil, false
		}
		w, ok := spec.parse(g, key[end-width:end], loc)
		if !ok {
			return Window{}, nil, false
		}
		dims := make([]string, len(f.pattern.dims))
		if !matchSide(before, key[:end-width], dims) || !matchSide(after, key[end:], dims) {
			return Window{}, nil, false
		}
		return w, dims, true
	}
	if len(after) == 0 {
		return try(len(key))
	}
	lit := after[0].literal // the window is always followed by literal text, if by anything
	// The window ends no sooner than the literal text before it and the window itself: an end
	// inside them is not tried (a long literal of the following text's characters would use up
	// the tries before the window).
	first := width
	for _, s := range before {
		first += len(s.literal)
	}
	for off, tries := first, 0; tries < maxWindowTries && off <= len(key); tries++ {
		j := strings.Index(key[off:], lit)
		if j < 0 {
			break
		}
		if w, dims, ok := try(off + j); ok {
			return w, dims, true
		}
		off += j + 1
	}
	return Window{}, nil, false
}

// matchSide matches text against segments on one side of the window, filling dims. Literals must
// stand where they are. A dim ends at the first occurrence of the literal after it. The side's last
// dim takes what is left up to the final literal; before the window, that is the dim nearest it.
func matchSide(segs []segment, text string, dims []string) bool {
	for i, s := range segs {
		if s.literal != "" {
			if !strings.HasPrefix(text, s.literal) {
				return false
			}
			text = text[len(s.literal):]
			continue
		}
		if i == len(segs)-1 { // a dim at the very end takes the rest
			dims[s.dim] = text
			return true
		}
		lit := segs[i+1].literal // placeholders are always separated by literal text
		if i+1 == len(segs)-1 {
			// The last dim: up to the final literal, which must end the text.
			if !strings.HasSuffix(text, lit) {
				return false
			}
			dims[s.dim] = text[:len(text)-len(lit)]
			text = text[len(text)-len(lit):]
			continue
		}
		j := strings.Index(text, lit)
		if j < 0 {
			return false
		}
		dims[s.dim] = text[:j]
		text = text[j:]
	}
	return text == ""
}

// Classified is a key read back as one family's.
type Classified struct {
	Family *Family
	Window Window
	Dims   []string
}

// Classify finds the first of families (in their order) that key belongs to, trying hour windows
// before day windows; a family without a time zone of its own is read in loc.
func Classify(families []*Family, key string, loc *time.Location) (Classified, bool) {
	for _, f := range families {
		for g := Hour; g <= Day; g++ { // what Granularities returns, without allocating
			if !f.Has(g) {
				continue
			}
			if w, dims, ok := f.Match(g, key, loc); ok && !f.Excludes(key) {
				return Classified{Family: f, Window: w, Dims: dims}, true
			}
		}
	}
	return Classified{}, false
}
