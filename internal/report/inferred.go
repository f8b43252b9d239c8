package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeInferred says, when no config was given, that the entries reported were inferred from the
// keys, and lists them: what each is and what it matches, and which count only from the next
// sweep. The low-confidence groups are left for the unclaimed section, which lists them unused.
func writeInferred(out io.Writer, s *snapshot.Snapshot) {
	in := s.Inferred
	if in == nil {
		return
	}
	if len(in.Entries) == 0 {
		fmt.Fprintln(out, "entries: none given and none inferred yet (no config file; no group of keys is clear enough to count as one: see unclaimed below)")
		return
	}
	fmt.Fprintf(out, "entries: %d inferred from the keys (no config file; `hourglass discover` writes them as one):\n", len(in.Entries))
	counted := len(in.Entries) - in.Pending
	for i, e := range in.Entries {
		what := e.Pattern
		if what == "" {
			what = e.Key
		}
		if what == "" {
			what = e.Prefix
		}
		if what == "" && e.Layout != "" {
			what = "keys of " + e.Layout + ", where it puts them by default"
		}
		late := ""
		if i >= counted {
			late = " (found too late to count in this sweep)"
		}
		fmt.Fprintf(out, "  [[%s]] %s  %s%s\n", e.Table, e.Name, what, late)
	}
	writeWaiting(out, s)
}

// writeWaiting names the limiters found among the keys but not counted: their keys do not hold
// their limit, which discover could only guess.
func writeWaiting(out io.Writer, s *snapshot.Snapshot) {
	var waiting []string
	for _, g := range s.Unclaimed.Guessing() {
		waiting = append(waiting, g.Pattern)
	}
	if len(waiting) > 0 {
		fmt.Fprintf(out, "  not counted: %s (limiters whose keys do not hold their limit; `hourglass discover` writes them for you to set it)\n",
			strings.Join(waiting, ", "))
	}
}
