package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hourglass/store"
)

// Profile is a [[profile]]: test traffic mixing kinds, each structure at its own rate.
type Profile struct {
	Name    string
	Entries []ProfileEntry
}

// ProfileEntry is one structure of a profile and its events a second.
type ProfileEntry struct {
	Kind, Name string // kind: counter, delay_queue, list_queue, limiter, unique, bitmap, lock
	Rate       float64
}

// testQueueSuffix names the queue beside a real one that profiles drive on a real Redis.
const testQueueSuffix = "hourglass-test"

// profileKinds are the kinds a [[profile]] can drive, as its keys name them.
var profileKinds = []string{"counter", "delay_queue", "list_queue", "limiter", "unique", "bitmap", "lock"}

// profiles builds the [[profile]] tables, checking that each names structures the config has.
func (c *checker) profiles(root table, cfg *Config) []Profile {
	known := map[string]map[string]bool{}
	for _, k := range profileKinds {
		known[k] = map[string]bool{}
	}
	for _, f := range cfg.Counters {
		known["counter"][f.Name()] = true
	}
	s := cfg.Structures
	for _, q := range s.DelayQueues {
		known["delay_queue"][q.Name] = true
	}
	for _, q := range s.ListQueues {
		known["list_queue"][q.Name] = true
	}
	for _, l := range s.Limiters {
		known["limiter"][l.Name] = true
	}
	for _, u := range s.Uniques {
		known[map[store.UniqueKind]string{store.HyperLogLog: "unique", store.Bitmap: "bitmap"}[u.Kind]][u.Family.Name()] = true
	}
	for _, l := range s.Locks {
		known["lock"][l.Name] = true
	}
	var out []Profile
	seen := map[string]bool{}
	for _, t := range c.arrayTables(root, "profile") {
		start := len(c.errs)
		c.onlyKeys(t, "[[profile]]", append([]string{"name"}, profileKinds...)...)
		name, ok := c.str(t, "name")
		if _, present := t.m["name"]; !present {
			c.fail(t.path+".name", "missing: every [[profile]] needs a name")
		}
		if ok && (seen[name] || name == "demo") {
			c.fail(t.path+".name", "duplicate profile name %q (demo is built in)", name)
		}
		seen[name] = true
		p := Profile{Name: name}
		for _, kind := range profileKinds {
			sub, ok := c.subtable(t, kind)
			if !ok {
				continue
			}
			keys := make([]string, 0, len(sub.m))
			for k := range sub.m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				rate, ok := number(sub.m[k])
				switch {
				case !known[kind][k]:
					c.fail(sub.path+"."+k, "no %s named %q in this config", kind, k)
				case !ok || rate <= 0:
					c.fail(sub.path+"."+k, "want events a second above zero, got %s", describe(sub.m[k]))
				default:
					p.Entries = append(p.Entries, ProfileEntry{Kind: kind, Name: k, Rate: rate})
				}
			}
		}
		if len(p.Entries) == 0 && ok && len(c.errs) == start {
			c.fail(t.path, "profile %q drives nothing: give rates such as counter = { flow = 500 }", name)
		}
		out = append(out, p)
	}
	return out
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// profileResult counts what one entry of a profile did.
type profileResult struct {
	entry ProfileEntry
	ops   atomic.Int64 // events, hits, tasks, members, locks
	extra string       // a kind's own detail, filled at the end

	mu  sync.Mutex
	err error // the first error
}

// fail keeps the first error.
func (r *profileResult) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// runProfile drives every entry of p at its rate until d has passed or ctx ends, then prints
// one summary line per entry. It returns an error when any entry failed.
//
// On a real Redis (embedded false) queue traffic goes to a test queue beside each configured one
// ("{key}:hourglass-test"): a consumer there can only claim and acknowledge its own tasks, never
// the real ones waiting in the queue.
func runProfile(ctx context.Context, st *store.Store, cfg *Config, p Profile, d time.Duration, embedded bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	results := make([]*profileResult, len(p.Entries))
	var wg sync.WaitGroup
	start := time.Now()
	for i, e := range p.Entries {
		r := &profileResult{entry: e}
		results[i] = r
		work, finish, err := profileWork(ctx, st, cfg, e, r, embedded)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			paced(ctx, e.Rate, func(n int) bool {
				if err := work(n); err != nil && ctx.Err() == nil {
					r.fail(err)
					return false
				}
				r.ops.Add(int64(n))
				return true
			})
			fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer fcancel()
			if err := finish(fctx); err != nil {
				r.fail(err)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "inject profile %s: seconds=%.2f\n", p.Name, secs)
	var failed []string
	for _, r := range results {
		n := r.ops.Load()
		fmt.Fprintf(out, "  %s %s: ops=%d ops/s=%.1f target/s=%g%s\n", r.entry.Kind, r.entry.Name, n, float64(n)/secs, r.entry.Rate, r.extra)
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s %s: %v", r.entry.Kind, r.entry.Name, r.err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("inject profile %s: %s", p.Name, strings.Join(failed, "; "))
	}
	return nil
}

// paced calls work with the number of operations owed every 10 ms, holding rate per second over
// the run, until ctx ends or work says stop. Falling behind, it catches up by two ticks at most.
func paced(ctx context.Context, rate float64, work func(n int) bool) {
	const tick = 10 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start, done := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			owed := int(rate*now.Sub(start).Seconds()) - done
			if owed <= 0 {
				continue
			}
			// When Redis falls behind, what could not be done is dropped rather than owed: at most
			// two ticks' worth a batch, so one batch never runs far past the end.
			if limit := int(rate*2*tick.Seconds()) + 1; owed > limit {
				done += owed - limit
				owed = limit
			}
			if !work(owed) {
				return
			}
			done += owed
		}
	}
}

// profileWork returns what one entry does per batch of n operations, and what it does at the end.
func profileWork(ctx context.Context, st *store.Store, cfg *Config, e ProfileEntry, r *profileResult, embedded bool) (func(int) error, func(context.Context) error, error) {
	// A batch that has begun runs to its end, so the run's deadline leaves no task half-handled
	// (pushed, not popped) and no lock taken, not released.
	ctx = context.WithoutCancel(ctx)
	rnd := rand.New(rand.NewPCG(uint64(len(e.Name)), 17))
	nothing := func(context.Context) error { return nil }
	s := cfg.Structures
	switch e.Kind {
	case "counter":
		f, err := pickFamily(cfg, e.Name)
		if err != nil {
			return nil, nil, err
		}
		w, tr := st.NewWriter(store.WriterOptions{}), newTraffic(f, 1000, 5)
		return func(n int) error {
				for range n {
					if err := w.Add(f, tr.next(), 1, time.Time{}); err != nil {
						return err
					}
				}
				_, err := w.Flush(ctx)
				return err
			}, func(ctx context.Context) error {
				_, err := w.Flush(ctx)
				return err
			}, nil
	case "delay_queue":
		for _, q := range s.DelayQueues {
			if q.Name == e.Name {
				key := sampleQueueKey(q)
				if !embedded {
					key = store.CompanionKey(key, testQueueSuffix)
					r.extra = " on " + key
				}
				dq := st.DelayQueue(key, q.Unit)
				var acked atomic.Int64
				return func(n int) error {
						tasks := make([]string, n)
						for i := range tasks {
							tasks[i] = fmt.Sprintf("task-%d-%d", time.Now().UnixNano(), i)
						}
						if err := dq.Enqueue(ctx, time.Time{}, tasks...); err != nil {
							return err
						}
						got, err := dq.Claim(ctx, n, 30*time.Second)
						if err != nil {
							return err
						}
						k, err := dq.Ack(ctx, got)
						acked.Add(k)
						return err
					}, func(context.Context) error {
						r.extra += fmt.Sprintf(" acked=%d", acked.Load())
						return nil
					}, nil
			}
		}
	case "list_queue":
		for _, q := range s.ListQueues {
			if q.Name == e.Name {
				key := q.Key
				if !embedded {
					key = store.CompanionKey(key, testQueueSuffix)
					r.extra = " on " + key
				}
				lq := st.ListQueue(key)
				return func(n int) error {
					tasks := make([]string, n)
					for i := range tasks {
						tasks[i] = fmt.Sprintf("job-%d-%d", time.Now().UnixNano(), i)
					}
					if err := lq.Push(ctx, tasks...); err != nil {
						return err
					}
					for range n {
						task, ok, err := lq.Pop(ctx, time.Millisecond)
						if err != nil || !ok {
							return err
						}
						if err := lq.Ack(ctx, task); err != nil {
							return err
						}
					}
					return nil
				}, nothing, nil
			}
		}
	case "limiter":
		for _, l := range s.Limiters {
			if l.Name == e.Name {
				spec := l.LimiterSpec
				if !embedded { // the test decisions go to their own hourly counters
					spec.Name += "-hourglass-test"
				}
				lim, err := st.NewLimiter(spec)
				if err != nil {
					return nil, nil, err
				}
				users := rand.NewZipf(rnd, 1.3, 1, 999)
				dims := len(l.Pattern.Dims())
				var allowed, rejected atomic.Int64
				lastFlush := time.Now()
				return func(n int) error {
						if time.Since(lastFlush) >= time.Second { // so watchers see the rates as they go
							lastFlush = time.Now()
							if err := lim.Flush(ctx); err != nil {
								return err
							}
						}
						for range n {
							vals := make([]string, dims)
							for i := range vals { // not a real user's key
								vals[i] = fmt.Sprint("hourglass-test-user", users.Uint64())
							}
							d, err := lim.Allow(ctx, vals...)
							if err != nil {
								return err
							}
							if d.Allowed {
								allowed.Add(1)
							} else {
								rejected.Add(1)
							}
						}
						return nil
					}, func(ctx context.Context) error {
						r.extra = fmt.Sprintf(" allowed=%d rejected=%d", allowed.Load(), rejected.Load())
						return lim.Flush(ctx)
					}, nil
			}
		}
	case "unique", "bitmap":
		for _, u := range s.Uniques {
			if u.Family.Name() == e.Name {
				un := st.NewUniques(u.Kind, u.Family)
				g := u.Family.Granularities()[len(u.Family.Granularities())-1]
				return func(n int) error {
					members := make([]string, n)
					for i := range members {
						members[i] = fmt.Sprint(rnd.IntN(100_000))
					}
					dims := make([]string, len(u.Family.Dims()))
					for i, name := range u.Family.Dims() {
						dims[i] = dimValue(name, rnd.IntN(5))
					}
					return un.Add(ctx, g, dims, time.Time{}, members...)
				}, nothing, nil
			}
		}
	case "lock":
		for _, l := range s.Locks {
			if l.Name == e.Name {
				return func(n int) error {
					for range n {
						dims := make([]string, len(l.Pattern.Dims()))
						for i := range dims {
							dims[i] = fmt.Sprint(rnd.IntN(50))
						}
						if !embedded { // never a real application's lock
							for i := range dims {
								dims[i] = "hourglass-test-" + dims[i]
							}
						}
						key, err := l.Pattern.Key(dims, "")
						if err != nil {
							return err
						}
						lock, ok, err := st.Acquire(ctx, key, 5*time.Second)
						if err != nil {
							return err
						}
						if ok {
							if _, err := lock.Release(ctx); err != nil {
								return err
							}
						}
					}
					return nil
				}, nothing, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("profile: no %s named %q", e.Kind, e.Name)
}

// runDemoProfile is the built-in demo profile: the embedded mode's traffic, for d.
func runDemoProfile(ctx context.Context, st *store.Store, cfg *Config, rate float64, d time.Duration, embedded bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	dm := newDemo(st, cfg.Counters, rate)
	sd, err := newStructDemo(st, cfg.Structures, cfg.Counters, rate/10)
	if err != nil {
		return err
	}
	sd.anomalies = embedded
	if !embedded {
		sd.useTestQueues()
	}
	var mu sync.Mutex
	var firstErr error
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sd.run(ctx, report)
	}()
	dm.run(ctx, io.Discard)
	wg.Wait()
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer fcancel()
	if _, err := dm.w.Flush(fctx); err != nil {
		report(err)
	}
	fmt.Fprintf(out, "inject profile demo: seconds=%.2f\n  counter (all families): events=%d\n  %s\n",
		time.Since(start).Seconds(), dm.events.Load(), sd.summary())
	if firstErr != nil {
		return fmt.Errorf("inject profile demo: %w", firstErr)
	}
	return nil
}
