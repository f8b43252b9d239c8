package bench

import (
	"context"
	"time"

	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// loadCases measures, on the sweep's keys, what a console and serve cost the server at the
// shipped config's settings ([scan] count, keys_per_second and max_call, [ui] refresh), each for loadFor:
// Redis' time on their commands (INFO commandstats) a second, and its CPU over its CPU idle.
func (b *bencher) loadCases(rep *Report) error {
	def := b.defaults
	opt := scanner.Options{Count: def.Scan.Count, KeysPerSecond: def.Scan.KeysPerSecond, MaxCall: def.Scan.MaxCall,
		MaxRedisTime: def.Scan.MaxRedisTime, Location: time.UTC}
	refresh := def.UI.Refresh
	fam := sweepFamily()
	rep.ConsoleKeys = rep.SweepKeys
	idleFor := min(b.loadFor, 2*time.Second)
	b.step("the console at its defaults on %s keys, %v (and Redis idle for %v)", commas(rep.ConsoleKeys), b.loadFor, idleFor)
	cpu0 := b.cpu()
	if err := b.sleep(idleFor); err != nil {
		return err
	}
	idle := (b.cpu() - cpu0) / idleFor.Seconds() // CPU seconds a second
	rep.IdleCPU = 100 * idle
	// The console and serve poll alike: a poll sweeps for the refresh and the next begins when
	// it is back, or when the refresh has passed if its sweep completed early.
	poll := func(focus string) func(w *watch.Watcher) (time.Duration, error) {
		return func(w *watch.Watcher) (time.Duration, error) {
			start := time.Now()
			if _, err := b.poll(w, refresh, focus); err != nil {
				return 0, err
			}
			return refresh - time.Since(start), nil
		}
	}
	var err error
	if rep.ConsoleShare, rep.ConsoleCPU, err = b.load("console", fam, opt, idle, poll(fam.Name())); err != nil {
		return err
	}
	b.step("serve at its defaults on %s keys, %v", commas(rep.ConsoleKeys), b.loadFor)
	rep.ServeShare, rep.ServeCPU, err = b.load("serve", fam, opt, idle, poll(""))
	return err
}

// poll is one poll of w as the console and serve make it: a sweep for the refresh.
func (b *bencher) poll(w *watch.Watcher, refresh time.Duration, focus string) (snapshot.Status, error) {
	ctx, cancel := context.WithTimeout(b.ctx, refresh+5*time.Second)
	defer cancel()
	return w.Poll(ctx, refresh, focus)
}

// load runs poll (which returns the pause before the next) on a new Watcher for loadFor, and
// returns the share of the server's time its commands took and Redis' CPU over idle, in percent
// of one core.
func (b *bencher) load(id string, fam *store.Family, opt scanner.Options, idle float64,
	poll func(*watch.Watcher) (time.Duration, error)) (*float64, float64, error) {
	opt.TopK = 20 // the console's
	w := watch.New(b.rdb, []*store.Family{fam}, opt)
	cpu0 := b.cpu()
	start := time.Now()
	mk := b.meter.start(b.ctx)
	for time.Since(start) < b.loadFor {
		pause, err := poll(w)
		if err != nil {
			return nil, 0, err
		}
		if err := b.sleep(min(pause, b.loadFor-time.Since(start))); err != nil {
			return nil, 0, err
		}
	}
	secs := time.Since(start).Seconds()
	cpu := 100 * max((b.cpu()-cpu0)/secs-idle, 0)
	st := b.meter.since(b.ctx, mk, secs, "second", nil)
	if st == nil {
		return nil, cpu, nil
	}
	b.server[id] = st
	share := st.Usec / 1e6 / secs * 100
	return &share, cpu, nil
}

// sleep waits d, or less when the run is cancelled.
func (b *bencher) sleep(d time.Duration) error { return store.Sleep(b.ctx, d) }
