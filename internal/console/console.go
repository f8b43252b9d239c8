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

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/infer"
	"github.com/hourglass-dev/hourglass/internal/inspect"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
	"github.com/hourglass-dev/hourglass/tui"
)

// trafficRate is the steady test traffic `t` starts, in events a second.
const trafficRate = 200

// Run runs the full-screen console on t until the operator quits or ctx ends, reading keys from
// in and drawing on out.
func Run(ctx context.Context, t *target.Target, cfg *config.Config, palette theme.Palette, in io.Reader, out io.Writer) error {
	uiCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, stop := newModel(uiCtx, t, cfg, palette)
	defer stop()
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

// newModel is the console's model on t until ctx ends: a Watcher as its source, and
// its actions when t is writable. stop ends the test traffic the actions started and waits for it.
func newModel(ctx context.Context, t *target.Target, cfg *config.Config, palette theme.Palette) (m *tui.Model, stop func()) {
	loc := cfg.Timezone
	wopt := cfg.SweepOptions(true)
	wopt.Now, wopt.Target, wopt.Mode, wopt.TopK = t.Store.Now, t.Label, t.Mode, 20
	if t.Embedded != nil {
		// The embedded Redis is hourglass's own and keeps no commandstats: keys_per_second alone
		// paces its sweep.
		wopt.MaxRedisTime = 0
	}
	var adopter *infer.Adopter
	if cfg.Inferred { // no config file: the entries are inferred from the keys as the sweep goes
		adopter = infer.New(cfg, t.Mode == "cluster")
		wopt.Infer = adopter
	}
	src := watch.New(t.RDB, cfg.Counters, wopt)
	if t.Replicas != nil {
		src.ReadFrom(t.Replicas)
	}
	opt := tui.Options{
		Target: t.Label, Name: t.Name, Mode: t.Mode, Demo: t.Embedded != nil, Source: src,
		Refresh: cfg.UI.Refresh, WaitWarning: cfg.UI.WaitWarning, Now: t.Store.Now, Location: loc, Context: ctx,
		ReadOnlyWhy: "this Redis is read-only; start hourglass with --allow-writes to write to it",
	}
	for _, f := range cfg.Counters {
		opt.Families = append(opt.Families, tui.FamilyInfo{Name: f.Name(), Pattern: f.Pattern().String()})
	}
	sess := newSession(src, cfg, t.Mode == "cluster", t.Label)
	if adopter != nil {
		sess.inferring(adopter, infer.Connection(cfg.Redis, cfg.Redis.TLS.Insecure, t.Embedded != nil))
	}
	opt.Session = sess
	drill := inspect.New(src)
	opt.Inspector = drill // the drill-down reads within the Watcher's sweep budget
	stop = func() {}
	if t.Writable {
		acts := newConsoleActions(ctx, t, sess.config)
		opt.Actions, stop = acts, acts.stop
		opt.KeyActions = drill // one task or key at a time, each through the store's scripts
		if drill.OpenJournal(t.Label) == nil {
			opt.Bulk = drill // a section at a time, each chunk recorded in the journal first
		}
	}
	return tui.New(opt, theme.New(palette)), stop
}

// consoleActions are the console's writes: bursts and steady traffic through a batch writer, and
// repairs.
type consoleActions struct {
	ctx context.Context
	t   *target.Target
	cfg func() *config.Config // the config in use, with the entries added or inferred since the start

	mu      sync.Mutex
	traffic map[string]*steady
	news    []tui.TrafficNews // what the console has not heard yet
	wake    chan struct{}     // signalled when news is added
	wg      sync.WaitGroup
}

// steady is one family's running test traffic.
type steady struct {
	stop    context.CancelFunc
	failing tui.TrafficNews // the fault while writes fail (Err nil while they go through)
}

func newConsoleActions(ctx context.Context, t *target.Target, cfg func() *config.Config) *consoleActions {
	return &consoleActions{ctx: ctx, t: t, cfg: cfg, traffic: map[string]*steady{}, wake: make(chan struct{}, 1)}
}

// Inject writes events into family through a batch writer, over the demo's dims.
func (a *consoleActions) Inject(ctx context.Context, family string, events int) (string, error) {
	f, err := a.cfg().Counter(family)
	if err != nil {
		return "inject", err
	}
	res := traffic.Inject(ctx, a.t.Store, f, traffic.InjectOptions{Events: int64(events), Dims: traffic.DemoTuples})
	if err := res.Problem(); err != nil {
		// What was written, then what was not or is not known: never a pair Redis may hold
		// counted as lost.
		return "inject", fmt.Errorf("%s of %s events written into %s; %w", format.Commas(res.Events), format.Commas(int64(events)), family, err)
	}
	return fmt.Sprintf("injected %s into %s (%s)", format.Count(res.Events, "event", "events"), family, format.Count(res.Increments, "script call", "script calls")), nil
}

// SetTraffic starts or stops trafficRate events a second into family.
func (a *consoleActions) SetTraffic(family string, on bool) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if run, ok := a.traffic[family]; ok {
		run.stop()
		delete(a.traffic, family)
	}
	if !on {
		return "test traffic into " + family + " stopped", nil
	}
	f, err := a.cfg().Counter(family)
	if err != nil {
		return "", err
	}
	ctx, stop := context.WithCancel(a.ctx)
	run := &steady{stop: stop}
	a.traffic[family] = run
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		traffic.Steady(ctx, a.t.Store, f, trafficRate, func(err error) { a.heard(family, run, err) })
		if ctx.Err() == nil { // it ended by itself, not by t or the console closing
			a.ended(family, run)
		}
	}()
	return fmt.Sprintf("test traffic into %s: %d events a second (t again stops it)", family, trafficRate), nil
}

// heard notes what a flush of run's traffic said: a fault (news when it begins or changes), or
// nil once writes go through again after one.
func (a *consoleActions) heard(family string, run *steady, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.traffic[family] != run {
		return // stopped meanwhile
	}
	was := run.failing
	switch {
	case err == nil && was.Err == nil:
		return
	case err == nil:
		run.failing = tui.TrafficNews{}
		a.tell(tui.TrafficNews{Family: family, Since: was.Since})
		return
	case was.Err == nil:
		was = tui.TrafficNews{Family: family, Since: a.t.Store.Now()}
	case format.OneLine(was.Err) == format.OneLine(err):
		run.failing.Err = err // the same fault: nothing new to say
		return
	}
	was.Err = err
	run.failing = was
	a.tell(was)
}

// ended says that run's traffic stopped by itself, on its last fault.
func (a *consoleActions) ended(family string, run *steady) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.traffic[family] != run {
		return
	}
	delete(a.traffic, family)
	a.tell(tui.TrafficNews{Family: family, Err: run.failing.Err, Since: run.failing.Since, Ended: true})
}

// tell queues news for TrafficNews; a.mu is held. A family's news replaces its older news
// of the same kind, so the queue stays short however long a fault lasts.
func (a *consoleActions) tell(n tui.TrafficNews) {
	for i, old := range a.news {
		if old.Family == n.Family && (old.Err == nil) == (n.Err == nil) && old.Ended == n.Ended {
			a.news = append(a.news[:i], a.news[i+1:]...)
			break
		}
	}
	a.news = append(a.news, n)
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// TrafficNews waits for news of the steady traffic, or for ctx to end (then nil).
func (a *consoleActions) TrafficNews(ctx context.Context) []tui.TrafficNews {
	for {
		a.mu.Lock()
		news := a.news
		a.news = nil
		a.mu.Unlock()
		if len(news) > 0 {
			return news
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.wake:
		}
	}
}

// Repair runs scanner.Repair over every family at the scan budget.
func (a *consoleActions) Repair(ctx context.Context, dryRun bool) (snapshot.RepairCounts, error) {
	cfg := a.cfg()
	sweep := cfg.SweepOptions(false)
	sweep.Now = a.t.Store.Now
	return scanner.Repair(ctx, a.t.RDB, cfg.Counters, sweep, scanner.RepairOptions{DryRun: dryRun}, nil)
}

// stop ends every steady traffic and waits for it.
func (a *consoleActions) stop() {
	a.mu.Lock()
	for _, run := range a.traffic {
		run.stop()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
