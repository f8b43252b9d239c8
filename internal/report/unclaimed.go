package report

import (
	"fmt"
	"io"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// maxUnclaimedGroups is how many of the largest unclaimed groups the report lists.
const maxUnclaimedGroups = 10

// writeUnclaimed prints the keys no entry of the config claims: how many, their estimated memory
// (or why it is unknown), their largest groups with the kind discover takes each to be, and where
// to turn them into config. With none it says so, so a reader knows they were counted.
func writeUnclaimed(out io.Writer, s *snapshot.Snapshot) {
	u := &s.Unclaimed
	fmt.Fprintln(out)
	if u.Keys == 0 {
		fmt.Fprintln(out, "Unclaimed keys: none (every key seen belongs to an entry of the config)")
		return
	}
	fmt.Fprintf(out, "Unclaimed keys: %s in %s, claimed by no entry of the config\n",
		scaled(u.Keys, u.KeysEstimate), format.Count(len(u.Groups), "group", "groups"))
	switch b := u.BytesEstimate; {
	case b != nil && !b.SoFar && b.High != nil:
		fmt.Fprintf(out, "memory: ≈%s (95%%: %s–%s; each group's sampled keys' mean MEMORY USAGE times its estimated keys)\n",
			format.BytesIEC(int64(b.Estimate)), format.BytesIEC(int64(b.Low)), format.BytesIEC(int64(*b.High)))
	case u.Bytes != nil && u.BytesNote != "":
		fmt.Fprintf(out, "memory: ~%s (%s)\n", format.BytesIEC(*u.Bytes), u.BytesNote)
	case u.Bytes != nil:
		fmt.Fprintf(out, "memory: ~%s\n", format.BytesIEC(*u.Bytes))
	case u.BytesNote != "":
		fmt.Fprintf(out, "memory: unknown: %s\n", u.BytesNote)
	default:
		fmt.Fprintln(out, "memory: unknown")
	}
	tb := NewTable("PATTERN", "KIND", ">KEYS", ">MEMORY", "CONFIDENCE")
	shown := u.Groups[:min(maxUnclaimedGroups, len(u.Groups))]
	for _, g := range shown {
		mem := format.Unknown
		switch b := g.BytesEstimate; {
		case b != nil && !b.SoFar:
			mem = "≈" + format.BytesIEC(int64(b.Estimate))
		case g.Bytes != nil && b != nil:
			mem = "≥" + format.BytesIEC(*g.Bytes)
		case g.Bytes != nil:
			mem = "~" + format.BytesIEC(*g.Bytes)
		}
		// discover builds patterns of safe ASCII; escaping is a guard, a no-op on those.
		tb.Row(format.Escape(g.Pattern), string(g.Kind), scaled(g.Keys, g.KeysEstimate), mem, string(g.Confidence))
	}
	if len(shown) > 0 {
		tb.Write(out, "  ")
	}
	if rest := u.Groups[len(shown):]; len(rest) > 0 {
		var keys int64
		for _, g := range rest {
			keys += g.Keys
		}
		fmt.Fprintf(out, "  %s, %s\n", format.Count(len(rest), "more group", "more groups"), format.Count(keys, "key", "keys"))
	}
	fmt.Fprintln(out, "discover: `hourglass discover` proposes a config entry for each group, with its evidence")
}

// scaled is the cell of a count of unclaimed keys seen: as cells.Count writes it, scaled to the
// whole keyspace when the sweep did not see every key (e is then set).
func scaled(n int64, e *discover.Estimate) string {
	if e == nil {
		return cells.Count(n, nil)
	}
	return cells.Count(int64(e.Estimate+0.5), e) // discover.Estimate is snapshot.Estimate: estimate.Shown
}
