package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"hourglass/scanner"
	"hourglass/store"
	"hourglass/tui"
)

// writeReport prints a snapshot as an aligned text report. Every string in a Snapshot that came
// from Redis is already escaped.
func writeReport(out io.Writer, s *scanner.Snapshot, cfg *Config) {
	state := "complete"
	if !s.Scan.Complete {
		state = "PARTIAL (the sweep did not finish)"
	}
	fmt.Fprintf(out, "hourglass snapshot of %s (%s) at %s\n", s.Target, s.Mode, s.TakenAt.Format("2006-01-02 15:04:05 MST"))
	took := fmt.Sprintf("%d ms", s.Scan.DurationMS)
	if s.Scan.DurationMS >= 1000 {
		took = fmt.Sprintf("%.1f s", float64(s.Scan.DurationMS)/1000)
	}
	if s.Scan.DurationMS > 0 {
		took += fmt.Sprintf(", %s keys/s", tui.Commas(s.Scan.KeysSeen*1000/s.Scan.DurationMS))
	}
	fmt.Fprintf(out, "scan: %s keys seen, %s in %d counter families; %s in %s\n",
		tui.Commas(s.Scan.KeysSeen), tui.Commas(s.Scan.KeysMatched), len(s.Counters), state, took)
	if len(s.Scan.Masters) > 1 {
		parts := make([]string, len(s.Scan.Masters))
		for i, m := range s.Scan.Masters {
			parts[i] = m.Addr + " " + tui.Commas(m.KeysSeen)
		}
		fmt.Fprintf(out, "keys by master: %s\n", strings.Join(parts, " · "))
	}
	fmt.Fprintln(out)

	tb := newTable("FAMILY", ">KEYS", ">THIS HOUR", ">AVG/S", ">TODAY", ">NO TTL", ">OVER RET", ">EXPIRED", ">WRONG TYPE", ">NOT INT", ">MISMATCHED")
	for _, f := range s.Counters {
		hour, today, avg, mism := "-", "-", "-", "-"
		if w := f.CurrentWindow("hour"); w != nil {
			hour = tui.Commas(w.Total)
		} else if has(f, "hour") {
			hour = "0"
		}
		if has(f, "hour") {
			avg = tui.Rate(f.HourAvgPerSec)
			if f.RatePerSec != nil {
				avg = tui.Rate(*f.RatePerSec)
			}
		}
		if w := f.CurrentWindow("day"); w != nil {
			today = tui.Commas(w.Total)
		} else if has(f, "day") {
			today = "0"
		}
		if f.Reconciliation != nil {
			mism = tui.Commas(f.MismatchedDims)
		}
		tb.row(f.Family, tui.Commas(f.Keys), hour, avg, today, tui.Commas(f.TTL.NoTTL), tui.Commas(f.TTL.OverRetention),
			tui.Commas(f.TTL.ExpiredButPresent), tui.Commas(f.WrongType), tui.Commas(f.NotInteger), mism)
	}
	tb.write(out, "")

	for i := range s.Counters {
		fmt.Fprintln(out)
		writeFamily(out, &s.Counters[i], cfg)
	}

	fmt.Fprintln(out)
	h := s.TTLHealth
	tb = newTable("TTL HEALTH", ">KEYS", ">MEMORY", "EXAMPLES")
	for _, p := range h.Problems() {
		mem := "-"
		if p.Sampled > 0 {
			mem = "~" + tui.BytesIEC(p.Bytes)
		}
		first := ""
		if len(p.Examples) > 0 {
			first = exampleText(p.Name, p.Examples[0], s)
		}
		tb.row(strings.ReplaceAll(p.Name, "_", " "), tui.Commas(p.Keys), mem, first)
		for _, ex := range p.Examples[min(1, len(p.Examples)):] {
			tb.row("", "", "", exampleText(p.Name, ex, s))
		}
	}
	tb.write(out, "")
	if h.MemoryNote != "" {
		fmt.Fprintf(out, "memory: %s\n", h.MemoryNote)
	}
	if h.NoTTL.Keys > 0 {
		fmt.Fprintln(out, "repair: `hourglass repair --dry-run` lists the expiries it would set on the keys with no TTL")
	}
	writeStructures(out, s)
}

// writeStructures prints the sections of the queues, limiters, uniques and locks configured.
func writeStructures(out io.Writer, s *scanner.Snapshot) {
	if len(s.DelayQueues) > 0 {
		fmt.Fprintln(out)
		tb := newTable("DELAY QUEUE", "KEY", ">DEPTH", ">DUE", ">IN FLIGHT", ">LAG", ">NEXT IN", ">≤1M", ">≤10M", ">≤1H", ">LATER")
		for _, q := range s.DelayQueues {
			if q.Error != "" {
				tb.row(q.Name, q.Key, "error: "+q.Error)
				continue
			}
			tb.row(q.Name, q.Key, tui.Commas(q.Depth), tui.Commas(q.Due), tui.Commas(q.InFlight), tui.Millis(q.OldestDueAgeMS), tui.Millis(q.NextDueInMS),
				tui.Commas(q.Schedule["1m"]), tui.Commas(q.Schedule["10m"]), tui.Commas(q.Schedule["1h"]), tui.Commas(q.Schedule["later"]))
		}
		tb.write(out, "")
	}
	if len(s.ListQueues) > 0 {
		fmt.Fprintln(out)
		tb := newTable("LIST QUEUE", "KEY", ">LENGTH", ">PROCESSING")
		for _, q := range s.ListQueues {
			tb.row(q.Name, q.Key, tui.Commas(q.Length), tui.Commas(q.Processing))
		}
		tb.write(out, "")
	}
	if len(s.Limiters) > 0 {
		fmt.Fprintln(out)
		tb := newTable("LIMITER", "KIND", ">WINDOW", ">LIMIT", ">KEYS", ">HITS", ">AT LIMIT", ">OVER", ">ALLOWED/H", ">REJECTED/H", "BUSIEST")
		for _, l := range s.Limiters {
			busiest := ""
			if len(l.Top) > 0 {
				busiest = fmt.Sprintf("%s (%s)", l.Top[0].Key, tui.Commas(l.Top[0].Count))
			}
			tb.row(l.Name, l.Kind, tui.Millis(l.WindowMS), tui.Commas(l.Limit), tui.Commas(l.Keys), tui.Commas(l.Hits),
				tui.Commas(l.AtLimit), tui.Commas(l.OverLimit), tui.Commas(l.Allowed), tui.Commas(l.Rejected), busiest)
		}
		tb.write(out, "")
		for _, l := range s.Limiters {
			wrongTypeNote(out, "limiter", l.Name, l.WrongType)
		}
	}
	if len(s.Uniques) > 0 {
		fmt.Fprintln(out)
		tb := newTable("UNIQUES", "KIND", "CURRENT", ">KEYS", ">COUNT", ">7-DAY UNION", ">30-DAY UNION")
		for _, u := range s.Uniques {
			cur, keys, count := "-", "0", "0"
			for _, w := range u.Windows {
				if w.Current {
					cur, keys, count = w.Granularity+" "+w.Window, tui.Commas(w.Keys), tui.Commas(w.Count)
				}
			}
			tb.row(u.Name, u.Kind, cur, keys, count, tui.Commas(u.Union7d), tui.Commas(u.Union30d))
		}
		tb.write(out, "")
		for _, u := range s.Uniques {
			wrongTypeNote(out, u.Kind, u.Name, u.WrongType)
		}
	}
	if len(s.Locks) > 0 {
		fmt.Fprintln(out)
		tb := newTable("LOCKS", ">HELD", ">NO TTL", "EXAMPLES")
		for _, l := range s.Locks {
			ex := ""
			if len(l.Examples) > 0 {
				e := l.Examples[0]
				ex = fmt.Sprintf("%s held by %s, TTL %s", e.Key, e.Token, tui.Millis(e.TTLMS))
			}
			tb.row(l.Name, tui.Commas(l.Held), tui.Commas(l.NoTTL), ex)
		}
		tb.write(out, "")
		for _, l := range s.Locks {
			wrongTypeNote(out, "lock", l.Name, l.WrongType)
		}
	}
}

// wrongTypeNote says how many keys of a structure's pattern hold something else, when any do.
func wrongTypeNote(out io.Writer, kind, name string, n int64) {
	if n > 0 {
		fmt.Fprintf(out, "  %s %s: %s keys of its pattern hold another type or a value that is no count; left out above\n",
			kind, name, tui.Commas(n))
	}
}

func has(f scanner.FamilyStats, g string) bool {
	for _, x := range f.Granularities {
		if x == g {
			return true
		}
	}
	return false
}

// exampleText describes one unhealthy key.
func exampleText(problem string, ex scanner.Example, s *scanner.Snapshot) string {
	due := ex.ExpireAt.In(s.TakenAt.Location()).Format("2006-01-02 15:04")
	var what string
	switch problem {
	case "no_ttl":
		what = "no TTL; due " + due
	case "over_retention":
		what = fmt.Sprintf("expires in %s; due %s", tui.Millis(ex.TTLMS), due)
	case "expired_but_present":
		what = fmt.Sprintf("due %s, %s ago; expires in %s", due, tui.Age(s.TakenAt.Sub(ex.ExpireAt)), tui.Millis(ex.TTLMS))
	case "wrong_type":
		what = "a " + orUnknown(ex.Type)
	case "not_integer":
		what = fmt.Sprintf("value %q", ex.Value)
	case "lock_no_ttl":
		what = "held by " + ex.Value + " with no TTL: nothing will free it"
	}
	if ex.Bytes > 0 {
		what += ", " + tui.BytesIEC(ex.Bytes)
	}
	return fmt.Sprintf("%s  (%s)", ex.Key, what)
}

func orUnknown(s string) string {
	if s == "" {
		return "non-string"
	}
	return s
}

// writeFamily prints one family's windows, series, health and reconciliation.
func writeFamily(out io.Writer, f *scanner.FamilyStats, cfg *Config) {
	var fam *store.Family
	for _, c := range cfg.Counters {
		if c.Name() == f.Family {
			fam = c
		}
	}
	line := f.Family
	if fam != nil {
		line += "  " + fam.Pattern().String()
		var kept []string
		for _, g := range fam.Granularities() {
			kept = append(kept, fmt.Sprintf("%s windows kept %s", g, span(fam.Retention(g))))
		}
		line += "  (" + strings.Join(kept, ", ") + ")"
	}
	fmt.Fprintln(out, line)
	tb := newTable("  WINDOW", ">TOTAL", ">KEYS", "TOP DIMS")
	for _, g := range f.Granularities {
		if w := f.CurrentWindow(g); w != nil {
			tb.row(fmt.Sprintf("  %s %s", g, w.Window), tui.Commas(w.Total), tui.Commas(w.Keys), topText(f, w))
		} else {
			tb.row(fmt.Sprintf("  %s (current)", g), "0", "0", "no keys yet")
		}
	}
	if len(tb.rows) > 0 {
		tb.write(out, "")
	}
	if len(f.Series.Hours) > 0 {
		fmt.Fprintf(out, "  last 48 hours  %s  peak %s\n", tui.Sparkline(f.Series.Hours), tui.Commas(tui.MaxOf(f.Series.Hours)))
	}
	if len(f.Series.Days) > 0 {
		fmt.Fprintf(out, "  last 30 days   %s  peak %s\n", tui.Sparkline(f.Series.Days), tui.Commas(tui.MaxOf(f.Series.Days)))
	}
	counts := map[string][2]int{}
	for _, w := range f.Windows {
		c := counts[w.Granularity]
		c[0]++
		if w.Expired {
			c[1]++
		}
		counts[w.Granularity] = c
	}
	var parts []string
	for _, g := range f.Granularities {
		c := counts[g]
		p := fmt.Sprintf("%d %s windows", c[0], g)
		if c[1] > 0 {
			p += fmt.Sprintf(" (%d past retention)", c[1])
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(out, "  windows        %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(out, "  ttl            %s ok, %s no TTL, %s over retention, %s expired but present\n",
		tui.Commas(f.TTL.OK), tui.Commas(f.TTL.NoTTL), tui.Commas(f.TTL.OverRetention), tui.Commas(f.TTL.ExpiredButPresent))
	if r := f.Reconciliation; r != nil {
		text := fmt.Sprintf("%d ended %s with every hour retained, %s dims %s", r.Days, plural(r.Days, "day", "days"),
			tui.Commas(r.Dims), plural(int(min(r.Dims, 2)), "tuple", "tuples"))
		switch {
		case r.Days == 0:
			text = "nothing to check: no keys in an ended day whose hours are all still retained"
		case r.Mismatched == 0:
			text += ": hours add up to the day"
		default:
			text += fmt.Sprintf(": %s disagree, off by %s in all", tui.Commas(r.Mismatched), tui.Commas(r.Difference))
		}
		if r.Sampled < 1 {
			text += fmt.Sprintf(" (estimated from a 1/%.0f sample)", 1/r.Sampled)
		}
		fmt.Fprintf(out, "  reconcile      %s\n", text)
		for _, m := range r.Examples {
			fmt.Fprintf(out, "                 %s %s: hours %s, day %s\n", m.Day, tui.DimsText(f.Dims, m.Dims), tui.Commas(m.Hours), tui.Commas(m.DayValue))
		}
	}
}

func topText(f *scanner.FamilyStats, w *scanner.WindowStats) string {
	var parts []string
	for _, t := range w.Top[:min(3, len(w.Top))] {
		parts = append(parts, tui.DimsText(f.Dims, t.Dims)+" "+tui.Commas(t.Value))
	}
	return strings.Join(parts, " · ")
}

// textTable aligns columns; a header starting with ">" is right-aligned.
type textTable struct {
	heads []string
	right []bool
	rows  [][]string
}

func newTable(heads ...string) *textTable {
	t := &textTable{}
	for _, h := range heads {
		t.right = append(t.right, strings.HasPrefix(h, ">"))
		t.heads = append(t.heads, strings.TrimPrefix(h, ">"))
	}
	return t
}

func (t *textTable) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(out io.Writer, indent string) {
	widths := make([]int, len(t.heads))
	for _, r := range append([][]string{t.heads}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range append([][]string{t.heads}, t.rows...) {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.right[i] {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
}

// span formats a retention: whole days as "30d", whole hours as "48h".
func span(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	default:
		return d.String()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
