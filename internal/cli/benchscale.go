package cli

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"time"

	"github.com/hourglass-dev/hourglass/internal/bench"
	"github.com/hourglass-dev/hourglass/internal/config"
)

// scaleArgs are bench's --scale flags.
type scaleArgs struct {
	on                bool
	keys, clusterKeys int64
}

func scaleFlags(fs *flag.FlagSet) *scaleArgs {
	s := &scaleArgs{}
	fs.BoolVar(&s.on, "scale", false, "run the proof at scale instead: estimates, first figures and the console's CPU on millions of keys")
	numberVar(fs, &s.keys, "scale-keys", 10_000_000, 100_000, 100_000_000,
		"with --scale, keys on one server, `N` from 100,000 to 100,000,000")
	numberVar(fs, &s.clusterKeys, "scale-cluster-keys", 6_000_000, 0, 100_000_000,
		"with --scale, keys on a 3-master cluster, `N` up to 100,000,000; 0 skips the cluster")
	return s
}

// runScale runs bench --scale on servers of its own and prints its report.
func runScale(ctx context.Context, tf *targetFlags, s *scaleArgs, opt bench.Options, asJSON bool, stdout io.Writer) error {
	if len(tf.addrs) > 0 {
		return config.Usagef("bench --scale writes millions of keys and runs on servers of its own: give no --addr")
	}
	if err := parsed(ctx, tf.fs, nil); err != nil {
		return err
	}
	def := opt.Defaults
	if tf.config != "" {
		// The console runs at the file's [scan] settings and [ui] refresh: what another budget buys.
		cfg, err := tf.load(opt.Log)
		if err != nil {
			return err
		}
		def = cfg
	}
	rep, err := bench.RunScale(ctx, bench.ScaleOptions{Keys: s.keys, ClusterKeys: s.clusterKeys, ConsoleFor: 30 * time.Second,
		Defaults: def, Log: opt.Log})
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	bench.WriteScaleTable(stdout, rep)
	return nil
}
