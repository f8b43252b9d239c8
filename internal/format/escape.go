package format

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxEscaped is how many bytes of a name Escape shows before it cuts the rest.
const MaxEscaped = 200

// Escape makes text read from Redis safe to print on a terminal. Printable characters stay as they
// are, and a backslash becomes \\. Newline, carriage return and tab become \n, \r and \t. Any other
// control character, format character (bidi overrides among them) or byte that is not UTF-8 becomes
// \xNN or \u{NNNN}. No escape sequence can reach the terminal. Past MaxEscaped bytes of text, the
// rest is cut and its length said: "…(+N bytes)".
func Escape(text string) string {
	clean := true
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c == '\\' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean && len(text) <= MaxEscaped {
		return text
	}
	return EscapeFunc(text, MaxEscaped, escapeRedis)
}

// escapeRedis is Escape's rule for one rune.
func escapeRedis(r rune, raw string) (string, bool) {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return fmt.Sprintf(`\x%02x`, raw[0]), true
	case r == '\\':
		return `\\`, true
	case r == '\n':
		return `\n`, true
	case r == '\r':
		return `\r`, true
	case r == '\t':
		return `\t`, true
	case r < 0x80 && !unicode.IsPrint(r):
		return fmt.Sprintf(`\x%02x`, r), true
	case !unicode.IsPrint(r):
		return fmt.Sprintf(`\u{%04x}`, r), true
	}
	return "", false
}

// EscapeFunc is the core of hourglass's escapers: Escape, discover's TOML strings and comments, and
// config's one-line errors. It rewrites s rune by rune, each rune as esc says, and a rune esc
// returns false for as it is. The raw argument is the rune's bytes. A byte that is not UTF-8 comes
// as utf8.RuneError, with raw that one byte. Past limit bytes of s (0: no limit), the rest is cut
// and its length said: "…(+N bytes)". It returns s as it is when nothing in it was rewritten or
// cut.
func EscapeFunc(s string, limit int, esc func(r rune, raw string) (string, bool)) string {
	var b strings.Builder
	done := 0 // s[:done] is in b, or needs no rewriting when b is empty
	i := 0
	for i < len(s) && (limit <= 0 || i < limit) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if text, ok := esc(r, s[i:i+n]); ok {
			b.WriteString(s[done:i])
			b.WriteString(text)
			done = i + n
		}
		i += n
	}
	if done == 0 && i == len(s) {
		return s
	}
	b.WriteString(s[done:i])
	if i < len(s) {
		fmt.Fprintf(&b, "…(+%d bytes)", len(s)-i)
	}
	return b.String()
}
