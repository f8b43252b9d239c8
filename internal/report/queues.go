package report

import (
	"fmt"
	"io"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeDelayQueues prints the delay queues, then a line for each whose numbers are missing or
// suspect: a key that is not there, scores that are not times in the unit.
func writeDelayQueues(out io.Writer, queues []snapshot.DelayQueue) {
	if len(queues) == 0 {
		return
	}
	fmt.Fprintln(out)
	tb := NewTable("DELAY QUEUE", "KEY", "UNIT", ">DEPTH", ">DUE", ">IN FLIGHT", ">LAG", ">NEXT IN", ">≤1M", ">≤10M", ">≤1H", ">LATER")
	for _, q := range queues {
		key := cells.KeyOrPattern(q.Key, q.Pattern)
		switch {
		case q.Error != "":
			tb.Row(q.Name, key, q.Unit, "error: "+q.Error)
		case q.Missing:
			tb.Row(q.Name, key, q.Unit, "missing")
		default:
			u := format.Unknown
			tb.Row(q.Name, key, q.Unit, format.Commas(q.Depth), format.CommasOf(q.Due, u), format.CommasOf(q.InFlight, format.NotKept),
				format.MillisOf(q.OldestDueAgeMS, u), format.MillisOf(q.NextDueInMS, u),
				cells.Schedule(q, "1m"), cells.Schedule(q, "10m"), cells.Schedule(q, "1h"), cells.Schedule(q, "later"))
		}
	}
	tb.Write(out, "")
	for _, q := range queues {
		if q.Warning != "" {
			fmt.Fprintf(out, "  %s %s: %s\n", q.Name, cells.KeyOrPattern(q.Key, q.Pattern), q.Warning)
		}
	}
}

func writeListQueues(out io.Writer, queues []snapshot.ListQueue) {
	if len(queues) == 0 {
		return
	}
	fmt.Fprintln(out)
	tb := NewTable("LIST QUEUE", "KEY", ">LENGTH", ">LATENCY", ">PROCESSING", "PROCESSING KEY")
	for _, q := range queues {
		key := cells.KeyOrPattern(q.Key, q.Pattern)
		switch {
		case q.Missing && q.Error != "":
			tb.Row(q.Name, key, "missing: "+q.Error)
		case q.Missing:
			tb.Row(q.Name, key, "missing")
		case q.Error != "":
			tb.Row(q.Name, key, "error: "+q.Error)
		default:
			tb.Row(q.Name, key, format.Commas(q.Length), cells.Latency(q.LatencyMS, q.LatencyNote), format.CommasOf(q.Processing, format.NotKept), q.ProcessingKey)
		}
	}
	tb.Write(out, "")
	for _, q := range queues {
		if q.LatencyNote != "" {
			fmt.Fprintf(out, "  %s %s: latency unknown: %s\n", q.Name, cells.KeyOrPattern(q.Key, q.Pattern), q.LatencyNote)
		}
	}
}

// latencyNote says why a library's queues' latency is unknown: the first queue's reason, and how
// many queues share it.
func latencyNote(queues []snapshot.JobQueue) string {
	first, n := "", 0
	for _, q := range queues {
		if q.LatencyNote != "" {
			if n == 0 {
				first = q.Queue + ": latency unknown: " + q.LatencyNote
			}
			n++
		}
	}
	if n > 1 {
		first += " (and " + format.Count(n-1, "more queue", "more queues") + ")"
	}
	return first
}

// writeJobQueues prints each job library's queues as the library counts them: "—" where the
// library keeps no such number for the queue, "?" where it could not be read.
func writeJobQueues(out io.Writer, entries []snapshot.JobQueues) {
	for _, e := range entries {
		fmt.Fprintln(out)
		tb := NewTable(fmt.Sprintf("JOBS %s (%s)", e.Name, e.Layout), ">WAITING", ">LATENCY", ">ACTIVE", ">SCHEDULED", ">DUE", ">LAG", ">NEXT IN",
			">RETRY", ">DEAD", ">DONE")
		rows := e.Queues
		if e.Shared != nil && e.Shared.HasCounts() {
			shared := *e.Shared
			shared.Queue = "(all queues)"
			rows = append(append([]snapshot.JobQueue(nil), rows...), shared)
		}
		for _, q := range rows {
			if q.Error != "" {
				tb.Row(q.Queue, "error: "+q.Error)
				continue
			}
			tb.Row(cells.JobQueue(q)...)
		}
		if len(rows) == 0 {
			tb.Row("(no queues found)")
		}
		tb.Write(out, "")
		if e.QueuesFound > int64(len(e.Queues)) {
			fmt.Fprintf(out, "  %s not shown\n", format.Count(e.QueuesFound-int64(len(e.Queues)), "more queue", "more queues"))
		}
		for _, q := range rows {
			if q.Warning != "" {
				fmt.Fprintf(out, "  %s: %s\n", q.Queue, q.Warning)
			}
		}
		if n := latencyNote(e.Queues); n != "" {
			fmt.Fprintf(out, "  %s\n", n)
		}
		for _, n := range e.Notes {
			fmt.Fprintf(out, "  note: %s\n", n)
		}
		if e.Error != "" {
			fmt.Fprintf(out, "  error: %s\n", e.Error)
		}
		writeJobWorkers(out, e)
		writeThroughput(out, e)
	}
}

// writeThroughput prints what a job library counts of the jobs it ran, a row a queue (or one for
// all), and why a rate or a count is missing; or why the library keeps no count.
func writeThroughput(out io.Writer, e snapshot.JobQueues) {
	if len(e.Throughput) > 0 {
		fmt.Fprintln(out)
		tb := NewTable("JOBS RUN "+e.Name, ">RUN/S", ">FAILED/S", ">TODAY", ">FAILED", ">TOTAL", ">FAILED TOTAL", "DAYS (UTC, OLDEST FIRST)")
		for _, t := range e.Throughput {
			tb.Row(cells.Throughput(t)...)
		}
		tb.Write(out, "")
	}
	rateNote := ""
	for _, t := range e.Throughput {
		scope := cells.Throughput(t)[0]
		if t.Note != "" {
			fmt.Fprintf(out, "  %s: %s\n", scope, t.Note)
		} else if rateNote == "" && t.RateNote != "" {
			rateNote = scope + ": rate unknown: " + t.RateNote
		}
	}
	if rateNote != "" {
		fmt.Fprintf(out, "  %s\n", rateNote)
	}
	if e.ThroughputNote != "" {
		fmt.Fprintf(out, "  jobs run: %s\n", e.ThroughputNote)
	}
}
