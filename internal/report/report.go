package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// Snapshot prints a snapshot as an aligned text report; families are the counter families swept,
// for their patterns and retentions. Every string in a Snapshot that came from Redis is already
// escaped.
func Snapshot(out io.Writer, s *snapshot.Snapshot, families []*store.Family) {
	writeScan(out, s)
	writeServer(out, s.Server)
	writeInferred(out, s)
	for _, w := range s.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	// With no family (and no lock) configured there is nothing to total: no table of zeros.
	if len(s.Counters) > 0 {
		fmt.Fprintln(out)
		writeCounters(out, s)
	}
	for i := range s.Counters {
		fmt.Fprintln(out)
		writeFamily(out, &s.Counters[i], families)
	}
	if len(s.Counters)+len(s.Locks) > 0 || hasProblems(&s.TTLHealth) {
		fmt.Fprintln(out)
		writeTTLHealth(out, s)
	}
	writeStructures(out, s)
	writeUnclaimed(out, s)
}

// hasProblems reports whether h counts any key.
func hasProblems(h *snapshot.Health) bool {
	for _, p := range h.Problems() {
		if p.Keys > 0 {
			return true
		}
	}
	return false
}

// writeScan prints the report's head: the target, and how much of the keyspace the sweep saw,
// how fast, and on which masters.
func writeScan(out io.Writer, s *snapshot.Snapshot) {
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
		took += fmt.Sprintf(", %s keys/s", format.Commas(s.Scan.KeysSeen*1000/s.Scan.DurationMS))
	}
	fmt.Fprintf(out, "scan: %s seen, %s in %s; %s in %s\n", format.Count(s.Scan.KeysSeen, "key", "keys"),
		format.Commas(s.Scan.KeysMatched), format.Count(len(s.Counters), "counter family", "counter families"), state, took)
	switch {
	case s.Scan.Complete:
	case s.Scan.Coverage > 0:
		fmt.Fprintf(out, "coverage: %.1f%% of the keys the servers hold (DBSIZE); figures marked ≈ are estimates for the\n"+
			"  whole keyspace with their 95%% intervals, ≥ what was seen where too few pages hold it to scale\n", 100*s.Scan.Coverage)
	case s.Scan.DBSizeNote != "":
		fmt.Fprintf(out, "coverage: unknown (%s): figures are what was seen, marked ≥\n", s.Scan.DBSizeNote)
	}
	if len(s.Scan.Masters) > 1 {
		parts := make([]string, len(s.Scan.Masters))
		for i, m := range s.Scan.Masters {
			parts[i] = m.Addr + " " + format.Commas(m.KeysSeen)
		}
		fmt.Fprintf(out, "keys by master: %s\n", strings.Join(parts, " · "))
	}
}

// writeCounters prints one row a counter family: its current totals, rate and problem counts.
func writeCounters(out io.Writer, s *snapshot.Snapshot) {
	tb := NewTable("FAMILY", ">KEYS", ">THIS HOUR", ">AVG/S", ">TODAY", ">NO TTL", ">OVER RET", ">EXPIRED", ">WRONG TYPE", ">NOT INT", ">MISMATCHED")
	for _, f := range s.Counters {
		hour, today, avg, mism := "-", "-", "-", "-"
		if w := f.CurrentWindow("hour"); w != nil {
			hour = cells.Total(w.Total, w.Saturated, w.TotalEstimate)
		} else if f.Has("hour") {
			hour = "0"
		}
		switch {
		case f.RatePerSec != nil:
			avg = format.Rate(*f.RatePerSec)
		case f.HourAvgPerSec != nil:
			avg = format.Rate(*f.HourAvgPerSec)
		}
		if w := f.CurrentWindow("day"); w != nil {
			today = cells.Total(w.Total, w.Saturated, w.TotalEstimate)
		} else if f.Has("day") {
			today = "0"
		}
		if f.Reconciliation != nil {
			mism = format.Commas(f.MismatchedDims)
		}
		if f.ZoneMismatch != nil { // the hour read is not the one being written: not 0
			hour = "? zone"
		}
		ttl := ttlCells(&f)
		tb.Row(f.Family, cells.Count(f.Keys, f.KeysEstimate), hour, avg, today, ttl[1], ttl[2], ttl[3],
			cells.Count(f.WrongType, f.Health.WrongType.KeysEstimate), cells.Count(f.NotInteger, f.Health.NotInteger.KeysEstimate), mism)
	}
	tb.Write(out, "")
}

// writeTTLHealth prints the problems of all families added up, with their examples, and what
// to do about keys with no TTL.
func writeTTLHealth(out io.Writer, s *snapshot.Snapshot) {
	h := s.TTLHealth
	tb := NewTable("TTL HEALTH", ">KEYS", ">MEMORY", "EXAMPLES")
	for _, p := range h.Problems() {
		mem := "-"
		if p.Sampled > 0 {
			mem = "~" + format.BytesIEC(p.Bytes)
		}
		first := ""
		if len(p.Examples) > 0 {
			first = exampleText(p.Name, p.Examples[0], s)
		}
		tb.Row(strings.ReplaceAll(p.Name, "_", " "), cells.Count(p.Keys, p.KeysEstimate), mem, first)
		for _, ex := range p.Examples[min(1, len(p.Examples)):] {
			tb.Row("", "", "", exampleText(p.Name, ex, s))
		}
	}
	tb.Write(out, "")
	if h.MemoryNote != "" {
		fmt.Fprintf(out, "memory: %s\n", h.MemoryNote)
	}
	if h.NoTTL.Keys > 0 {
		fmt.Fprintln(out, "repair: `hourglass repair --dry-run` lists the expiries it would set on the keys with no TTL")
	}
}

// problemNotes say what is wrong with an example key of each problem; due is its expiry as the
// window sets it.
var problemNotes = map[string]func(ex snapshot.Example, due string, takenAt time.Time) string{
	"no_ttl": func(_ snapshot.Example, due string, _ time.Time) string { return "no TTL; due " + due },
	"over_retention": func(ex snapshot.Example, due string, _ time.Time) string {
		return "expires in " + format.Millis(ex.TTLMS) + "; due " + due
	},
	"expired_but_present": func(ex snapshot.Example, due string, takenAt time.Time) string {
		return fmt.Sprintf("due %s, %s ago; expires in %s", due, format.Age(takenAt.Sub(ex.ExpireAt)), format.Millis(ex.TTLMS))
	},
	"wrong_type": func(ex snapshot.Example, _ string, _ time.Time) string { return "a " + orUnknown(ex.Type) },
	// The value is escaped already: %q would escape it a second time.
	"not_integer": func(ex snapshot.Example, _ string, _ time.Time) string { return `value "` + ex.Value + `"` },
	"lock_no_ttl": func(ex snapshot.Example, _ string, _ time.Time) string {
		return "held by " + ex.Value + " with no TTL: nothing will free it"
	},
}

// exampleText describes one unhealthy key.
func exampleText(problem string, ex snapshot.Example, s *snapshot.Snapshot) string {
	var what string
	if note := problemNotes[problem]; note != nil {
		what = note(ex, ex.ExpireAt.In(s.TakenAt.Location()).Format("2006-01-02 15:04"), s.TakenAt)
	}
	if ex.Bytes > 0 {
		what += ", " + format.BytesIEC(ex.Bytes)
	}
	return fmt.Sprintf("%s  (%s)", ex.Key, what)
}

func orUnknown(s string) string {
	if s == "" {
		return "non-string"
	}
	return s
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
