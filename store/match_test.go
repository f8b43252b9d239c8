package store

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMatchReadsBackWhatKeyBuilds builds keys for several patterns, windows and dims (IPv6 dims,
// dims holding the separator, empty dims) and checks Match returns exactly the window and dims.
func TestMatchReadsBackWhatKeyBuilds(t *testing.T) {
	at := time.Date(2026, 11, 22, 13, 45, 0, 0, shanghai)
	families := []*Family{
		flow(t),
		adRevenue(t),
		mustFamily(t, FamilySpec{Name: "api", Pattern: "api:calls:{<tenant>:<endpoint>}:<window>",
			HourFormat: "yyyyMMddHH", DayFormat: "yyyyMMdd", HourRetention: time.Hour, DayRetention: 24 * time.Hour}),
		mustFamily(t, FamilySpec{Name: "mid", Pattern: "m:<window>:<user>:tail",
			DayFormat: "yyyy-MM-dd", DayRetention: 24 * time.Hour}),
		mustFamily(t, FamilySpec{Name: "bare", Pattern: "<window>", HourFormat: "yyyyMMddHH", HourRetention: time.Hour}),
	}
	dimSets := map[string][][]string{
		"flow":       {{"app123", "device456", "127.0.0.1"}, {"a", "b", "fe80::1"}, {"", "d", "x"}, {"app", "dev", ""}},
		"ad_revenue": {{"app1", "banner123"}, {"ch", "ad:with:colons"}, {"ch", ""}},
		"api":        {{"t1", "/v1/users"}, {"t", "a}b"}},
		"mid":        {{"u1"}, {"u:2"}, {"user:tail"}},
		"bare":       {{}},
	}
	for _, f := range families {
		for _, g := range f.Granularities() {
			w := WindowAt(g, at, shanghai)
			for _, dims := range dimSets[f.Name()] {
				key, err := f.Key(w, dims)
				if err != nil {
					t.Fatal(err)
				}
				got, gotDims, ok := f.Match(g, key, shanghai)
				if !ok || !got.Start.Equal(w.Start) || strings.Join(gotDims, "\x00") != strings.Join(dims, "\x00") {
					t.Errorf("%s %s %q: match %v %v %q; want %v %q", f.Name(), g, key, ok, got.Start, gotDims, w.Start, dims)
				}
			}
		}
	}
}

// TestMatchRefusesOtherKeys feeds keys that must not match: other families, bad windows, wrong
// widths, stray text, binary bytes and a megabyte of separators (which must not take long).
func TestMatchRefusesOtherKeys(t *testing.T) {
	f := flow(t)
	huge := "flow:count:" + strings.Repeat(":", 1<<20) + "2026112213"
	for _, key := range []string{
		"",
		"flow:count:a:b:c",                    // no window
		"flow:count:a:b:c:20261122",           // a day window in an hour-only family
		"flow:count:a:b:c:2026112299",         // hour 99
		"flow:count:a:b:c:2026112213x",        // trailing text
		"flow:count:a:b:2026112213",           // a dim short
		"flow:counts:a:b:c:2026112213",        // another prefix
		"{app1:banner123}:2026112213",         // another family
		"flow:count:a:b:c:\x00\x01\x1b[31m13", // binary where the window goes
	} {
		if _, _, ok := f.Match(Hour, key, shanghai); ok {
			t.Errorf("%q matched flow", key)
		}
	}
	start := time.Now()
	_, dims, ok := f.Match(Hour, huge, shanghai)
	if !ok {
		t.Error("a 1 MB key of separators did not match")
	} else if len(dims[2]) != 1<<20-3 {
		t.Errorf("a 1 MB key of separators: ip of %d bytes, want %d", len(dims[2]), 1<<20-3)
	}
	t.Logf("matching a 1 MB key took %v", time.Since(start))
}

// TestClassifyPicksTheFirstFamily checks keys go to the first family that claims them, hour
// before day, and that a key no family claims is reported as such.
func TestClassifyPicksTheFirstFamily(t *testing.T) {
	families := []*Family{flow(t), adRevenue(t)}
	for key, want := range map[string]string{
		"flow:count:a:b:c:2026112213": "flow hour",
		"{ch:ad}:2026112213":          "ad_revenue hour",
		"{ch:ad}:20261122":            "ad_revenue day",
		"session:abc":                 "",
	} {
		c, ok := Classify(families, key, shanghai)
		got := ""
		if ok {
			got = c.Family.Name() + " " + c.Window.Granularity.String()
		}
		if got != want {
			t.Errorf("%q classified as %q, want %q", key, got, want)
		}
	}
}

// FuzzMatch checks, for any key, that a match reads back exactly: building the key again from the
// window and dims found gives the same key.
func FuzzMatch(f *testing.F) {
	for _, seed := range []string{
		"flow:count:app123:device456:127.0.0.1:2023080117",
		"flow:count:a:b:fe80::1:2026112213",
		"flow:count:::::2026112213",
		"{app1:banner123}:20230515",
		"{app1:banner123}:2023051514",
		"flow:count:a:b:c:2023022930",
		"\x00\xff:flow:count",
	} {
		f.Add(seed)
	}
	families := []*Family{flow(f), adRevenue(f)}
	f.Fuzz(func(t *testing.T, key string) {
		if len(key) > maxFuzzInput {
			return
		}
		for _, fam := range families {
			for _, g := range fam.Granularities() {
				w, dims, ok := fam.Match(g, key, shanghai)
				if !ok {
					continue
				}
				back, err := fam.Key(w, dims)
				if err != nil || back != key {
					t.Fatalf("%s %s: %q matched as %v %q, which builds %q (%v)", fam.Name(), g, key, w.Start, dims, back, err)
				}
			}
		}
	})
}

// BenchmarkClassify measures reading keys back against three families: one of each family's and
// one key of none, as a sweep meets them.
func BenchmarkClassify(b *testing.B) {
	api := mustFamily(b, FamilySpec{Name: "api", Pattern: "api:calls:{<tenant>:<endpoint>}:<window>",
		HourFormat: "yyyyMMddHH", DayFormat: "yyyyMMdd", HourRetention: time.Hour, DayRetention: 24 * time.Hour})
	families := []*Family{flow(b), adRevenue(b), api}
	keys := []string{
		"flow:count:app123:device456:127.0.0.1:2026112213",
		"{app1:banner123}:20261122",
		"api:calls:{t1:/v1/users}:2026112213",
		"session:7f3a9c0e-1b2d-4e5f-8a9b-0c1d2e3f4a5b",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Classify(families, keys[i%len(keys)], shanghai)
	}
}

// FuzzParsePattern checks that any pattern text parses or is refused without a panic, and that a
// pattern that parses builds keys that read back to the same dims and window.
func FuzzParsePattern(f *testing.F) {
	for _, seed := range []string{
		"flow:count:<app>:<device>:<ip>:<window>", "{<channel>:<ad>}:<window>", "<window>", "a<b><window>",
		"<window>:<window>", "<a:<window>", "x>y:<window>", "<>:<window>", "{}:<window>", "\xff<a>\x00<window>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > maxFuzzInput {
			return
		}
		p, err := ParsePattern(text)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q refused without a word", text)
			}
			return
		}
		if p.String() != text {
			t.Fatalf("%q reads as %q", text, p.String())
		}
		fam, err := NewFamily(FamilySpec{Name: "f", Pattern: text, HourFormat: "yyyyMMddHH", HourRetention: time.Hour})
		if err != nil {
			t.Fatalf("the pattern parsed but the family did not: %v", err)
		}
		// Dims read back exactly when they hold none of the pattern's separators (the documented
		// rule): build them from a letter the pattern does not use.
		var r rune
		for _, c := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" {
			if !strings.ContainsRune(text, c) {
				r = c
				break
			}
		}
		if r == 0 {
			return
		}
		dims := make([]string, len(p.Dims()))
		for i := range dims {
			dims[i] = strings.Repeat(string(r), i+1)
		}
		w := WindowAt(Hour, time.Date(2026, 11, 22, 9, 0, 0, 0, shanghai), shanghai)
		key, err := fam.Key(w, dims)
		if err != nil {
			t.Fatal(err)
		}
		gw, gdims, ok := fam.Match(Hour, key, shanghai)
		if !ok || !gw.Start.Equal(w.Start) || !slices.Equal(gdims, dims) {
			t.Fatalf("%q built %q, which reads back as %v %v %v", text, key, ok, gw, gdims)
		}
	})
}
