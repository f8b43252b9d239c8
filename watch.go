package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/term"

	"hourglass/store"
	"hourglass/theme"
	"hourglass/tui"
)

const watchUsage = `Running hourglass with no command opens the console: a live, full-screen view of
every counter family (windows, rates, series, top dims), their TTL health and reconciliation,
refreshed every [ui] refresh by a budgeted sweep. With no address (the default config) it starts
an embedded Redis on a loopback port with 48 hours of demo history and live demo traffic.

When standard output is not a terminal there is no console: on the embedded Redis it prints a line
of live totals a second instead; on a real Redis it says what it connected to and exits.

Flags:
`

// demoTuples is how many dims tuples the demo spreads each family's traffic over.
const demoTuples = 50

func cmdWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("hourglass", mainUsage+"\n"+watchUsage, stdout)
	var common commonFlags
	common.register(fs)
	rate := fs.Float64("demo-rate", 300, "demo events per second per family (embedded Redis only)")
	themeName := fs.String("theme", "", "console colours: dark, light or none (default: [ui] theme; NO_COLOR means none)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !(*rate >= 0) || math.IsInf(*rate, 0) { // NaN fails the comparison
		return usagef("--demo-rate must be a finite number, not negative")
	}
	cfg, err := common.load()
	if err != nil {
		return err
	}
	if *themeName == "" {
		*themeName = cfg.UI.Theme
	}
	palette, err := theme.Pick(*themeName)
	if err != nil {
		return usagef("--theme: %v", err)
	}
	if len(cfg.Redis.Addrs) == 0 && len(cfg.Counters) == 0 {
		return usagef("the config declares no [[counter]] family, so the demo has nothing to write")
	}
	t, err := openTarget(ctx, cfg)
	if err != nil {
		return err
	}
	defer t.Close()
	console := isTerminal(stdout)
	if t.emb == nil && !console {
		mode := "read-only"
		if t.writable {
			mode = "writes allowed"
		}
		fmt.Fprintf(stdout, "hourglass: connected to %s (%s, %s); server clock is %v ahead of this host; %d counter families configured\n",
			t.label, t.mode, mode, t.store.Clock().Offset().Round(time.Millisecond), len(cfg.Counters))
		fmt.Fprintln(stdout, "hourglass: standard output is not a terminal, so there is no console; `hourglass snapshot` reports in text or JSON")
		return nil
	}
	var demo *demo
	demoDone := make(chan struct{})
	if t.emb != nil {
		if console { // history, so every view has something to show from the first second
			if _, err := writeDemoHistory(ctx, t.store, cfg.Counters); err != nil {
				return fmt.Errorf("writing demo data: %w", err)
			}
		}
		demo = newDemo(t.store, cfg.Counters, *rate)
		demoCtx, stopDemo := context.WithCancel(ctx)
		defer func() {
			stopDemo()
			<-demoDone // the demo stops before the Redis under it does
		}()
		sd, err := newStructDemo(t.store, cfg.Structures, cfg.Counters, *rate/10)
		if err != nil {
			return err
		}
		sd.anomalies = true // the embedded Redis: nothing of anyone's to spoil
		go func() {
			defer close(demoDone)
			structsDone := make(chan struct{})
			go func() {
				defer close(structsDone)
				sd.run(demoCtx, func(error) {})
			}()
			demo.run(demoCtx, io.Discard)
			<-structsDone
		}()
	}
	if console {
		return runConsole(ctx, t, cfg, palette, os.Stdin, stdout)
	}
	fmt.Fprintf(stdout, "hourglass: demo on an embedded Redis at %s (try: redis-cli -p %s GET <key>; its data is gone at exit)\n",
		t.emb.Addr(), t.emb.Port())
	fmt.Fprintln(stdout, "hourglass: standard output is not a terminal, so instead of the console this prints live totals read from Redis once a second (ctrl+c stops)")
	return printTotals(ctx, t.store, demo, stdout)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// demo writes counter traffic into every family at a gently swinging rate, so totals and rates
// move the way live traffic does.
type demo struct {
	w       *store.Writer
	traffic []*traffic
	rate    float64
	events  atomic.Int64 // added to the writer
}

func newDemo(st *store.Store, families []*store.Family, rate float64) *demo {
	d := &demo{w: st.NewWriter(store.WriterOptions{}), rate: rate}
	for i, f := range families {
		d.traffic = append(d.traffic, newTraffic(f, demoTuples, uint64(i+1)))
	}
	return d
}

// run adds events every 100 ms and flushes them; it paces itself well under the few thousand
// script calls a second miniredis manages. It returns when ctx ends.
func (d *demo) run(ctx context.Context, stderr io.Writer) {
	const tick = 100 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	owed := make([]float64, len(d.traffic))
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			phase := now.Sub(start).Seconds() / 60 * 2 * math.Pi
			for i, tr := range d.traffic {
				// Each family swings between half and one and a half times the rate, a minute a cycle.
				owed[i] += d.rate * tick.Seconds() * (1 + 0.5*math.Sin(phase+float64(i)))
				for ; owed[i] >= 1; owed[i]-- {
					if d.w.Add(tr.family, tr.next(), 1, time.Time{}) == nil {
						d.events.Add(1)
					}
				}
			}
			if _, err := d.w.Flush(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintln(stderr, "hourglass: demo traffic: "+oneLine(err))
			}
		}
	}
}

// printTotals prints, once a second, each family's current hour and day totals over the demo's
// dims, read from Redis in one pipeline per family and window, and the hour's rate.
func printTotals(ctx context.Context, st *store.Store, d *demo, out io.Writer) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	prev := map[string]hourTotal{}
	prevAt := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			rctx, cancel := context.WithTimeout(ctx, 900*time.Millisecond)
			var parts []string
			for _, tr := range d.traffic {
				part, err := familyTotals(rctx, st, tr, prev, now.Sub(prevAt))
				if err != nil {
					part = tr.family.Name() + " " + oneLine(err)
				}
				parts = append(parts, part)
			}
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			prevAt = now
			fmt.Fprintf(out, "%s  %s\n", st.Now().In(st.Location()).Format("15:04:05"), strings.Join(parts, "  |  "))
		}
	}
}

// hourTotal is a family's total in one hour window, kept to compute the rate.
type hourTotal struct {
	window time.Time
	total  int64
}

// familyTotals formats one family's totals and updates prev[family] with its hour total. Hour and
// day are read in one pipeline, so they agree with each other.
func familyTotals(ctx context.Context, st *store.Store, tr *traffic, prev map[string]hourTotal, dt time.Duration) (string, error) {
	f := tr.family
	byGran, err := st.GetWindows(ctx, f, tr.tuples, time.Time{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(f.Name())
	for _, g := range f.Granularities() {
		vals := byGran[g]
		var total int64
		for _, v := range vals {
			total += v.Value
		}
		label := "hour"
		if g == store.Day {
			label = "today"
		}
		fmt.Fprintf(&b, " %s %s", label, tui.Commas(total))
		if g == store.Hour {
			last, ok := prev[f.Name()]
			if ok && last.window.Equal(vals[0].Window.Start) && dt > 0 {
				fmt.Fprintf(&b, " (+%s/s)", tui.Commas(int64(math.Round(float64(total-last.total)/dt.Seconds()))))
			}
			prev[f.Name()] = hourTotal{vals[0].Window.Start, total}
		}
	}
	return b.String(), nil
}
