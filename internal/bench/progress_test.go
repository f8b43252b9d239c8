package bench

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestProgressOnATerminal checks the line on a terminal: each step rewrites it in place, cut to
// the width so that it never wraps, and the end clears it and says how long the run took.
func TestProgressOnATerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true, 2)
	p.next("writer: " + strings.Repeat("x", 200))
	p.next("sweep")
	p.end(true)
	got := out.String()
	parts := strings.Split(got, "\r\x1b[K")
	if len(parts) != 4 || parts[0] != "" || !strings.HasPrefix(parts[1], "hourglass: bench: 1/2 0s: writer: xxx") ||
		parts[2] != "hourglass: bench: 2/2 0s: sweep" || parts[3] != "hourglass: bench: 2 steps in 0s\n" {
		t.Fatalf("%q", got)
	}
	if n := utf8.RuneCountInString(parts[1]); n != 79 || !strings.HasSuffix(parts[1], "…") || strings.Contains(parts[1], "\n") {
		t.Errorf("a long step's line is %d columns: %q", n, parts[1])
	}
}

// TestProgressInALog checks the line elsewhere: a line of its own each step, and none cleared.
func TestProgressInALog(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false, 2)
	p.next("writer")
	p.end(false) // an error: no closing line, the error follows
	if got := out.String(); got != "hourglass: bench: 1/2 0s: writer\n" {
		t.Errorf("%q", got)
	}
}
