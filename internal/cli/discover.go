package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/console"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/infer"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
)

const discoverUsage = `hourglass discover: sweep the keyspace and propose a config.toml for what is in it.

One complete SCAN sweep (never KEYS), at the [scan] budget, like snapshot's. The keys no entry
claims are grouped by the shape of their names, a few of each group are read (type, TTL, memory,
a string's first bytes, a collection's size, a sorted set's scores) and each group is taken to be
a counter family, a queue, a limiter, a unique, a lock, a job library's keys, or something
hourglass reads no structure from. It prints a config.toml that works as --config as it is: a
header, the top-level timezone, the [redis] table of the target (never a password), and one entry
per group with its evidence above it. Low-confidence entries are commented out; groups with no
entry are listed at the end as comments. Discovery is inference: read docs/discover.md, check the
evidence, and correct what is wrong.

Without --merge nothing is claimed: every key is discovered (connection settings still come from
--config). --merge FILE sweeps with FILE's entries claiming their keys, and prints FILE unchanged
followed by a marked section of the groups it does not claim yet (with no --config, FILE also
gives the connection). -o writes to a new file, never over an existing one. --json prints the
same as one object (its fields are listed in docs/commands.md).

--sample P% stops the sweep once it has seen P percent of the keys the servers hold (DBSIZE),
--for D once it has run for D, whichever comes first: the groups are then found in that sample,
the header says its coverage, and each group's keys and memory are scaled to the whole keyspace
as estimates with their 95% intervals (a group in too few pages to scale says how many keys were
seen); the exit code is 0. A big keyspace's groups are found in a small share of it: the same
entries, in seconds rather than hours. A group that holds very few keys may be missed.

ctrl+c stops the sweep and prints what was found, marked INCOMPLETE, with exit code 1.

Usage:
  hourglass discover [--merge FILE] [-o PATH] [--json] [--sample P%] [--for D] [--keys-per-second N] [flags]

Flags:
`

// pollSlice is how long the sweep runs between two looks at its progress.
const pollSlice = 500 * time.Millisecond

// discoverRun is what the flags of one discover ask for.
type discoverRun struct {
	tf     *targetFlags
	asJSON bool
	merge  string // --merge FILE
	output string // -o PATH
	sample sampleFlags
}

func cmdDiscover(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("discover", discoverUsage, shipped, stdout)
	run := &discoverRun{tf: tf}
	fs.BoolVar(&run.asJSON, "json", false, "print the finding as JSON, the config text among its fields")
	fs.StringVar(&run.merge, "merge", "", "an existing config `FILE`: its entries claim their keys, and only what it does\nnot claim is added, in a section after its text (FILE is not changed)")
	fs.StringVar(&run.output, "o", "", "write to `PATH`, a new file (an existing one is never overwritten)")
	fs.StringVar(&run.output, "output", "", "the same as -o")
	tf.withBudget(fs)
	run.sample.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := run.check(fs); err != nil {
		return err
	}
	return run.discover(ctx, stdout, stderr)
}

// check refuses flags given empty, before anything is read.
func (r *discoverRun) check(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && (f.Name == "merge" || f.Name == "o" || f.Name == "output") && f.Value.String() == "" {
			err = config.Usagef("discover: %s needs a file name", strings.Repeat("-", min(len(f.Name), 2))+f.Name)
		}
	})
	return err
}

// discover loads the configs, opens the output and the target, sweeps and prints.
func (r *discoverRun) discover(ctx context.Context, stdout, stderr io.Writer) error {
	if r.merge != "" && r.tf.config == "" {
		r.tf.config = r.merge // the file merged into gives the connection too
	}
	cfg, err := r.tf.load(stderr)
	if err != nil {
		return err
	}
	base, before, err := r.mergeBase(cfg)
	if err != nil {
		return err
	}
	if err := parsed(ctx, r.tf.fs, cfg); err != nil {
		return err
	}
	out, finish, err := r.openOutput(stdout)
	if err != nil {
		return err
	}
	t, err := target.Open(ctx, base)
	if err != nil {
		finish(false)
		return err
	}
	defer t.Close()
	if t.Mode == "cluster" {
		_ = r.tf.clusterCheck(base, stderr) // discover only reads: a warning at most
	}
	if t.Embedded != nil {
		if err := embeddedDemo(ctx, t, cfg, stderr); err != nil {
			finish(false)
			return err
		}
	}
	var progress io.Writer
	if console.IsTerminal(stderr) {
		progress = stderr
	}
	found, sweepErr := sweepUnclaimed(ctx, t, base, r.sample, progress, stderr)
	if sweepErr != nil && !found.partial {
		finish(false)
		return sweepErr
	}
	for _, w := range found.warnings {
		fmt.Fprintln(stderr, "hourglass: warning: "+w)
	}
	err = r.print(out, t, base, before, found)
	if !finish(err == nil) && err == nil {
		err = fmt.Errorf("discover: writing %s failed", r.output)
	}
	if err != nil {
		return err
	}
	return sweepErr
}

// mergeBase is the config the sweep runs with, and its text: --merge's file, whose entries claim
// keys, or, without --merge, the connection's config with every entry taken out (so none of them
// is checked against a cluster either). Its connection and [scan] settings are cfg's.
func (r *discoverRun) mergeBase(cfg *config.Config) (*config.Config, string, error) {
	if r.merge == "" {
		base := *cfg
		base.Counters, base.Structures = nil, scanner.Structures{}
		return &base, "", nil
	}
	text, err := os.ReadFile(r.merge)
	if err != nil {
		return nil, "", config.Usagef("discover: --merge: %v", err)
	}
	if r.tf.config == r.merge {
		return cfg, string(text), nil
	}
	base, err := config.Parse(r.merge, text, cfg.Redis.Addrs)
	if err != nil {
		return nil, "", config.UsageError{Err: err}
	}
	base.Redis, base.Scan = cfg.Redis, cfg.Scan
	return base, string(text), nil
}

// openOutput returns where the result goes and a finish that closes it. With -o that is a new file,
// created now so a name already taken is refused before the sweep. finish removes it again when
// told nothing was written, and reports whether the file was closed cleanly.
func (r *discoverRun) openOutput(stdout io.Writer) (io.Writer, func(ok bool) bool, error) {
	if r.output == "" {
		return stdout, func(bool) bool { return true }, nil
	}
	if r.output == r.merge || r.output == r.tf.config {
		return nil, nil, config.Usagef("discover: -o %s is the config read; discover never writes a config in place: give a new file", r.output)
	}
	f, err := os.OpenFile(r.output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case errors.Is(err, os.ErrExist):
		return nil, nil, config.Usagef("discover: -o %s: the file exists; discover never overwrites a file: give a new name", r.output)
	case err != nil:
		return nil, nil, config.Usagef("discover: -o: %v", err)
	}
	return f, func(ok bool) bool {
		cerr := f.Close()
		if !ok {
			_ = os.Remove(r.output)
		}
		return cerr == nil
	}, nil
}

// embeddedDemo fills the embedded Redis with the demo's data, so there is something to discover.
func embeddedDemo(ctx context.Context, t *target.Target, cfg *config.Config, stderr io.Writer) error {
	n, err := traffic.WriteDemoHistory(ctx, t.Store, cfg.Counters, traffic.DemoRate)
	if err == nil {
		err = traffic.BurstStructures(ctx, t.Store, cfg)
	}
	if err != nil {
		return fmt.Errorf("discover: writing demo data: %w", err)
	}
	fmt.Fprintf(stderr, "hourglass: embedded Redis on %s with demo data (%s over the last 48 hours); give --addr to discover your Redis\n",
		t.Embedded.Addr(), format.Count(n, "event", "events"))
	return nil
}

// finding is what a discover sweep found.
type finding struct {
	keysSeen int64
	complete bool
	partial  bool // stopped early (ctrl+c): what it found so far is still printed
	sampled  bool // stopped on purpose (--sample, --for): its groups' keys are estimates
	elapsed  time.Duration
	takenAt  time.Time
	result   discover.Result
	warnings []string
}

// sweepUnclaimed runs one sweep at base's budget with its entries claiming keys, and returns
// what the others look like. It looks at the sweep's progress every pollSlice, and
// writes it to progress (a terminal) when not nil. ctrl+c stops it within the slice; it then
// returns what it found so far (partial) with the reason. It stops once sample's share or time is
// reached, and returns what it found as a sample. Faults that pass are waited out, each shown on
// stderr while it lasts.
func sweepUnclaimed(ctx context.Context, t *target.Target, base *config.Config, sample sampleFlags, progress, stderr io.Writer) (finding, error) {
	loc := base.Timezone
	opt := base.SweepOptions(true)
	opt.Now, opt.Target, opt.Mode = t.Store.Now, t.Label, t.Mode
	w := watch.New(t.RDB, base.Counters, opt)
	if t.Replicas != nil {
		w.ReadFrom(t.Replicas)
	}
	start := time.Now()
	faults := newFaultWait(stderr, "discover", t.Label)
	var last snapshot.Status
	for {
		slice := sample.slice(time.Since(start), last.Unclaimed.Coverage, last.Unclaimed.DBSize, opt.KeysPerSecond)
		until := time.Now().Add(slice)
		st, err := w.Poll(ctx, slice, "")
		if err != nil && faults.after(ctx, err) {
			continue
		}
		if st.Sweep.Completed {
			clearProgress(progress)
			snap := st.Snapshot
			return finding{keysSeen: snap.Scan.KeysSeen, complete: true, elapsed: time.Since(start),
				takenAt: snap.TakenAt.In(loc), result: snap.Unclaimed, warnings: snap.Warnings}, nil
		}
		if err == nil {
			last = st
			faults.ok()
			showProgress(progress, t.Label, st, time.Since(start))
			if sample.reached(st.Unclaimed.Coverage, time.Since(start)) {
				clearProgress(progress)
				return finding{keysSeen: st.Sweep.KeysSeen, sampled: true, elapsed: time.Since(start),
					takenAt: t.Store.Now().In(loc), result: st.Unclaimed}, nil
			}
		}
		if err == nil {
			select {
			case <-time.After(time.Until(until)): // the budget's share of the slice is spent
				continue
			case <-ctx.Done():
			}
		}
		clearProgress(progress)
		if ctx.Err() == nil {
			return finding{}, fmt.Errorf("discover: sweeping %s: %w", t.Label, err)
		}
		if err != nil { // the Poll stopped mid-page: its status holds what was read until then
			last = st
		}
		f := finding{keysSeen: last.Sweep.KeysSeen, partial: true, elapsed: time.Since(start),
			takenAt: t.Store.Now().In(loc), result: last.Unclaimed}
		return f, fmt.Errorf("discover: interrupted after %s; what it printed is partial", format.Count(f.keysSeen, "key", "keys"))
	}
}

// showProgress writes the sweep's progress over the last line of a terminal.
func showProgress(w io.Writer, label string, st snapshot.Status, elapsed time.Duration) {
	if w == nil {
		return
	}
	fmt.Fprintf(w, "\rdiscover: sweeping %s: %s seen, %s unclaimed in %s, %s\x1b[K", label, format.Count(st.Sweep.KeysSeen, "key", "keys"),
		format.Commas(st.Unclaimed.Keys), format.Count(len(st.Unclaimed.Groups), "group", "groups"), format.Age(elapsed))
}

func clearProgress(w io.Writer) {
	if w != nil {
		fmt.Fprint(w, "\r\x1b[K")
	}
}

// discoverJSON is what --json prints. Its fields are listed in docs/commands.md.
type discoverJSON struct {
	Target     string          `json:"target"`
	Mode       string          `json:"mode"`
	TakenAt    time.Time       `json:"taken_at"`
	Complete   bool            `json:"complete"`
	Sampled    bool            `json:"sampled"`
	KeysSeen   int64           `json:"keys_seen"`
	DurationMS int64           `json:"duration_ms"`
	Timezone   string          `json:"timezone"`
	Merge      string          `json:"merge"`
	Unclaimed  discover.Result `json:"unclaimed"`
	Config     string          `json:"config"`
}

// print renders what was found as config text (checked to load) and writes it, or the JSON.
func (r *discoverRun) print(out io.Writer, t *target.Target, base *config.Config, before string, f finding) error {
	label := t.Label
	if t.Embedded == nil {
		label += ", " + t.Mode
	}
	doc := &discover.Doc{
		Target: label, TakenAt: f.takenAt, Elapsed: f.elapsed, KeysSeen: f.keysSeen,
		Complete: f.complete, Sampled: f.sampled, Timezone: base.TimezoneName, Merge: r.merge, Before: before,
		Redis:  infer.Connection(base.Redis, r.tf.insecure, t.Embedded != nil),
		Result: f.result.Avoiding(entryNames(before)),
	}
	text, err := checkedConfig(doc, t.Mode == "cluster", strings.Count(before, "\n")+2)
	if err != nil {
		return err
	}
	if !r.asJSON {
		_, err = io.WriteString(out, text)
		return err
	}
	zone := base.TimezoneName // the file's, under --merge
	if r.merge == "" {
		zone, _ = doc.TopZone()
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(discoverJSON{
		Target: t.Label, Mode: t.Mode, TakenAt: f.takenAt, Complete: f.complete, Sampled: f.sampled, KeysSeen: f.keysSeen,
		DurationMS: snapshot.MillisUp(f.elapsed), Timezone: zone, Merge: r.merge,
		Unclaimed: doc.Result, Config: text,
	})
}

// checkedConfig renders doc and loads the text as hourglass would. It applies the cluster check for
// a cluster, and checks from line from on, past the merged file whose entries were already warned
// of. An entry the config refuses is printed commented out with the reason, so what is printed
// always loads with no edits.
func checkedConfig(doc *discover.Doc, cluster bool, from int) (string, error) {
	load := config.LoadsFrom("discovered config", cluster, from)
	text, err := doc.RenderLoadable(func(text string) (int, string, error) {
		line, reason, err := load(text)
		if strings.HasPrefix(reason, "counter.pattern: ") && strings.Contains(reason, "cluster slots") {
			// The keys are written already: a hash tag would name other keys.
			reason += "; to read the keys as they are written, split it in two: one entry with the hour_ keys, one with the day_ keys, named apart"
		}
		return line, reason, err
	})
	if err != nil {
		return "", fmt.Errorf("discover: %w", err)
	}
	return text, nil
}

// entryNames are the names of every table array's entries in a config's text, which entries
// added after it must not repeat.
func entryNames(text string) map[string]bool {
	names := map[string]bool{}
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		return names
	}
	for _, v := range raw {
		tables, _ := v.([]map[string]any)
		for _, tb := range tables {
			if n, ok := tb["name"].(string); ok {
				names[n] = true
			}
		}
	}
	return names
}
