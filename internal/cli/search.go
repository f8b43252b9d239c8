package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

const searchUsage = `hourglass search: search a job queue's tasks for a payload substring or a JSON field.

Reads every task of the queue's sections (or of each --section given), page by page as the
console lists them, never a whole set at once, at the [scan] budget (--keys-per-second), to the
end of each section however long, and prints each match as it is found: its section, its place
there, its id and its payload (escaped, the first 200 bytes). --match is a substring of the
payload, or path=value for a JSON field (args.0.user_id=42 in a Sidekiq job, data.email=a@b.c in
a BullMQ job's data or an asynq task's payload); text in double quotes is always a substring.
A summary goes to stderr at the end; ctrl+c stops the search and says how far it got.

A queue that moves under the search (workers taking, producers adding) is searched so that every
task in it from the search's start to its end is tested at least once; a task may be printed
twice when the queue moved by more than a page (the summary counts it). A payload is tested on
its first 4 KiB.

Usage:
  hourglass search --addr A --layout L --queue Q --match M [--prefix P] [--section S]... [flags]
  hourglass search --addr A --layout sidekiq --shared --match M   (the schedule, retry and dead sets)

Flags:
`

func cmdSearch(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("search", searchUsage, shipped, stdout)
	tf.withBudget(fs)
	layout := fs.String("layout", "", "the queue's job library: sidekiq, bullmq, rq, celery or asynq")
	prefix := fs.String("prefix", "", "the library's prefix (default: the library's own)")
	queue := fs.String("queue", "", "the queue's `name`")
	shared := fs.Bool("shared", false, "search what the library keeps for all queues (Sidekiq's schedule, retry and dead sets; Celery's unacked)")
	match := fs.String("match", "", "what to look for: a `substring`, or path=value")
	var sections stringList
	fs.Var(&sections, "section", "search only this `section` (waiting, later, retry, dead, in_flight); repeat for more")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l, err := jobs.ParseLayout(*layout)
	if err != nil {
		return config.Usagef("search: --layout: %v", err)
	}
	m, err := jobs.ParseMatch(*match)
	if err != nil {
		return config.Usagef("search: --match: %v", err)
	}
	if (*queue == "") == !*shared {
		return config.Usagef("search: give --queue, or --shared")
	}
	src := jobs.Source{Layout: l, Prefix: *prefix}
	q := src.Queue(*queue)
	if *shared {
		q = src.SharedQueue()
	}
	secs, err := searchSections(q.Sections(), sections)
	if err != nil {
		return err
	}
	cfg, t, err := tf.open(ctx, stderr, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	if t.Embedded != nil {
		return config.Usagef("search: give --addr: the embedded Redis holds no job queue")
	}
	opt := jobs.SearchOptions{KeysPerSecond: cfg.Scan.KeysPerSecond, Now: t.Store.Now}
	prog, err := jobs.Search(ctx, t.RDB, q, secs, m, opt, func(found []jobs.Found, _ jobs.SearchProgress) {
		for _, f := range found {
			id := f.Task.ID
			if id == "" {
				id = "-"
			}
			fmt.Fprintf(stdout, "%s\t#%d\t%s\t%s\n", f.Section, f.At+1, format.Escape(id), format.Escape(cut(f.Task.Payload, 200)))
		}
	})
	fmt.Fprintln(stderr, "hourglass: "+searchSummary(m, prog))
	if err != nil {
		return fmt.Errorf("search: stopped after %s: %w", format.Count(prog.Scanned, "task", "tasks"), err)
	}
	return nil
}

// searchSections are the sections asked for, in the queue's order; all of them when none is.
func searchSections(have []jobs.TaskSection, asked []string) ([]jobs.TaskSection, error) {
	if len(asked) == 0 {
		return have, nil
	}
	var out []jobs.TaskSection
	for _, s := range have {
		if slices.Contains(asked, string(s)) {
			out = append(out, s)
		}
	}
	for _, a := range asked {
		if !slices.Contains(have, jobs.TaskSection(a)) {
			return nil, config.Usagef("search: --section %q: the queue keeps %v", a, have)
		}
	}
	return out, nil
}

// searchSummary is the search's last line: what it found, over how much, and what it could not
// test in full.
func searchSummary(m jobs.Match, p jobs.SearchProgress) string {
	s := fmt.Sprintf("%s for %s in %s, %s read", format.Count(p.Matched, "match", "matches"), m, format.Count(p.Scanned, "task", "tasks"), format.Count(p.Keys, "key", "keys"))
	for _, n := range []struct {
		n    int64
		what string
	}{{p.Cut, "searched in their first 4 KiB"}, {p.Unreadable, "unreadable"}, {p.NotJSON, "not JSON"}, {p.Restarts, "restarts (the queue moved: tasks seen again)"}} {
		if n.n > 0 {
			s += fmt.Sprintf("; %s %s", format.Commas(n.n), n.what)
		}
	}
	return s
}

// cut is s's first n bytes.
func cut(s string, n int) string { return s[:min(len(s), n)] }
