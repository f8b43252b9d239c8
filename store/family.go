package store

import (
	"fmt"
	"sync/atomic"
	"time"
)

// FamilySpec describes a counter family as a config file gives it.
type FamilySpec struct {
	Name          string
	Pattern       string        // e.g. "flow:count:<app>:<device>:<ip>:<window>"
	HourFormat    string        // Java style, e.g. "yyyyMMddHH"; "" means no hour windows
	DayFormat     string        // Java style, e.g. "yyyyMMdd"; "" means no day windows
	HourRetention time.Duration // how long an hour window is kept after it ends
	DayRetention  time.Duration // how long a day window is kept after it ends
	// Location is the time zone the family's windows are cut in: which hour or day a key names.
	// nil leaves it to the Store or sweep that handles the family (their Location).
	Location *time.Location
	// Exclude are glob patterns (see Globs) of keys that fit the pattern but are not the family's.
	Exclude []string
}

// SpecError says which field of a FamilySpec is wrong. Field is the config key name.
type SpecError struct {
	Field string
	Msg   string
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Msg }

// Family is a validated counter family: one pattern written in hour and/or day windows.
type Family struct {
	name    string
	pattern *Pattern
	specs   [2]*windowSpec // indexed by Granularity; nil when the family lacks it
	loc     *time.Location // nil: the handler's default
	exclude Globs
}

type windowSpec struct {
	format    WindowFormat
	retention time.Duration
	// parsed caches windows read back from key names: a sweep meets the same few dozen windows
	// in millions of keys. Entries are immutable, so readers on many goroutines need no lock.
	parsed [64]atomic.Pointer[parsedWindow]
}

type parsedWindow struct {
	text string
	loc  *time.Location
	w    Window
}

// parse is format.parse through the cache.
func (s *windowSpec) parse(g Granularity, text string, loc *time.Location) (Window, bool) {
	var h uint32 = 2166136261
	for i := 0; i < len(text); i++ {
		h = (h ^ uint32(text[i])) * 16777619
	}
	slot := &s.parsed[h%uint32(len(s.parsed))]
	if p := slot.Load(); p != nil && p.text == text && p.loc == loc {
		return p.w, true
	}
	w, ok := s.format.parse(g, text, loc)
	if ok {
		slot.Store(&parsedWindow{text: text, loc: loc, w: w})
	}
	return w, ok
}

// NewFamily validates spec and returns the family.
func NewFamily(spec FamilySpec) (*Family, error) {
	if spec.Name == "" {
		return nil, &SpecError{"name", "a family needs a name"}
	}
	p, err := ParsePattern(spec.Pattern)
	if err != nil {
		return nil, &SpecError{"pattern", err.Error()}
	}
	f := &Family{name: spec.Name, pattern: p, loc: spec.Location}
	if f.exclude, err = ParseGlobs(spec.Exclude); err != nil {
		return nil, &SpecError{"exclude", err.Error()}
	}
	for _, g := range []struct {
		gran               Granularity
		format             string
		retention          time.Duration
		formatKey, retnKey string
	}{
		{Hour, spec.HourFormat, spec.HourRetention, "hour_format", "hour_retention"},
		{Day, spec.DayFormat, spec.DayRetention, "day_format", "day_retention"},
	} {
		if g.format == "" {
			if g.retention != 0 {
				return nil, &SpecError{g.retnKey, fmt.Sprintf("set without %s", g.formatKey)}
			}
			continue
		}
		wf, err := ParseWindowFormat(g.gran, g.format)
		if err != nil {
			return nil, &SpecError{g.formatKey, err.Error()}
		}
		if g.retention <= 0 {
			return nil, &SpecError{g.retnKey, fmt.Sprintf("must be above zero when %s is set", g.formatKey)}
		}
		f.specs[g.gran] = &windowSpec{format: wf, retention: g.retention}
	}
	if f.specs[Hour] == nil && f.specs[Day] == nil {
		return nil, &SpecError{"hour_format", "a family needs hour_format, day_format or both"}
	}
	return f, nil
}

// Excludes reports whether key is one of the family's exclude patterns: not the family's, even
// if it fits the pattern.
func (f *Family) Excludes(key string) bool { return f.exclude.Match(key) }

// Exclude returns the family's exclude globs.
func (f *Family) Exclude() Globs { return f.exclude }

// Name returns the family's name.
func (f *Family) Name() string { return f.name }

// Location returns the time zone the family's windows are cut in; nil when the family leaves it
// to the Store or sweep that handles it.
func (f *Family) Location() *time.Location { return f.loc }

// Zone returns the time zone the family's windows are cut in: its own, or def when it has none.
func (f *Family) Zone(def *time.Location) *time.Location {
	if f.loc != nil {
		return f.loc
	}
	return def
}

// Pattern returns the family's key pattern.
func (f *Family) Pattern() *Pattern { return f.pattern }

// Dims returns the names of the family's placeholders other than <window>.
func (f *Family) Dims() []string { return f.pattern.Dims() }

// Has reports whether the family is written in windows of granularity g.
func (f *Family) Has(g Granularity) bool { return f.specs[g] != nil }

// Granularities returns the granularities the family is written in, hour first.
func (f *Family) Granularities() []Granularity {
	var gs []Granularity
	for _, g := range []Granularity{Hour, Day} {
		if f.Has(g) {
			gs = append(gs, g)
		}
	}
	return gs
}

// Format returns the window format of granularity g; ok is false when the family lacks it.
func (f *Family) Format(g Granularity) (wf WindowFormat, ok bool) {
	if s := f.specs[g]; s != nil {
		return s.format, true
	}
	return WindowFormat{}, false
}

// Retention returns how long windows of granularity g are kept after they end (0 if absent).
func (f *Family) Retention(g Granularity) time.Duration {
	if s := f.specs[g]; s != nil {
		return s.retention
	}
	return 0
}

// ExpireAt is the window-aligned expiry of w's keys: the window's end plus the retention. Every
// writer computes the same instant, whoever writes first. When the clocks go back an hour, the
// repeated hour's two windows format to one key; both get the later window's expiry.
func (f *Family) ExpireAt(w Window) time.Time {
	end := w.End
	if s := f.specs[w.Granularity]; s != nil {
		if next := WindowAt(w.Granularity, w.End, w.Start.Location()); s.format.Format(next) == s.format.Format(w) {
			end = next.End
		}
	}
	return end.Add(f.Retention(w.Granularity))
}

// SharesSlot reports whether the family's hour and day keys for the same dims always land in one
// Redis Cluster slot, so one script can write both. A family with one granularity always does.
func (f *Family) SharesSlot() bool {
	return !(f.Has(Hour) && f.Has(Day)) || f.pattern.SharesSlot()
}

// Key returns the key of window w for dims (in Dims order).
func (f *Family) Key(w Window, dims []string) (string, error) {
	s := f.specs[w.Granularity]
	if s == nil {
		return "", fmt.Errorf("family %s has no %s windows", f.name, w.Granularity)
	}
	return f.pattern.Key(dims, s.format.Format(w))
}
