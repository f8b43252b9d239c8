package config

import "testing"

// TestOneLine: an error's text keeps to one line: control characters and line separators are
// written as Go escapes; bytes that are not UTF-8 stay as they are, unless the text had a
// character to escape, when they read as U+FFFD.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                "plain",
		"a\nb":                 `a\nb`,
		"tab\t\x00\x7f":        `tab\t\x00\x7f`,
		"c1\u0085\u2028\u2029": `c1\u0085\u2028\u2029`,
		"bidi\u202eevil":       "bidi\u202eevil",
		"bad\xff":              "bad\xff",
		"bad\xff\n":            "bad\uFFFD" + `\n`,
		"\\already":            "\\already",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
