package store

import "testing"

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
	if (Globs{}).Match("anything") {
		t.Error("no patterns matched a key")
	}
	for _, bad := range [][]string{{""}, {"a["}} {
		if _, err := ParseGlobs(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
