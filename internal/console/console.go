package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"hourglass/internal/config"
	"hourglass/internal/format"
	"hourglass/internal/target"
	"hourglass/internal/traffic"
	"hourglass/scanner"
	"hourglass/theme"
	"hourglass/tui"
)

// trafficRate is the steady test traffic `t` starts, in events a second.
const trafficRate = 200

// Run runs the full-screen console on t until the operator quits or ctx ends, reading keys from
// in and drawing on out.
func Run(ctx context.Context, t *target.Target, cfg *config.Config, palette theme.Palette, in io.Reader, out io.Writer) error {
	loc := cfg.Timezone
	src := scanner.NewWatcher(t.RDB, cfg.Counters,
		cfg.SweepOptions(true),
		scanner.SnapshotOptions{Now: t.Store.Now, Location: loc, Target: t.Label, Mode: t.Mode, TopK: 20})
	opt := tui.Options{
		Target: t.Label, Name: t.Name, Mode: t.Mode, Demo: t.Embedded != nil, Source: src,
		Refresh: cfg.UI.Refresh, Now: t.Store.Now, Location: loc,
		ReadOnlyWhy: "this Redis is read-only; start hourglass with --allow-writes to write to it",
	}
	for _, f := range cfg.Counters {
		opt.Families = append(opt.Families, tui.FamilyInfo{Name: f.Name(), Pattern: f.Pattern().String()})
	}
	opt.Session = newSession(src, cfg, t.Mode == "cluster", t.Label)
	uiCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	opt.Context = uiCtx
	var acts *consoleActions
	if t.Writable {
		acts = newConsoleActions(uiCtx, t, cfg)
		defer acts.stop()
		opt.Actions = acts
	}
	m := tui.New(opt, theme.New(palette))
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}
	if !IsTerminal(out) {
		opts = append(opts, tea.WithWindowSize(120, 36)) // no terminal to ask (a test)
	}
	p := tea.NewProgram(m, opts...)
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return nil // ctrl+c from outside, or SIGTERM: a normal way out
	}
	return err
}

// consoleActions are the console's writes: bursts and steady traffic through a batch writer, and
// repairs.
type consoleActions struct {
	ctx context.Context
	t   *target.Target
	cfg *config.Config

	mu      sync.Mutex
	traffic map[string]context.CancelFunc
	wg      sync.WaitGroup
}

func newConsoleActions(ctx context.Context, t *target.Target, cfg *config.Config) *consoleActions {
	return &consoleActions{ctx: ctx, t: t, cfg: cfg, traffic: map[string]context.CancelFunc{}}
}

// Inject writes events into family through a batch writer, over the demo's dims.
func (a *consoleActions) Inject(ctx context.Context, family string, events int) (string, error) {
	f, err := a.cfg.Counter(family)
	if err != nil {
		return "inject", err
	}
	res := traffic.Inject(ctx, a.t.Store, f, traffic.InjectOptions{Events: int64(events), Dims: traffic.DemoTuples})
	text := fmt.Sprintf("injected %s events into %s (%d script calls)", format.Commas(res.Events), family, res.Increments)
	switch {
	case res.Unsent > 0:
		return "inject", fmt.Errorf("%d key pairs not written: %v", res.Unsent, res.SendErr)
	case res.Refused > 0:
		return "inject", fmt.Errorf("Redis refused %d key updates: %v", res.Refused, res.RefusedErr)
	}
	return text, nil
}

// SetTraffic starts or stops trafficRate events a second into family.
func (a *consoleActions) SetTraffic(family string, on bool) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if stop, ok := a.traffic[family]; ok {
		stop()
		delete(a.traffic, family)
	}
	if !on {
		return "test traffic into " + family + " stopped", nil
	}
	f, err := a.cfg.Counter(family)
	if err != nil {
		return "", err
	}
	ctx, stop := context.WithCancel(a.ctx)
	a.traffic[family] = stop
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		traffic.Steady(ctx, a.t.Store, f, trafficRate, func(error) {})
	}()
	return fmt.Sprintf("test traffic into %s: %d events a second (t again stops it)", family, trafficRate), nil
}

// Repair runs scanner.Repair over every family at the scan budget.
func (a *consoleActions) Repair(ctx context.Context, dryRun bool) (scanner.RepairCounts, error) {
	return scanner.Repair(ctx, a.t.RDB, a.cfg.Counters,
		a.cfg.SweepOptions(false),
		scanner.RepairOptions{Now: a.t.Store.Now, DryRun: dryRun}, nil)
}

// stop ends every steady traffic and waits for it.
func (a *consoleActions) stop() {
	a.mu.Lock()
	for _, stop := range a.traffic {
		stop()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
