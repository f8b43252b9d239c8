package config

import (
	"strings"
	"testing"
)

// A [[bloom]] entry is read as the other pattern entries are: its name, pattern and excludes;
// a problem in it names its file and line; a profile may name it; a session may add one, and
// not one whose name the config in use gives a [[bloom]] already.
func TestBloomEntries(t *testing.T) {
	cfg, err := Parse("c.toml", src(
		`[[bloom]]`,
		`name = "seen"`,
		`pattern = "bf:<name>"`,
		`exclude = ["bf:tmp:*"]`,
		`[[profile]]`,
		`name = "p"`,
		`bloom = { seen = 10 }`,
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Structures.Blooms
	if len(b) != 1 || b[0].Name != "seen" || b[0].Pattern.String() != "bf:<name>" || !b[0].Exclude.Match("bf:tmp:1") || b[0].Exclude.Match("bf:x") {
		t.Fatalf("blooms = %+v", b)
	}
	if _, ok := b[0].Pattern.Match("bf:users"); !ok {
		t.Error("the pattern does not match bf:users")
	}
	if !cfg.Watches() {
		t.Error("a config with only a [[bloom]] watches nothing")
	}
	if len(cfg.Profiles) != 1 || len(cfg.Profiles[0].Entries) != 1 || cfg.Profiles[0].Entries[0] != (ProfileEntry{Kind: "bloom", Name: "seen", Rate: 10}) {
		t.Errorf("profiles = %+v", cfg.Profiles)
	}

	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"no pattern", src(`[[bloom]]`, `name = "b"`), "c.toml:1: bloom.pattern: missing: every [[bloom]] needs a pattern"},
		{"windowed", src(`[[bloom]]`, `name = "b"`, `pattern = "bf:<window>"`), "c.toml:3: bloom.pattern:"},
		{"unknown key", src(`[[bloom]]`, `name = "b"`, `pattern = "bf:<n>"`, `capacity = 5`), "c.toml:4: bloom.capacity: unknown key ([[bloom]] takes name, pattern, exclude)"},
		{"duplicate", src(`[[bloom]]`, `name = "b"`, `pattern = "a:<n>"`, `[[bloom]]`, `name = "b"`, `pattern = "c:<n>"`), `c.toml:5: bloom.name: duplicate [[bloom]] name "b"`},
		{"profile naming a missing filter", src(`[[bloom]]`, `name = "b"`, `pattern = "a:<n>"`, `[[profile]]`, `name = "p"`, `bloom = { c = 1 }`), `c.toml:6: profile.bloom.c: no bloom named "c"`},
	} {
		_, err := Parse("c.toml", c.data, nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s…", c.name, err, c.want)
		}
	}

	e, err := cfg.ParseEntries("session", []byte("[[bloom]]\nname = \"other\"\npattern = \"bo:<n>\"\n"))
	if err != nil || len(e.Structures.Blooms) != 1 {
		t.Fatalf("a session's [[bloom]]: %+v, %v", e, err)
	}
	if len(cfg.WithEntries(e).Structures.Blooms) != 2 {
		t.Error("WithEntries drops the added [[bloom]]")
	}
	if _, err := cfg.ParseEntries("session", []byte("[[bloom]]\nname = \"seen\"\npattern = \"b2:<n>\"\n")); err == nil ||
		!strings.HasPrefix(err.Error(), `session:2: bloom.name: the config in use already has a [[bloom]] named "seen"`) {
		t.Errorf("a name taken: %v", err)
	}
}
