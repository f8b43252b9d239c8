package cli

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/bench"
)

// TestBenchFullSizes checks --full's sizes: the long run's where no flag gives its own, the flag's
// where one does, and the defaults without --full.
func TestBenchFullSizes(t *testing.T) {
	for _, c := range []struct {
		args                 []string
		events, keys, passes int
		loadFor              time.Duration
	}{
		{nil, 50_000, 200_000, 0, 3 * time.Second},
		{[]string{"--full"}, 1_000_000, 1_000_000, 5, 10 * time.Second},
		{[]string{"--full", "--keys", "5000", "--load-for", "2s"}, 1_000_000, 5000, 5, 2 * time.Second},
		{[]string{"--events", "2000"}, 2000, 200_000, 0, 3 * time.Second},
	} {
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var opt bench.Options
		benchFlags(fs, &opt)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		fullSizes(fs, &opt)
		if opt.Events != c.events || opt.Keys != c.keys || opt.Passes != c.passes || opt.LoadFor != c.loadFor {
			t.Errorf("%v: %d events, %d keys, %d passes, %v; want %d, %d, %d, %v", c.args, opt.Events, opt.Keys, opt.Passes,
				opt.LoadFor, c.events, c.keys, c.passes, c.loadFor)
		}
	}
}
