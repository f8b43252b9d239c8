package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/console"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/theme"
)

const watchUsage = `Running hourglass with no command opens the console: a live, full-screen view of
every counter family (windows, rates, series, top dims), their TTL health and reconciliation,
refreshed every [ui] refresh by a budgeted sweep. With no address (the default config) it starts
an embedded Redis on a loopback port with 48 hours of demo history and live demo traffic.

When standard output is not a terminal there is no console: on the embedded Redis it prints a line
of live totals a second instead; on a real Redis it says what it connected to and exits.

Flags:
`

// maxDemoRate is the most demo events a second per family: beyond it the embedded Redis, not the
// rate, sets the pace.
const maxDemoRate = 100_000

func cmdWatch(ctx context.Context, shipped []byte, args []string, stdout, stderr io.Writer) error {
	fs, tf := commandFlags("hourglass", mainUsage()+"\n"+watchUsage, shipped, stdout)
	var rate float64
	numberVar(fs, &rate, "demo-rate", traffic.DemoRate, 0, maxDemoRate, "demo events per second per family, `R` from 0 to 100,000 (embedded Redis only)")
	themeName := fs.String("theme", "", "console colours: dark, light or none (default: [ui] theme; NO_COLOR means none)")
	// A console writes only when allowed to: test traffic, inject and repair from its keys.
	tf.writes = func(cfg *config.Config) bool { return cfg.Redis.AllowWrites }
	var palette theme.Palette
	cfg, t, err := tf.parseOpen(ctx, args, stderr, func(cfg *config.Config) (err error) {
		if *themeName == "" {
			*themeName = cfg.UI.Theme
		}
		if palette, err = theme.Pick(*themeName); err != nil {
			return config.Usagef("--theme: %v", err)
		}
		if !cfg.Redis.Real() && len(cfg.Counters) == 0 {
			return config.Usagef("the config declares no [[counter]] family, so the demo has nothing to write")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer t.Close()
	onTerminal := console.IsTerminal(stdout)
	if t.Embedded == nil && !onTerminal {
		mode := "read-only"
		if t.Writable {
			mode = "writes allowed"
		}
		entries := format.Count(len(cfg.Counters), "counter family", "counter families") + " configured"
		if cfg.Inferred {
			entries = "no config file, so the entries would be inferred from the keys"
		}
		fmt.Fprintf(stdout, "hourglass: connected to %s (%s, %s); server clock is %v ahead of this host; %s\n",
			t.Label, t.Mode, mode, t.Store.Clock().Offset().Round(time.Millisecond), entries)
		fmt.Fprintln(stdout, "hourglass: standard output is not a terminal, so there is no console; `hourglass snapshot` reports in text or JSON")
		return nil
	}
	var demo *traffic.Demo
	if t.Embedded != nil {
		if onTerminal { // history and a first burst, so every view has something to show from the first second
			histRate := rate
			if histRate == 0 { // no live traffic: the history still shows what the views are for
				histRate = traffic.DemoRate
			}
			if _, err := traffic.WriteDemoHistory(ctx, t.Store, cfg.Counters, histRate); err != nil {
				return fmt.Errorf("writing demo data: %w", err)
			}
			if err := traffic.BurstStructures(ctx, t.Store, cfg); err != nil {
				return fmt.Errorf("writing demo data: %w", err)
			}
		}
		demoCtx, stopDemo := context.WithCancel(ctx)
		d, demoDone, err := traffic.StartDemo(demoCtx, t.Store, cfg, rate)
		if err != nil {
			stopDemo()
			return err
		}
		defer func() {
			stopDemo()
			<-demoDone // the demo stops before the Redis under it does
		}()
		demo = d
	}
	if onTerminal {
		return console.Run(ctx, t, cfg, palette, os.Stdin, stdout)
	}
	fmt.Fprintf(stdout, "hourglass: demo on an embedded Redis at %s (try: redis-cli -p %s GET <key>; its data is gone at exit)\n",
		t.Embedded.Addr(), t.Embedded.Port())
	fmt.Fprintln(stdout, "hourglass: standard output is not a terminal, so instead of the console this prints live totals read from Redis once a second (ctrl+c stops)")
	return console.PrintTotals(ctx, t.Store, demo, stdout)
}
