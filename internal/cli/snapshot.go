package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/infer"
	"github.com/hourglass-dev/hourglass/internal/report"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
)

const snapshotUsage = `hourglass snapshot: sweep the keyspace once and report every counter family.

One complete SCAN sweep (never KEYS), at the [scan] budget: each key is read back as a family's
window and dims, and its TTL and value are read in a pipeline per page. The report gives each
family's windows (totals, key counts, top dims), its rate and 48-hour / 30-day series, its TTL
health (keys without a TTL, kept past their retention, or due to have expired; wrong types and
non-integers; examples and the memory they hold) and, for families with hour and day windows,
whether the hours of each ended day add up to the day. Keys no entry of the config claims are
counted into groups by the shape of their names, with their estimated memory and the kind each
group looks like ("Unclaimed keys"; hourglass discover turns them into config). --json prints the
same as one object (its fields are listed in docs/commands.md).

--sample P% stops the sweep once it has seen P percent of the keys the servers hold (DBSIZE),
--for D once it has run for D, whichever comes first: the report is then of a sample, every
count and total scaled to the whole keyspace as an estimate with its 95% interval (marked ≈ in
the text, with estimate, low, high and coverage beside each figure in the JSON), and the exit
code is 0. A maximum or a top list is what the sample saw, and reconciliation waits for a
complete sweep. See docs/commands.md#a-sample.

With no address it reports on an embedded Redis holding demo data written for the purpose.

Usage:
  hourglass snapshot [--json] [--sample P%] [--for D] [--keys-per-second N] [flags]

Flags:
`

func cmdSnapshot(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("snapshot", snapshotUsage, shipped, stdout)
	asJSON := fs.Bool("json", false, "print the snapshot as JSON")
	tf.withBudget(fs)
	var sample sampleFlags
	sample.register(fs)
	var top, examples int
	numberVar(fs, &top, "top", 5, 1, 1000, "largest dims kept per window, `N` from 1 to 1,000")
	numberVar(fs, &examples, "examples", 3, 1, 100, "example keys kept per problem and family, `N` from 1 to 100")
	cfg, t, err := tf.parseOpen(ctx, args, stderr, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	if t.Embedded != nil {
		n, err := traffic.WriteDemoHistory(ctx, t.Store, cfg.Counters, traffic.DemoRate)
		if err == nil {
			err = traffic.BurstStructures(ctx, t.Store, cfg)
		}
		if err != nil {
			return fmt.Errorf("snapshot: writing demo data: %w", err)
		}
		fmt.Fprintf(stderr, "hourglass: embedded Redis on %s with demo data (%s over the last 48 hours, and some leaking keys); give --addr to report on your Redis\n",
			t.Embedded.Addr(), format.Count(n, "event", "events"))
	}
	var adopter *infer.Adopter
	if cfg.Inferred {
		adopter = infer.New(cfg, t.Mode == "cluster")
		fmt.Fprintf(stderr, "hourglass: no config file: the entries are inferred from %s's keys as the sweep finds them (hourglass discover writes them as a config)\n", t.Label)
	}
	snap, err := takeSnapshot(ctx, t, cfg, adopter, top, examples, sample, stderr)
	if err != nil && snap == nil {
		return err
	}
	if adopter != nil {
		cfg = adopter.Config()
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(snap); err != nil {
			return err
		}
	} else {
		report.Snapshot(stdout, snap, cfg.Counters)
	}
	return err
}

// takeSnapshot runs one sweep of t at the config's budget (or the sample's share or time of it),
// each window keeping its top largest values and each problem its examples keys. When the sweep stops early it returns the partial
// snapshot (Complete false) with the reason. Faults that pass are waited out, each shown on
// stderr while it lasts.
func takeSnapshot(ctx context.Context, t *target.Target, cfg *config.Config, adopter *infer.Adopter, top, examples int, sample sampleFlags, stderr io.Writer) (*snapshot.Snapshot, error) {
	loc := cfg.Timezone
	opt := cfg.SweepOptions(true)
	opt.Now, opt.Target, opt.Mode, opt.TopK, opt.Examples = t.Store.Now, t.Label, t.Mode, top, examples
	opt.StopAt, opt.StopAfter = sample.share, sample.dur
	opt.Retry = retrying(stderr, "snapshot", t.Label)
	if adopter != nil {
		opt.Infer = adopter
	}
	health := watch.NewServerReader()
	_, _ = health.Read(ctx, t.RDB) // the first of two reads: a fault here is the sweep's to report
	reads := t.RDB
	if t.Replicas != nil {
		reads = snapshotReplica(ctx, t, &opt, stderr)
		if reads != t.RDB {
			defer reads.Close()
		}
	}
	snap, err := scanner.Take(ctx, reads, cfg.Counters, opt)
	snap.TakenAt = snap.TakenAt.In(loc)
	if info, infoErr := health.Read(ctx, t.RDB); infoErr == nil && t.Embedded == nil { // the embedded Redis keeps no server figures
		info.Eviction = snapshot.NewEvictionRisk(info.Nodes, snap)
		snap.Server = &info
	}
	switch {
	case err == nil:
		return snap, nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return snap, fmt.Errorf("snapshot: interrupted after %s; the report above is partial", format.Count(snap.Scan.KeysSeen, "key", "keys"))
	default:
		return nil, fmt.Errorf("snapshot: sweeping %s: %w", t.Label, err)
	}
}

// snapshotReplica is the client a snapshot sweeps with when read_from = "replica": the first
// replica that passes the checks, or the primary, said on stderr with why.
func snapshotReplica(ctx context.Context, t *target.Target, opt *scanner.Options, stderr io.Writer) redis.UniversalClient {
	c, rs := watch.PickReplica(ctx, t.RDB, t.Replicas)
	opt.Replica = true
	if rs.Replica == "" {
		fmt.Fprintf(stderr, "hourglass: snapshot: no replica passes its checks, so the sweep reads from the primary: %s\n", strings.Join(rs.Left, "; "))
	}
	return c
}
