package store

import (
	"testing"
	"time"
)

func TestGlobs(t *testing.T) {
	g, err := ParseGlobs([]string{"flow:count:test:*", "tmp:?", "q:[ab]:*", "z:[!x]", `lit\*`})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{
		"flow:count:test:1:2": true, "flow:count:prod:1": false, "tmp:1": true, "tmp:12": false,
		"q:a:1": true, "q:c:1": false, "z:y": true, "z:x": false, "lit*": true, "litx": false,
		"flow:count:test:\n": true,
	} {
		if g.Match(key) != want {
			t.Errorf("%q: match %v, want %v", key, !want, want)
		}
	}
	// Byte by byte, as SCAN MATCH reads them: ? is one byte of a two-byte letter, a set holds
	// bytes, \ escapes inside a set, and a key need not be UTF-8.
	g, err = ParseGlobs([]string{"tmp:??", `a[\]]b`, "[\xc3]", "\xff*", "[z-a]"})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{
		"tmp:é": true, "tmp:ab": true, "tmp:a": false, "a]b": true, "a\\b": false, "\xc3": true, "é": false,
		"\xff\x00": true, "m": true, "\xfe": false,
	} {
		if g.Match(key) != want {
			t.Errorf("%q: match %v, want %v", key, !want, want)
		}
	}
	if (Globs{}).Match("anything") {
		t.Error("no patterns matched a key")
	}
	for _, bad := range [][]string{{""}, {"a["}} {
		if _, err := ParseGlobs(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestFamilyExclude leaves out of a family the keys its exclude globs name, though they fit the
// pattern.
func TestFamilyExclude(t *testing.T) {
	f, err := NewFamily(FamilySpec{Name: "flow", Pattern: "flow:<app>:<window>", DayFormat: "yyyyMMdd", DayRetention: 24 * 3600e9,
		Exclude: []string{"flow:test-*"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Classify([]*Family{f}, "flow:web:20261123", time.UTC); !ok {
		t.Fatal("flow:web:20261123 is the family's")
	}
	if _, ok := Classify([]*Family{f}, "flow:test-a:20261123", time.UTC); ok {
		t.Fatal("an excluded key was classified")
	}
	if _, err := NewFamily(FamilySpec{Name: "x", Pattern: "x:<window>", DayFormat: "yyyyMMdd", DayRetention: 1, Exclude: []string{"["}}); err == nil {
		t.Fatal("a bad exclude glob was accepted")
	}
}
