package store

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The fuzz targets of the key layouts: what a key builder writes, the matching reads back. Each
// runs its seeds (testdata/fuzz) in the ordinary test run; `.ci/fuzz` runs each for a minute.

// maxFuzzInput bounds a fuzz input: the properties below are about structure, not size (the
// tests of a 1 MB key are ordinary tests), and long inputs only slow the fuzzer down.
const maxFuzzInput = 4096

// fuzzZones are zones whose rules test the window arithmetic: none, fixed odd offsets, DST at
// 2 a.m., DST at midnight (Chile, Cuba, Egypt: the day starts at 1 a.m.), and half-hour DST.
var fuzzZones = []*time.Location{
	time.UTC, shanghai, mustLoad("America/New_York"), mustLoad("Asia/Kolkata"), mustLoad("Pacific/Chatham"),
	mustLoad("America/Santiago"), mustLoad("America/Havana"), mustLoad("Africa/Cairo"), mustLoad("Australia/Lord_Howe"),
}

// fuzzTime maps any number to an instant between 1970 and 2068, which every window format,
// yy included, writes in full; uniformly, so the fuzzer meets DST days as often as any other.
func fuzzTime(n int64) time.Time {
	const from, span = 0, 3124137600 // 1970-01-01 to 2068-12-31
	return time.Unix(from+(n%span+span)%span, 0)
}

// fuzzZone picks one of fuzzZones.
func fuzzZone(n uint8) *time.Location { return fuzzZones[int(n)%len(fuzzZones)] }

// fuzzFamilies are families whose keys read back unambiguously when each side's dims but the
// last hold no separator: the window ends the key, or nothing but literal text stands before it.
func fuzzFamilies(t testing.TB) []*Family {
	return []*Family{
		flow(t),
		adRevenue(t),
		mustFamily(t, FamilySpec{Name: "mid", Pattern: "m:<window>:<user>:<page>|tail",
			HourFormat: "yy-MM-dd HH", DayFormat: "dd.MM.yyyy", HourRetention: time.Hour, DayRetention: 24 * time.Hour,
			Exclude: []string{"m:*:test-*|tail"}}),
		mustFamily(t, FamilySpec{Name: "bare", Pattern: "<window>", DayFormat: "yyyyMMdd", DayRetention: time.Hour}),
		mustFamily(t, FamilySpec{Name: "utc", Pattern: "u:{<a>}:<window>", HourFormat: "yyyy_MM_dd_HH", HourRetention: time.Hour,
			Location: time.UTC}),
	}
}

// readsBack reports whether dims satisfy the documented rule for reading a key back: on each side
// of <window>, every dim but the side's last holds no copy of the literal that follows it.
func readsBack(p *Pattern, dims []string) bool {
	for _, side := range [][]segment{p.segments[:p.windowSeg], p.segments[p.windowSeg+1:]} {
		last := -1
		for i, s := range side {
			if s.literal == "" {
				last = i
			}
		}
		for i, s := range side {
			if s.literal == "" && i != last && strings.Contains(dims[s.dim], side[i+1].literal) {
				return false
			}
		}
	}
	return true
}

// FuzzClassify builds a key of each family from any dims at any instant in any of fuzzZones, and
// checks that it classifies back to that family, granularity, window and dims, unless its exclude
// globs name it; and that the window read back holds the instant the key was built for.
func FuzzClassify(f *testing.F) {
	families := fuzzFamilies(f)
	f.Fuzz(func(t *testing.T, a, b, c string, at int64, zone uint8) {
		if len(a)+len(b)+len(c) > maxFuzzInput {
			return
		}
		instant, loc := fuzzTime(at), fuzzZone(zone)
		for _, fam := range families {
			dims := []string{a, b, c}[:len(fam.Dims())]
			if !readsBack(fam.pattern, dims) {
				continue
			}
			for _, g := range fam.Granularities() {
				w := WindowAt(g, instant, fam.Zone(loc))
				key, err := fam.Key(w, dims)
				if err != nil {
					t.Fatal(err)
				}
				cl, ok := Classify([]*Family{fam}, key, loc)
				if fam.Excludes(key) {
					if ok {
						t.Fatalf("%s: %q is excluded but classified", fam.Name(), key)
					}
					continue
				}
				if !ok || cl.Family != fam || cl.Window.Granularity != g || !slices.Equal(cl.Dims, dims) {
					t.Fatalf("%s %s in %v at %v: %q classified as %v %+v", fam.Name(), g, loc, instant, key, ok, cl)
				}
				if wf, _ := fam.Format(g); !cl.Window.Contains(instant) && !repeated(wf, cl.Window, w) {
					t.Fatalf("%s %s in %v: %q, built for %v (window %v), reads back as the window %v to %v",
						fam.Name(), g, fam.Zone(loc), key, instant.In(fam.Zone(loc)), w.Start, cl.Window.Start, cl.Window.End)
				}
			}
		}
		// Among all the families, a key goes to the first that claims it: to one whose builder
		// writes it again from what was read.
		key := "flow:count:" + a + ":" + b + ":" + c
		for _, k := range []string{key, a, a + b, "{" + a + ":" + b + "}:" + c} {
			if cl, ok := Classify(families, k, loc); ok {
				if back, err := cl.Family.Key(cl.Window, cl.Dims); err != nil || back != k || cl.Family.Excludes(k) {
					t.Fatalf("%q classified as %s %v %q, which builds %q (%v)", k, cl.Family.Name(), cl.Window.Start, cl.Dims, back, err)
				}
			}
		}
	})
}

// repeated reports whether a and b are the two passes of an hour the clocks go back over: windows
// one after the other that wf names alike, so their key reads back as either.
func repeated(wf WindowFormat, a, b Window) bool {
	return wf.Format(a) == wf.Format(b) && (a.End.Equal(b.Start) || b.End.Equal(a.Start))
}

// FuzzWindowFormat checks any window format: one that parses formats every window of its
// granularity (1970 to 2068, in any of fuzzZones) as text that reads back to that window, and
// reads back only text it would have written; one that does not parse is refused with an error.
func FuzzWindowFormat(f *testing.F) {
	f.Fuzz(func(t *testing.T, java, text string, at int64, zone uint8, day bool) {
		if len(java)+len(text) > maxFuzzInput {
			return
		}
		g := Hour
		if day {
			g = Day
		}
		wf, err := ParseWindowFormat(g, java)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		instant, loc := fuzzTime(at), fuzzZone(zone)
		w := WindowAt(g, instant, loc)
		s := wf.Format(w)
		back, err := wf.Parse(g, s, loc)
		if err != nil || back.Granularity != g || wf.Format(back) != s || !back.Contains(instant) && !repeated(wf, back, w) {
			t.Fatalf("%q in %v: the window of %v (%v to %v) formats as %q, which reads back as %v to %v (%v)",
				java, loc, instant.In(loc), w.Start, w.End, s, back.Start, back.End, err)
		}
		if got, err := wf.Parse(g, text, loc); err == nil && wf.Format(got) != text {
			t.Fatalf("%q read %q as %v, which formats as %q", java, text, got.Start, wf.Format(got))
		}
	})
}

// FuzzParsePatternKeys checks the key patterns of limiters, locks and queues (no <window>): one
// that parses builds, from dims that hold none of its literal text, keys that read back to the
// same dims, and reads back only keys it would build; one that does not parse is refused.
func FuzzParsePatternKeys(f *testing.F) {
	f.Fuzz(func(t *testing.T, text, key, dim string) {
		if len(text)+len(key)+len(dim) > maxFuzzInput {
			return
		}
		p, err := ParseKeyPattern(text)
		if err != nil {
			if _, werr := ParsePattern(text); werr == nil && !strings.Contains(text, "<"+WindowPlaceholder+">") {
				t.Fatalf("%q: refused without <window> (%v) but accepted with one", text, err)
			}
			return
		}
		if p.String() != text {
			t.Fatalf("%q reads as %q", text, p.String())
		}
		if dims, ok := p.Match(key); ok {
			if back, err := p.Key(dims, ""); err != nil || back != key {
				t.Fatalf("%q: %q matched as %q, which builds %q (%v)", text, key, dims, back, err)
			}
		}
		dims := make([]string, len(p.Dims()))
		for i := range dims {
			dims[i] = strings.Repeat(dim, i%3+1)
		}
		for i, s := range p.segments {
			if s.literal != "" && strings.Contains(dim, s.literal) || dim == "" && len(dims) > 0 {
				return // a dim holding its own separator is read back by the rule FuzzClassify checks
			}
			// Nor one whose end and the separator after it hold the separator sooner ("0" before
			// "00" reads as "" then "0…"): a dim ends at its separator's first occurrence.
			if s.literal == "" && s.dim >= 0 && i+1 < len(p.segments) {
				if next := p.segments[i+1].literal; next != "" && strings.Index(dims[s.dim]+next, next) != len(dims[s.dim]) {
					return
				}
			}
		}
		key, err = p.Key(dims, "")
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := p.Match(key); !ok || !slices.Equal(got, dims) {
			t.Fatalf("%q built %q from %q, which reads back as %v %q", text, key, dims, ok, got)
		}
	})
}

// FuzzGlobs checks exclude globs: any pattern compiles or is refused with an error; a pattern of
// escaped bytes matches exactly those bytes; "*" after a pattern matches whatever follows a key
// it matched; and a pattern matches as Redis's SCAN MATCH would (globMatch, below).
func FuzzGlobs(f *testing.F) {
	f.Fuzz(func(t *testing.T, glob, key string) {
		if len(glob)+len(key) > maxFuzzInput {
			return
		}
		g, err := ParseGlobs([]string{glob})
		if err != nil {
			return
		}
		m := g.Match(key)
		if want := globMatch(glob, key); m != want {
			t.Fatalf("%q on %q: match %v, want %v as SCAN MATCH reads it", glob, key, m, want)
		}
		// A glob ending in a lone backslash ends in that backslash as a literal, as SCAN MATCH
		// reads it; a "*" after it would be escaped, so the backslash is doubled before the "*".
		more := glob + "*"
		if n := len(glob) - len(strings.TrimRight(glob, `\`)); n%2 == 1 {
			more = glob + `\*`
		}
		if wild, _ := ParseGlobs([]string{more}); m && !wild.Match(key+"\x00tail") {
			t.Fatalf("%q matches %q but %q does not match it with more after", glob, key, more)
		}
		var lit strings.Builder
		for i := 0; i < len(key); i++ {
			lit.WriteString(`\` + key[i:i+1])
		}
		exact, err := ParseGlobs([]string{lit.String()})
		if key == "" {
			return
		}
		if err != nil || !exact.Match(key) || exact.Match(key+"x") || exact.Match(key[1:]) {
			t.Fatalf("the escaped bytes of %q (%q) do not match exactly that key (%v)", key, lit.String(), err)
		}
	})
}

// globMatch is SCAN MATCH's reading of a glob, byte by byte, written plainly to hold Globs to:
// * any run of bytes, ? one byte, [set] one byte of the set (ranges a-z either way round, \
// escaping the next byte, ^ or ! in front for none of it), \ escaping the next byte outside.
func globMatch(glob, key string) bool {
	memo := map[[2]int]bool{}
	var match func(p, k int) bool
	match = func(p, k int) bool {
		at := [2]int{p, k}
		if v, ok := memo[at]; ok {
			return v
		}
		var v bool
		switch {
		case p == len(glob):
			v = k == len(key)
		case glob[p] == '*':
			v = match(p+1, k) || k < len(key) && match(p, k+1)
		case k == len(key):
			v = false
		case glob[p] == '?':
			v = match(p+1, k+1)
		case glob[p] == '[':
			in, next := classMatch(glob, p+1, key[k])
			v = in && match(next, k+1)
		case glob[p] == '\\' && p+1 < len(glob):
			v = glob[p+1] == key[k] && match(p+2, k+1)
		default:
			v = glob[p] == key[k] && match(p+1, k+1)
		}
		memo[at] = v
		return v
	}
	return match(0, 0)
}

// classMatch reads the set that starts at glob[p] (after its '['), reporting whether c is in
// it and where the glob goes on after its ']'.
func classMatch(glob string, p int, c byte) (bool, int) {
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
			p += 2
			if glob[p] == '\\' && p+1 < len(glob) {
				p++
			}
			hi = glob[p]
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		in = in || lo <= c && c <= hi
	}
	return in != not, p + 1
}

// FuzzCompanion checks the companion keys hourglass names for a queue: each is known for a
// companion, reads back to its queue, and lands in the queue's hash slot when a name can (see
// companionKey).
func FuzzCompanion(f *testing.F) {
	f.Fuzz(func(t *testing.T, queue string) {
		if len(queue) > maxFuzzInput || queue == "" {
			return
		}
		inSlot := hasTag(queue) || !strings.Contains(queue, "}")
		for _, name := range []func(string) string{InFlightKey, ProcessingKey, TestQueueKey} {
			key := name(queue)
			if inSlot && Slot(key) != Slot(queue) || !IsCompanionKey(key) {
				t.Fatalf("%q: companion %q in slot %d (queue's %d), known %v", queue, key, Slot(key), Slot(queue), IsCompanionKey(key))
			}
			// "{q}" and "q" name one companion ("{q}" hashes as "q" does): either reads back.
			if q, ok := CompanionQueue(key); !ok || q != queue && "{"+q+"}" != queue {
				t.Fatalf("%q: companion %q reads back as queue %q %v", queue, key, q, ok)
			}
		}
	})
}
