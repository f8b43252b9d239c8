package report

import (
	"fmt"
	"io"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeJobWorkers prints a job library's live processes as the library records them, stale ones
// marked STALE with why, and what the library does not record.
func writeJobWorkers(out io.Writer, e snapshot.JobQueues) {
	ws := e.Workers
	if ws == nil {
		return
	}
	fmt.Fprintln(out)
	if ws.Error != "" {
		fmt.Fprintf(out, "WORKERS %s (%s): error: %s\n", e.Name, e.Layout, ws.Error)
		return
	}
	heads := []string{fmt.Sprintf("WORKERS %s (%s)", e.Name, e.Layout)}
	for i, c := range cells.WorkerColumns[1:] {
		if i == 1 || i == 3 || i == 4 || i == 7 { // BUSY, LAST BEAT, EXPIRES, STARTED
			c = ">" + c
		}
		heads = append(heads, c)
	}
	tb := NewTable(heads...)
	for _, w := range ws.List {
		tb.Row(cells.Worker(w)...)
	}
	switch {
	case ws.Found == nil:
		tb.Row("(not recorded in Redis: see the note)")
	case len(ws.List) == 0:
		tb.Row("(none listed)")
	}
	tb.Write(out, "")
	if ws.Live != nil {
		fmt.Fprintf(out, "  %s live, %s stale\n", format.Commas(*ws.Live), format.CommasOf(ws.Stale, format.NotKept))
	}
	if n := ws.More(); n > 0 {
		fmt.Fprintf(out, "  %s not shown\n", format.Count(n, "more process", "more processes"))
	}
	for _, w := range ws.List {
		if w.Stale {
			fmt.Fprintf(out, "  %s: stale: %s\n", w.Identity, w.StaleWhy)
		}
	}
	for _, n := range ws.Notes {
		fmt.Fprintf(out, "  note: %s\n", n)
	}
}
