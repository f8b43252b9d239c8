package discover

import "testing"

// TestTOMLString: a proposal's strings are TOML basic strings: a quote and a backslash escaped,
// control characters as \uXXXX, a run of bytes that are not UTF-8 one U+FFFD, the rest as it is.
func TestTOMLString(t *testing.T) {
	for in, want := range map[string]string{
		"plain:key":       `"plain:key"`,
		`a"b\c`:           `"a\"b\\c"`,
		"nl\n\x1b[2J\x7f": `"nl\u000A\u001B[2J\u007F"`,
		"tab\there":       `"tab\u0009here"`,
		"bad\xff\xfeend":  "\"bad\uFFFDend\"",
		"bidi\u202eevil":  "\"bidi\u202eevil\"",
		"c1\u0085next":    "\"c1\u0085next\"",
		"北京:{id}":         `"北京:{id}"`,
		"":                `""`,
	} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %q, want %q", in, got, want)
		}
	}
}
