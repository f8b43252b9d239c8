package discover_test

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// checkEntriesLoad renders every entry discover would propose active (high and medium
// confidence), loads them as a config, and sweeps again with it: every key but the noise's is
// then claimed.
func checkEntriesLoad(t *testing.T, c *corpus, res discover.Result) {
	var b strings.Builder
	for _, g := range res.Groups {
		if g.Entry != nil && g.Confidence != discover.Low {
			b.WriteString(g.Entry.TOML())
			b.WriteString("\n")
		}
	}
	cfg, err := config.Parse("discover.toml", []byte(b.String()), nil)
	if err != nil {
		t.Fatalf("proposed entries do not load: %v\n%s", err, b.String())
	}
	opt := cfg.SweepOptions(true)
	snap, err := scanner.Take(t.Context(), c.rdb, cfg.Counters, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Left unclaimed: the noise and keys whose windows no entry can read. Celery's queue lists
	// named after their queue alone are claimed too, once the bindings name the queues.
	noise := map[string]bool{}
	for _, f := range c.fams {
		for _, k := range f.keys {
			noise[k] = f.noise || f.noEntry
		}
	}
	present := int64(0)
	for _, k := range scanAll(t, c.rdb) {
		if noise[k] && !store.IsOwnKey(k) {
			present++
		}
	}
	left := snap.Unclaimed
	for _, g := range left.Groups {
		for _, ex := range g.Examples {
			if isNoise, known := noise[ex]; !known || !isNoise {
				t.Errorf("left unclaimed with the proposed config: %s (group %s, %d keys, %s)", ex, g.Pattern, g.Keys, g.Kind)
			}
		}
	}
	if left.Keys != present {
		t.Errorf("%d keys left unclaimed with the proposed config, want the %d noise keys\n%s", left.Keys, present, b.String())
	}
	// The retention proposed from the keys' TTLs reads none of them as over retention or expired.
	for _, f := range snap.Counters {
		if f.TTL.OverRetention != 0 || f.TTL.ExpiredButPresent != 0 {
			t.Errorf("counter %s with its proposed retention: %+v", f.Family, f.TTL)
		}
	}
	for _, w := range snap.Warnings {
		t.Logf("warning: %v", w)
	}
}
