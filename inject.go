package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"hourglass/store"
)

const injectUsage = `hourglass inject: write counter test traffic through the batch writer.

Events are drawn over --dims distinct dims tuples, Zipf-like (a few hot, a long tail), each
adding 1 to its hour and day windows at the Redis server's time; the writer pre-aggregates them
and flushes pipelines of script calls. A real Redis needs --allow-writes.

--profile NAME mixes every kind instead: a [[profile]] of the config sets each structure's events
a second (counters, delay and list queues, limiters, uniques, bitmaps, locks), and the built-in
"demo" runs the embedded console's traffic. It prints one line per structure.

Usage:
  hourglass inject [--family NAME] [--events N | --duration D] [--rate R] [--dims K] [flags]
  hourglass inject --profile NAME [--duration D] [flags]

Flags:
`

// injectOptions say what inject writes.
type injectOptions struct {
	events   int64         // stop after this many events (0: no limit)
	duration time.Duration // stop after this long (0: no limit)
	rate     float64       // events per second (0: as fast as possible)
	dims     int           // distinct dims tuples
}

// injectResult is what inject wrote.
type injectResult struct {
	events     int64 // events written
	keys       int64 // key updates sent (an hour and a day key are two)
	increments int64 // script calls, each adding to many keys
	elapsed    time.Duration
	unsent     int    // key pairs still pending when inject gave up
	refused    int64  // key updates Redis refused (wrong type, not an integer)
	refusedErr error  // the first refusal, for the summary
	sendErr    error  // the last error from Redis or the network
	gaveUp     string // why inject stopped retrying, when it did
}

func cmdInject(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inject", injectUsage, stdout)
	var common commonFlags
	common.register(fs)
	family := fs.String("family", "", "counter family to write (default: the first in the config)")
	var opt injectOptions
	fs.Int64Var(&opt.events, "events", 0, "number of events to write (default 100000 when --duration is not given)")
	fs.DurationVar(&opt.duration, "duration", 0, "write for this long, e.g. 30s")
	fs.Float64Var(&opt.rate, "rate", 0, "events per second; 0 writes as fast as Redis takes them")
	fs.IntVar(&opt.dims, "dims", 1000, "distinct dims tuples, drawn Zipf-like")
	profile := fs.String("profile", "", "run a [[profile]] from the config, or the built-in demo, for --duration (default 10s)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *profile != "" {
		return injectProfile(ctx, common, *profile, *family, opt, stdout, stderr)
	}
	if opt.events < 0 || opt.duration < 0 || !(opt.rate >= 0 && !math.IsInf(opt.rate, 0)) || opt.dims < 1 {
		return usagef("inject: --events, --duration and --rate must be finite and not negative, --dims at least 1")
	}
	if opt.events == 0 && opt.duration == 0 {
		opt.events = 100000
	}
	cfg, err := common.load()
	if err != nil {
		return err
	}
	f, err := pickFamily(cfg, *family)
	if err != nil {
		return err
	}
	t, err := openInjectTarget(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer t.Close()
	res := inject(ctx, t.store, f, opt)
	fmt.Fprintln(stdout, res.summary(f.Name()))
	if res.unsent > 0 {
		return fmt.Errorf("inject: %d key pairs could not be written: %s (last error: %v)", res.unsent, res.gaveUp, res.sendErr)
	}
	if res.refused > 0 {
		return fmt.Errorf("inject: Redis refused %d key updates (first: %v)", res.refused, res.refusedErr)
	}
	return nil
}

// pickFamily finds the counter family named name, or the first one when name is empty.
func pickFamily(cfg *Config, name string) (*store.Family, error) {
	if len(cfg.Counters) == 0 {
		return nil, usagef("the config declares no [[counter]] family")
	}
	if name == "" {
		return cfg.Counters[0], nil
	}
	var names []string
	for _, f := range cfg.Counters {
		if f.Name() == name {
			return f, nil
		}
		names = append(names, f.Name())
	}
	return nil, usagef("no counter family %q (the config has: %v)", name, names)
}

func (r injectResult) summary(family string) string {
	secs := r.elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	s := fmt.Sprintf("inject %s: events=%d increments=%d keys=%d seconds=%.2f events/s=%.0f increments/s=%.0f",
		family, r.events, r.increments, r.keys, secs, float64(r.events)/secs, float64(r.increments)/secs)
	if r.refused > 0 {
		s += fmt.Sprintf(" refused=%d (first: %v)", r.refused, r.refusedErr)
	}
	if r.unsent > 0 {
		s += fmt.Sprintf(" unsent_pairs=%d", r.unsent)
	}
	return s
}

// inject generates events on one goroutine and flushes on another, so Redis works while the next
// events are drawn. It stops at the event or time limit or when ctx ends, then flushes what is
// left, retrying a Redis that went away for up to giveUp before reporting what it could not send.
func inject(ctx context.Context, st *store.Store, f *store.Family, opt injectOptions) injectResult {
	// How long a Redis that went away is retried before inject reports what it could not send:
	// shorter once the operator has asked to stop.
	const giveUp, giveUpStopping = 30 * time.Second, 5 * time.Second
	w := st.NewWriter(store.WriterOptions{})
	tr := newTraffic(f, opt.dims, 1)
	start := time.Now()
	var generated atomic.Int64
	genDone := make(chan struct{})
	// The generator stops at ctx's end, or when the flusher gives up on Redis. Flushes outlive
	// ctx by up to giveUpStopping, so ctrl+c stops generating but what was generated is still
	// written, unless Redis cannot take it by then.
	flushCtx, stopFlushing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFlushing()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(giveUpStopping, stopFlushing)
		context.AfterFunc(flushCtx, func() { t.Stop() })
	})
	defer stop()
	ctx, stopGen := context.WithCancel(ctx)
	defer stopGen()

	go func() {
		defer close(genDone)
		deadline := time.Time{}
		if opt.duration > 0 {
			deadline = start.Add(opt.duration)
		}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			now := time.Now()
			if ctx.Err() != nil || (!deadline.IsZero() && !now.Before(deadline)) {
				return
			}
			n := int64(4096)
			if opt.rate > 0 {
				n = int64(opt.rate*now.Sub(start).Seconds()) - generated.Load()
			}
			if opt.events > 0 && generated.Load()+n > opt.events {
				n = opt.events - generated.Load()
			}
			n = max(n, 0)
			for w.Pending() >= maxPending && ctx.Err() == nil {
				time.Sleep(time.Millisecond) // Redis is behind: hold back rather than pile up
			}
			for range n {
				if err := w.Add(f, tr.next(), 1, time.Time{}); err != nil {
					return // dims always fit; only a clock far off could expire "now"
				}
			}
			if generated.Add(n); opt.events > 0 && generated.Load() >= opt.events {
				return
			}
			if opt.rate > 0 {
				select {
				case <-tick.C:
				case <-ctx.Done():
				}
			}
		}
	}()

	var res injectResult
	record := func(fr store.FlushResult, err error) {
		res.events += fr.Events
		res.keys += int64(fr.Keys)
		res.increments += int64(fr.Calls)
		var ke *store.KeyError
		for _, e := range unjoin(err) {
			if !errors.As(e, &ke) {
				if !errors.Is(e, context.Canceled) && !errors.Is(e, context.DeadlineExceeded) {
					res.sendErr = e
				}
				continue
			}
			if res.refused++; res.refusedErr == nil {
				res.refusedErr = e
			}
		}
	}
	// While Redis is failing, each flush and each pause between flushes is held to the give-up
	// deadline, so inject ends on time whatever a single attempt would take.
	backoff := 50 * time.Millisecond
	var deadline time.Time // while failing: when to give up
	for {
		done := false
		select {
		case <-genDone:
			done = true
		default:
		}
		fr, err := flushBy(flushCtx, w, deadline)
		record(fr, err)
		if fr.Failed > 0 {
			if deadline.IsZero() {
				deadline = time.Now().Add(giveUp)
			}
			switch {
			case store.Permanent(err):
				res.gaveUp = "Redis refuses them"
			case flushCtx.Err() != nil:
				res.gaveUp = fmt.Sprintf("Redis did not take them within %v of ctrl+c", giveUpStopping)
			case !time.Now().Before(deadline):
				res.gaveUp = fmt.Sprintf("Redis failed for %v", giveUp)
			}
			if res.gaveUp != "" {
				stopGen()
				<-genDone
				res.unsent = w.Pending()
				break
			}
			select { // wait, but not past the deadline or the end of flushing
			case <-time.After(min(backoff, time.Until(deadline))):
			case <-flushCtx.Done():
			}
			backoff = min(backoff*2, 2*time.Second)
			continue
		}
		deadline, backoff = time.Time{}, 50*time.Millisecond
		if done && w.Pending() == 0 {
			break
		}
		waitForBatch(w, genDone)
	}
	res.elapsed = time.Since(start)
	return res
}

// Inject flushes every flushInterval, or sooner once flushPending key pairs wait: the pause lets
// events on hot dims fold into one increment, and the bound keeps a flush's pipeline short.
const (
	flushInterval = 50 * time.Millisecond
	flushPending  = 8192
	maxPending    = 8 * flushPending // the generator waits above this
)

// waitForBatch returns when it is time for the next flush.
func waitForBatch(w *store.Writer, genDone <-chan struct{}) {
	deadline := time.Now().Add(flushInterval)
	for time.Now().Before(deadline) && w.Pending() < flushPending {
		select {
		case <-genDone:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// flushBy flushes with deadline as the context's deadline when it is set.
func flushBy(ctx context.Context, w *store.Writer, deadline time.Time) (store.FlushResult, error) {
	if deadline.IsZero() {
		return w.Flush(ctx)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return w.Flush(ctx)
}

// unjoin lists the errors joined into err.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// injectProfile runs a profile for the duration.
func injectProfile(ctx context.Context, common commonFlags, name, family string, opt injectOptions, stdout, stderr io.Writer) error {
	if family != "" || opt.events != 0 || opt.rate != 0 {
		return usagef("inject: --profile sets its own structures and rates; --family, --events and --rate do not apply")
	}
	if opt.duration == 0 {
		opt.duration = 10 * time.Second
	}
	cfg, err := common.load()
	if err != nil {
		return err
	}
	var p *Profile
	var names []string
	for i := range cfg.Profiles {
		names = append(names, cfg.Profiles[i].Name)
		if cfg.Profiles[i].Name == name {
			p = &cfg.Profiles[i]
		}
	}
	if p == nil && name != "demo" {
		return usagef("inject: no profile %q (the config has: demo %s)", name, strings.Join(names, " "))
	}
	t, err := openInjectTarget(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer t.Close()
	if p == nil {
		return runDemoProfile(ctx, t.store, cfg, 300, opt.duration, t.emb != nil, stdout)
	}
	return runProfile(ctx, t.store, cfg, *p, opt.duration, t.emb != nil, stdout)
}

// openInjectTarget opens the target inject writes to: a real Redis only with writes allowed, and
// the embedded one with a word that its data goes when inject ends.
func openInjectTarget(ctx context.Context, cfg *Config, stderr io.Writer) (*target, error) {
	if err := requireWrites(cfg, "inject"); err != nil {
		return nil, err
	}
	t, err := openTarget(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if t.emb != nil {
		fmt.Fprintf(stderr, "hourglass: writing to an embedded Redis on %s; it stops when inject ends (give --addr to keep the data)\n", t.emb.Addr())
	}
	return t, nil
}
