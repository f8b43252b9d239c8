package report

import (
	"fmt"
	"io"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeStructures prints the sections of the queues, limiters, uniques, locks and Bloom filters
// configured.
func writeStructures(out io.Writer, s *snapshot.Snapshot) {
	writeDelayQueues(out, s.DelayQueues)
	writeListQueues(out, s.ListQueues)
	writeJobQueues(out, s.JobQueues)
	if len(s.Limiters) > 0 {
		fmt.Fprintln(out)
		tb := NewTable("LIMITER", "KIND", ">WINDOW", ">LIMIT", ">KEYS", ">HITS", ">AT LIMIT", ">OVER", ">ALLOWED/H", ">REJECTED/H", ">REFUSED", "BUSIEST")
		for _, l := range s.Limiters {
			busiest := ""
			if len(l.Top) > 0 {
				busiest = fmt.Sprintf("%s (%s)", l.Top[0].Key, format.Commas(l.Top[0].Count))
			}
			nk := format.NotKept
			if !l.KeepsDecisions() { // the library decides; hourglass counts no decisions
				tb.Row(l.Name, cells.LimiterKind(l), perKey(l.WindowMS, format.Millis), perKey(l.Limit, format.Commas), format.Commas(l.Keys),
					format.Total(l.Hits, l.HitsSaturated), format.Commas(l.AtLimit), cells.Over(l), nk, nk, cells.Refused(l), busiest)
				continue
			}
			tb.Row(l.Name, cells.LimiterKind(l), perKey(l.WindowMS, format.Millis), perKey(l.Limit, format.Commas), format.Commas(l.Keys), format.Total(l.Hits, l.HitsSaturated),
				format.Commas(l.AtLimit), cells.Over(l), format.CommasOf(l.Allowed, format.Unknown), format.CommasOf(l.Rejected, format.Unknown), cells.Refused(l), busiest)
		}
		tb.Write(out, "")
		for _, l := range s.Limiters {
			wrongTypeNote(out, "limiter", l.Name, l.WrongType)
			if l.Unknown > 0 {
				fmt.Fprintf(out, "  limiter %s: %s in no layout %s reads (unknown layout), e.g. %s\n", l.Name, format.Count(l.Unknown, "key", "keys"), l.Layout, l.UnknownNote)
			}
		}
	}
	writeUniques(out, s.Uniques)
	if len(s.Locks) > 0 {
		fmt.Fprintln(out)
		tb := NewTable("LOCKS", ">HELD", ">NO TTL", "EXAMPLES")
		for _, l := range s.Locks {
			ex := ""
			if len(l.Examples) > 0 {
				e := l.Examples[0]
				ex = fmt.Sprintf("%s held by %s, TTL %s", e.Key, e.Token, format.Millis(e.TTLMS))
			}
			tb.Row(l.Name, format.Commas(l.Held), format.Commas(l.NoTTL), ex)
		}
		tb.Write(out, "")
		for _, l := range s.Locks {
			wrongTypeNote(out, "lock", l.Name, l.WrongType)
		}
	}
	writeBlooms(out, s.Blooms)
}

// writeUniques prints the unique and bitmap families: the current window's count and the unions,
// then a line for each union not read (skipped over the sweep's budget, or failed).
func writeUniques(out io.Writer, uniques []snapshot.Unique) {
	if len(uniques) == 0 {
		return
	}
	fmt.Fprintln(out)
	tb := NewTable("UNIQUES", "KIND", "CURRENT", ">KEYS", ">COUNT", ">7-DAY UNION", ">30-DAY UNION")
	for _, u := range uniques {
		cur, keys, count := "-", "0", "0"
		for _, w := range u.Windows {
			if w.Current {
				cur, keys, count = w.Granularity+" "+w.Window, format.Commas(w.Keys), format.Total(w.Count, w.Saturated)
			}
		}
		tb.Row(u.Name, u.Kind, cur, keys, count, cells.Union(u.Union7d, u.Union7dSkipped, u.Error, skippedText),
			cells.Union(u.Union30d, u.Union30dSkipped, u.Error, skippedText))
	}
	tb.Write(out, "")
	for _, u := range uniques {
		wrongTypeNote(out, u.Kind, u.Name, u.WrongType)
		for _, n := range unionNotes(u) {
			fmt.Fprintf(out, "  %s %s: %s\n", u.Kind, u.Name, n)
		}
	}
}

// skippedText is a union's cell when the sweep's budget left it out: what it would have read
// ("skipped: 12.0 MiB over budget"). The other cells are cells.Union's.
func skippedText(skip *snapshot.UnionSkip) string { return format.Skipped(skip.Bytes) }

// UnionNotes say why a family's unions were not read: each skipped one with its budget and
// reason, and the family's error.
func unionNotes(u snapshot.Unique) []string {
	var notes []string
	for _, s := range []struct {
		days string
		skip *snapshot.UnionSkip
	}{{"7-day", u.Union7dSkipped}, {"30-day", u.Union30dSkipped}} {
		if s.skip != nil {
			notes = append(notes, fmt.Sprintf("%s union %s (it may read %s: %s)",
				s.days, format.Skipped(s.skip.Bytes), format.BytesIEC(s.skip.BudgetBytes), s.skip.Reason))
		}
	}
	if u.Error != "" {
		notes = append(notes, "error: "+u.Error)
	}
	return notes
}

// wrongTypeNote says how many keys of a structure's pattern hold something else, when any do.
func wrongTypeNote(out io.Writer, kind, name string, n int64) {
	if n > 0 {
		fmt.Fprintf(out, "  %s %s: %s another type or a value that is no count; left out above\n",
			kind, name, format.Count(n, "key of its pattern holds", "keys of its pattern hold"))
	}
}

// perKey is a limiter's configured window or limit, or "per key" when a limits limiter's keys
// spell their own.
func perKey(n *int64, f func(int64) string) string {
	if n == nil {
		return "per key"
	}
	return f(*n)
}
