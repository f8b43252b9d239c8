package format

import (
	"fmt"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain:key":      "plain:key",
		"a\x1b[31mred":   `a\x1b[31mred`,
		"tab\there\n":    `tab\there\n`,
		`back\slash`:     `back\\slash`,
		"\xff\xfe":       `\xff\xfe`,
		"北京:ok":          "北京:ok",
		"bidi\u202eevil": `bidi\u{202e}evil`,
		"c1\u009bcsi":    `c1\u{009b}csi`,
		"del\x7f":        `del\x7f`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("k", 1<<20)
	if got := Escape(long); len(got) > MaxEscaped+30 || !strings.HasSuffix(got, fmt.Sprintf("…(+%d bytes)", 1<<20-MaxEscaped)) {
		t.Errorf("a 1 MB name escapes to %d bytes ending %q", len(got), got[len(got)-20:])
	}
}

// TestEscapeFunc: the core leaves text with nothing to rewrite as it is, rewrites only what its
// rule names, and cuts past its limit saying how much it cut.
func TestEscapeFunc(t *testing.T) {
	never := func(rune, string) (string, bool) { return "", false }
	star := func(r rune, _ string) (string, bool) { return "*", r == 'x' }
	for _, c := range []struct {
		in    string
		limit int
		esc   func(rune, string) (string, bool)
		want  string
	}{
		{"plain", 0, never, "plain"},
		{"axbxc", 0, star, "a*b*c"},
		{"x", 0, star, "*"},
		{"abcdef", 3, never, "abc…(+3 bytes)"},
		{"axcdef", 3, star, "a*c…(+3 bytes)"},
		{"北京x", 4, star, "北京…(+1 bytes)"}, // a rune is never split: the cut falls after it
		{"", 0, star, ""},
	} {
		if got := EscapeFunc(c.in, c.limit, c.esc); got != c.want {
			t.Errorf("EscapeFunc(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}
