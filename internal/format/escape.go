package format

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxEscaped is how many bytes of a name Escape shows before it cuts the rest.
const MaxEscaped = 200

// Escape makes text read from Redis safe to print on a terminal: printable characters stay as
// they are; a backslash becomes \\; newline, carriage return and tab become \n, \r and \t; any
// other control character, format character (bidi overrides among them) or byte that is not
// UTF-8 becomes \xNN or \u{NNNN}. No escape sequence can reach the terminal. Past MaxEscaped
// bytes of text the rest is cut and its length said: "…(+N bytes)".
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
	var b strings.Builder
	i := 0
	for i < len(text) && i < MaxEscaped {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, text[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u{%04x}`, r)
		default:
			b.WriteString(text[i : i+n])
		}
		i += n
	}
	if i < len(text) {
		fmt.Fprintf(&b, "…(+%d bytes)", len(text)-i)
	}
	return b.String()
}
