package report

import (
	"fmt"
	"io"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// writeStructures prints the sections of the queues, limiters, uniques and locks configured.
func writeStructures(out io.Writer, s *scanner.Snapshot) {
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
			if l.Layout != "" && l.Layout != "hourglass" { // the library decides; hourglass counts no decisions
				nk := format.NotKept
				tb.Row(l.Name, l.Layout, perKey(l.WindowMS, format.Millis), perKey(l.Limit, format.Commas), format.Commas(l.Keys), format.Commas(l.Hits),
					format.Commas(l.AtLimit), nk, nk, nk, format.Commas(l.RefusedInWindow), busiest)
				continue
			}
			tb.Row(l.Name, l.Kind, format.Millis(l.WindowMS), format.Commas(l.Limit), format.Commas(l.Keys), format.Commas(l.Hits),
				format.Commas(l.AtLimit), format.Commas(l.OverLimit), format.Commas(l.Allowed), format.Commas(l.Rejected), nkIfZero(l.RefusedInWindow), busiest)
		}
		tb.Write(out, "")
		for _, l := range s.Limiters {
			wrongTypeNote(out, "limiter", l.Name, l.WrongType)
			if l.Unknown > 0 {
				fmt.Fprintf(out, "  limiter %s: %s keys in no layout %s reads (unknown layout), e.g. %s\n", l.Name, format.Commas(l.Unknown), l.Layout, l.UnknownNote)
			}
		}
	}
	if len(s.Uniques) > 0 {
		fmt.Fprintln(out)
		tb := NewTable("UNIQUES", "KIND", "CURRENT", ">KEYS", ">COUNT", ">7-DAY UNION", ">30-DAY UNION")
		for _, u := range s.Uniques {
			cur, keys, count := "-", "0", "0"
			for _, w := range u.Windows {
				if w.Current {
					cur, keys, count = w.Granularity+" "+w.Window, format.Commas(w.Keys), format.Commas(w.Count)
				}
			}
			tb.Row(u.Name, u.Kind, cur, keys, count, format.Commas(u.Union7d), format.Commas(u.Union30d))
		}
		tb.Write(out, "")
		for _, u := range s.Uniques {
			wrongTypeNote(out, u.Kind, u.Name, u.WrongType)
		}
	}
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
}

// wrongTypeNote says how many keys of a structure's pattern hold something else, when any do.
func wrongTypeNote(out io.Writer, kind, name string, n int64) {
	if n > 0 {
		fmt.Fprintf(out, "  %s %s: %s keys of its pattern hold another type or a value that is no count; left out above\n",
			kind, name, format.Commas(n))
	}
}

// perKey is a limiter's configured window or limit, or "per key" when a limits limiter's keys
// spell their own.
func perKey(n int64, f func(int64) string) string {
	if n == 0 {
		return "per key"
	}
	return f(n)
}

// nkIfZero is n, or "—" for hourglass's own limiters, which count no refusals in their keys.
func nkIfZero(n int64) string {
	if n == 0 {
		return format.NotKept
	}
	return format.Commas(n)
}
