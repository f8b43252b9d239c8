package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// WriterOptions tune a Writer. The zero value is usable.
type WriterOptions struct {
	// KeysPerCall caps the keys one script call writes (32 when zero). Packing many key pairs
	// into one call spreads the fixed cost of a script call over all of them.
	KeysPerCall int
	// Pipelines is how many pipelines a large flush is split into, sent at once on their own
	// connections (4 when zero), so Redis works on one while the client encodes the next.
	Pipelines int
}

// Writer pre-aggregates counter events in memory, per window key, and flushes them as one
// pipeline of script calls, each call writing many keys of one hash slot. It is safe for
// concurrent use: Add from many goroutines while another calls Flush.
//
// Nothing added is dropped on a transport failure: the increments of a call that failed stay
// pending and go out with the next Flush. A key Redis refuses (wrong type, not an integer,
// overflow) is reported as a *KeyError and its delta is not retried, since no retry can succeed.
type Writer struct {
	s           *Store
	keysPerCall int
	pipelines   int

	mu      sync.Mutex
	pending map[string]*unit // by unit name (hour key + NUL + day key)
	windows map[*Family]*[2]windowCache
}

// unit is the increments of one family+dims in one hour (and so one day): its hour and day keys
// go out in the same script call, so they move together.
type unit struct {
	keys   [2]string // by Granularity; "" when the family lacks it or the window has expired
	expire [2]int64  // unix seconds
	delta  int64
	events int64
}

// windowCache keeps the last window a family's events fell in, so a stream of events in the
// current hour does not format the same window string again and again.
type windowCache struct {
	w      Window
	text   string
	expire time.Time
}

// FlushResult counts what one Flush wrote.
type FlushResult struct {
	Events int64 // events whose increments were written
	Keys   int   // key updates sent (an hour and a day key are two)
	Calls  int   // script calls
	Failed int   // key updates that failed in transit and are pending again
}

// NewWriter returns a batch writer over s.
func (s *Store) NewWriter(opt WriterOptions) *Writer {
	if opt.KeysPerCall <= 0 {
		opt.KeysPerCall = 32
	}
	if opt.KeysPerCall < 2 {
		opt.KeysPerCall = 2 // an hour and a day key always share a call
	}
	if opt.Pipelines <= 0 {
		opt.Pipelines = 4
	}
	return &Writer{
		s:           s,
		keysPerCall: opt.KeysPerCall,
		pipelines:   opt.Pipelines,
		pending:     map[string]*unit{},
		windows:     map[*Family]*[2]windowCache{},
	}
}

// Add records delta for dims of family f at time at (the Redis server's now when zero). It
// returns ErrExpired when every window of at is past its retention, and an error when dims do
// not fit the family's pattern; either way nothing is recorded.
func (w *Writer) Add(f *Family, dims []string, delta int64, at time.Time) error {
	if len(dims) != len(f.pattern.dims) {
		_, err := f.pattern.Key(dims, "")
		return fmt.Errorf("store: add %s: %w", f.name, err)
	}
	now := w.s.clock.Now()
	if at.IsZero() {
		at = now
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var u unit
	cache := w.windows[f]
	if cache == nil {
		cache = new([2]windowCache)
		w.windows[f] = cache
	}
	for _, g := range [2]Granularity{Hour, Day} {
		spec := f.specs[g]
		if spec == nil {
			continue
		}
		c := &cache[g]
		if c.text == "" || !c.w.Contains(at) {
			win := WindowAt(g, at, w.s.loc)
			*c = windowCache{w: win, text: spec.format.Format(win), expire: f.ExpireAt(win)}
		}
		if !c.expire.After(now) {
			continue
		}
		u.keys[g] = f.pattern.key(dims, c.text)
		u.expire[g] = c.expire.Unix()
	}
	if u.keys[Hour] == "" && u.keys[Day] == "" {
		return fmt.Errorf("store: add %s: %w", f.name, ErrExpired)
	}
	name := u.keys[Hour] + "\x00" + u.keys[Day]
	if p := w.pending[name]; p != nil {
		p.delta += delta
		p.events++
		return nil
	}
	u.delta, u.events = delta, 1
	w.pending[name] = &u
	return nil
}

// Pending returns how many key pairs wait for the next Flush.
func (w *Writer) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// call is one script call: keys of one slot and the units they came from.
type call struct {
	keys  []string
	args  []any
	units []*unit
	cmd   *redis.Cmd
}

// Flush writes everything pending as one pipeline of script calls. Increments that could not be
// sent stay pending; the error says why. Keys Redis refused come back as *KeyError values
// joined in the error, and are not retried.
func (w *Writer) Flush(ctx context.Context) (FlushResult, error) {
	w.mu.Lock()
	units := w.pending
	w.pending = make(map[string]*unit, len(units))
	w.mu.Unlock()
	if len(units) == 0 {
		return FlushResult{}, nil
	}
	if err := w.s.clock.SyncIfStale(ctx, w.s.rdb); err != nil {
		w.restore(units)
		return FlushResult{Failed: countKeys(units)}, err
	}
	calls := w.plan(units)
	var res FlushResult
	var errs []error
	for attempt := 0; len(calls) > 0; attempt++ {
		w.send(ctx, calls)
		var noscript []*call
		for _, c := range calls {
			err := c.cmd.Err()
			switch {
			case err == nil:
				_, keyErrs := parseIncrReply(c.cmd.Val(), c.keys)
				errs = append(errs, keyErrs...)
				res.Calls++
				res.Keys += len(c.keys)
				for _, u := range c.units {
					res.Events += u.events
				}
			case strings.HasPrefix(err.Error(), "NOSCRIPT") && attempt == 0:
				noscript = append(noscript, c)
			default:
				w.restoreUnits(c.units)
				res.Failed += len(c.keys)
				errs = append(errs, fmt.Errorf("store: flush: %w", err))
			}
		}
		calls = nil
		if len(noscript) > 0 {
			// A restart or failover dropped the script cache: load it everywhere, send again.
			if err := w.s.LoadScripts(ctx); err != nil {
				for _, c := range noscript {
					w.restoreUnits(c.units)
					res.Failed += len(c.keys)
				}
				errs = append(errs, err)
			} else {
				calls = noscript
			}
		}
	}
	return res, dedupe(errs)
}

// plan groups units by hash slot (one group on a standalone Redis) and packs each group into
// calls of at most keysPerCall keys, never splitting a unit whose keys share a slot.
func (w *Writer) plan(units map[string]*unit) []*call {
	cluster := isCluster(w.s.rdb)
	open := map[int]*call{}
	var calls []*call
	add := func(slot int, u *unit, gs ...Granularity) {
		c := open[slot]
		if c == nil || len(c.keys)+len(gs) > w.keysPerCall {
			c = &call{}
			open[slot] = c
			calls = append(calls, c)
		}
		part := &unit{delta: u.delta, events: u.events}
		for _, g := range gs {
			c.keys = append(c.keys, u.keys[g])
			c.args = append(c.args, u.delta, u.expire[g])
			part.keys[g], part.expire[g] = u.keys[g], u.expire[g]
		}
		c.units = append(c.units, part)
	}
	for _, u := range units {
		var gs []Granularity
		for _, g := range [2]Granularity{Hour, Day} {
			if u.keys[g] != "" {
				gs = append(gs, g)
			}
		}
		if !cluster {
			add(0, u, gs...)
			continue
		}
		if len(gs) == 2 && Slot(u.keys[Hour]) != Slot(u.keys[Day]) {
			// No shared hash tag: the two keys cannot go in one call on a cluster.
			add(Slot(u.keys[Hour]), &unit{keys: [2]string{u.keys[Hour], ""}, expire: u.expire, delta: u.delta, events: u.events}, Hour)
			add(Slot(u.keys[Day]), &unit{keys: [2]string{"", u.keys[Day]}, expire: u.expire, delta: u.delta}, Day)
			continue
		}
		add(Slot(u.keys[gs[0]]), u, gs...)
	}
	return calls
}

// Pipeline sizes: below minCallsPerPipeline a second connection costs more than it saves; above
// maxCallsPerPipeline a pipeline's replies take long enough to risk the read timeout, and hold
// memory for nothing.
const (
	minCallsPerPipeline = 16
	maxCallsPerPipeline = 256
)

// send runs calls as pipelines of EVALSHA, up to w.pipelines of them at once; each call's
// outcome is left in its cmd.
func (w *Writer) send(ctx context.Context, calls []*call) {
	n := min(w.pipelines, (len(calls)+minCallsPerPipeline-1)/minCallsPerPipeline)
	if n <= 1 && len(calls) <= maxCallsPerPipeline {
		w.sendOne(ctx, calls)
		return
	}
	per := min(maxCallsPerPipeline, (len(calls)+n-1)/n)
	parts := make(chan []*call)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for part := range parts {
				w.sendOne(ctx, part)
			}
		})
	}
	for i := 0; i < len(calls); i += per {
		parts <- calls[i:min(i+per, len(calls))]
	}
	close(parts)
	wg.Wait()
}

func (w *Writer) sendOne(ctx context.Context, calls []*call) {
	pipe := w.s.rdb.Pipeline()
	for _, c := range calls {
		c.cmd = incrWindows.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // every cmd carries its own error
}

// restore puts units back into pending, adding to any that arrived meanwhile.
func (w *Writer) restore(units map[string]*unit) {
	list := make([]*unit, 0, len(units))
	for _, u := range units {
		list = append(list, u)
	}
	w.restoreUnits(list)
}

func (w *Writer) restoreUnits(units []*unit) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, u := range units {
		name := u.keys[Hour] + "\x00" + u.keys[Day]
		if p := w.pending[name]; p != nil {
			p.delta += u.delta
			p.events += u.events
			continue
		}
		w.pending[name] = u
	}
}

func countKeys(units map[string]*unit) int {
	n := 0
	for _, u := range units {
		for _, k := range u.keys {
			if k != "" {
				n++
			}
		}
	}
	return n
}

// dedupe joins errs, keeping one of each transport error text (a dropped connection fails every
// call of the pipeline the same way) and every key error.
func dedupe(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, err := range errs {
		var ke *KeyError
		if !errors.As(err, &ke) {
			if seen[err.Error()] {
				continue
			}
			seen[err.Error()] = true
		}
		out = append(out, err)
	}
	return errors.Join(out...)
}
