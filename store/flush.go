package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// How a flush stays exactly-once.
//
// Calls are spread over lanes; each lane is one pipeline at a time on one connection, so Redis
// receives a lane's calls in the order they were sent. Every call carries a sequence number that
// counts up from 1, with no gaps, per lane and hash slot, and the script keeps the last number it
// applied in a sequence key of that lane and slot. It applies a call only if its number is the
// next one: a number already applied is answered "DUPLICATE" (the call ran before and its reply
// was lost), a number further on "GAP" (an earlier call has not run yet). Neither adds anything.
//
// So a call is never renumbered: any call not confirmed, whatever the reason (a lost reply, an
// error reply, a GAP), is kept and sent again unchanged, in order, before anything newer. However
// often a call is sent, by go-redis's own retries or by later flushes, it is applied once, and a
// later call never runs before an earlier one of its sequence. While calls are unconfirmed, new
// increments wait in the pending map, where they fold into the keys they touch, so an outage
// holds at most one flush of calls plus one entry per key.
//
// The writer also passes the highest number it has seen confirmed, so a sequence key that has
// expired or been evicted does not stall the sequence. A sequence key lost while one of its calls
// is unconfirmed would let that call apply twice: the keys are kept a day, and Redis must not
// evict them (maxmemory-policy noeviction, or a volatile-* policy with room to spare).

// laneSlot is the scope of a sequence: a writer's lane in one hash slot.
type laneSlot struct{ lane, slot int }

// call is one script call: keys of one slot and the units they came from.
type call struct {
	lane, slot int
	seq        int64
	keys       []string // keys[0] is the sequence key; the counters follow
	args       []any    // sequence, its TTL, the confirmed floor, then delta and expiry per counter
	units      []*unit
	cmd        *redis.Cmd
	resent     bool // held, and sent again after a failover: already counted as written
}

// Script replies that confirm nothing was added.
const (
	replyDuplicate = "DUPLICATE"
	replyGap       = "GAP"
)

// errGap is why a call answered GAP is sent again.
var errGap = errors.New("an earlier call of its sequence is not confirmed yet")

// counters returns the counter keys of the call.
func (c *call) counters() []string { return c.keys[1:] }

// Flush writes everything pending, after any calls earlier flushes could not confirm. Calls that
// are still unconfirmed stay with the writer (Pending counts them) and the error says why; keys
// Redis refused come back as *KeyError values joined in the error and are not retried.
func (w *Writer) Flush(ctx context.Context) (FlushResult, error) {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	units := w.pending
	w.pending = make(map[string]*unit, len(units))
	w.mu.Unlock()
	if len(units) == 0 && len(w.unsent) == 0 {
		return FlushResult{}, nil
	}
	var res FlushResult
	var errs []error
	if err := w.prepare(ctx); err != nil {
		w.restore(units)
		return FlushResult{Failed: countKeys(units) + w.unsentKeys()}, err
	}
	if len(w.unsent) > 0 {
		errs = w.sendAll(ctx, w.unsent, &res)
		if len(w.unsent) > 0 {
			// Still unconfirmed: newer calls would only be answered GAP. Keep the units pending.
			w.restore(units)
			units = nil
		}
	}
	if len(units) > 0 {
		errs = append(errs, w.sendAll(ctx, w.plan(units), &res)...)
	}
	if res.Calls > 0 {
		w.prune(time.Now())
	}
	if w.lost != nil {
		errs, w.lost = append(errs, w.lost), nil
	}
	pairs := 0
	for _, c := range w.unsent {
		pairs += len(c.units)
		res.Failed += len(c.counters())
	}
	w.mu.Lock()
	w.unsentPairs = pairs
	w.mu.Unlock()
	return res, dedupe(errs)
}

// sendAll sends calls, and once more after loading the scripts if Redis had lost them. What is
// still unconfirmed is left in w.unsent, in order.
func (w *Writer) sendAll(ctx context.Context, calls []*call, res *FlushResult) []error {
	var errs []error
	for attempt := 0; ; attempt++ {
		unsent, keyErrs, sendErrs := w.send(ctx, calls, res)
		errs = append(errs, keyErrs...)
		w.unsent = unsent
		if attempt == 0 && hasNoScript(sendErrs) {
			// A restart or failover emptied the script cache: load it everywhere and go again.
			if err := w.s.LoadScripts(ctx); err == nil {
				calls = unsent
				continue
			} else {
				sendErrs = append(sendErrs, err)
			}
		}
		return append(errs, sendErrs...)
	}
}

// prepare brings the server clock and the scripts up to date before a flush.
func (w *Writer) prepare(ctx context.Context) error {
	if err := w.s.clock.SyncIfStale(ctx, w.s.rdb); err != nil {
		return err
	}
	if !w.s.scriptsLoaded.Load() {
		if err := w.s.LoadScripts(ctx); err != nil {
			return err
		}
	}
	return w.reconcile(ctx)
}

// number gives c the next sequence number of its lane and slot. The call asks Redis to set the
// sequence record's TTL again once a quarter of it has passed since a call last asked. So the
// record outlives the last call by at least three quarters of the TTL, and not every call pays for
// an EXPIRE.
func (w *Writer) number(c *call, now time.Time) {
	ls := laneSlot{c.lane, c.slot}
	w.seq[ls]++
	c.seq = w.seq[ls]
	c.keys[0] = seqKey(w.id, c.lane, c.slot)
	keep := int64(math.Ceil(w.seqTTL.Seconds()))
	if now.Sub(w.refreshed[ls]) < w.seqTTL/4 {
		keep = -keep
	} else {
		w.refreshed[ls] = now
	}
	c.args[0], c.args[1] = c.seq, keep
}

// plan groups units by hash slot (one group on a standalone Redis) and packs each group into
// calls of at most keysPerCall counter keys, never splitting a unit whose keys share a slot. It
// spreads calls over the lanes (by slot on a cluster, so one slot's calls stay in order on one
// lane) and numbers them.
func (w *Writer) plan(units map[string]*unit) []*call {
	cluster := isCluster(w.s.rdb)
	open := map[int]*call{}
	var calls []*call
	// add puts u's keys of granularities gs (all its keys: a unit split between slots comes as
	// two units) into the open call of slot.
	add := func(slot int, u *unit, gs ...Granularity) {
		c := open[slot]
		if c == nil || len(c.keys)-1+len(gs) > w.keysPerCall {
			c = &call{slot: slot, keys: make([]string, 1, 1+w.keysPerCall), args: make([]any, 3, 3+2*w.keysPerCall)}
			c.args[0], c.args[1], c.args[2] = int64(0), int64(0), int64(0)
			if cluster {
				c.lane = slot % w.lanes
			} else {
				c.lane = len(calls) % w.lanes
			}
			open[slot] = c
			calls = append(calls, c)
		}
		for _, g := range gs {
			c.keys = append(c.keys, u.keys[g])
			c.args = append(c.args, u.delta, u.expire[g])
		}
		c.units = append(c.units, u)
	}
	for _, u := range units {
		var have [2]Granularity
		gs := have[:0]
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
	now := time.Now()
	for _, c := range calls {
		w.number(c, now)
	}
	return calls
}

// send runs calls lane by lane, the lanes at once. Within a lane, pipelines of at most
// callsPerPipeline calls go one after another. A lane stops after a pipeline in which a call was
// not confirmed, since what follows could only be answered GAP. It returns the calls to send again
// (in lane order), the keys Redis refused, and why calls were not confirmed.
func (w *Writer) send(ctx context.Context, calls []*call, res *FlushResult) (unsent []*call, keyErrs, sendErrs []error) {
	byLane := make([][]*call, w.lanes)
	for _, c := range calls {
		c.args[2] = w.floor(laneSlot{c.lane, c.slot})
		byLane[c.lane] = append(byLane[c.lane], c)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, lane := range byLane {
		if len(lane) == 0 {
			continue
		}
		wg.Go(func() {
			var failed, ok []*call
			var kerrs, serrs []error
			var done FlushResult
			confirmed := map[laneSlot]int64{}
			for i := 0; i < len(lane); i += w.callsPerPipeline {
				part := lane[i:min(i+w.callsPerPipeline, len(lane))]
				w.sendPipeline(ctx, part)
				for _, c := range part {
					err := c.cmd.Err()
					if err == nil && c.cmd.Val() == replyGap {
						err = errGap
					}
					if err != nil {
						failed = append(failed, c)
						serrs = append(serrs, fmt.Errorf("store: flush: %w", err))
						continue
					}
					_, refused := incrValues(c.cmd.Val(), c.counters())
					kerrs = append(kerrs, refused...)
					ls := laneSlot{c.lane, c.slot}
					confirmed[ls] = max(confirmed[ls], c.seq)
					ok = append(ok, c)
					if c.resent {
						continue // counted when the old primary confirmed it
					}
					done.Calls++
					done.Keys += len(c.counters())
					for _, u := range c.units {
						done.Events += u.events
					}
				}
				if len(failed) > 0 {
					failed = append(failed, lane[i+len(part):]...)
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for ls, seq := range confirmed {
				w.confirmed[ls] = max(w.confirmed[ls], seq)
			}
			w.hold(ok, time.Now())
			unsent = append(unsent, failed...)
			keyErrs = append(keyErrs, kerrs...)
			sendErrs = append(sendErrs, serrs...)
			res.Calls += done.Calls
			res.Keys += done.Keys
			res.Events += done.Events
		})
	}
	wg.Wait()
	return unsent, keyErrs, sendErrs
}

func (w *Writer) sendPipeline(ctx context.Context, calls []*call) {
	pipe := w.s.rdb.Pipeline()
	for _, c := range calls {
		c.cmd = incrWindows.EvalSha(ctx, pipe, c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx) // every cmd carries its own error
}

// incrValues reads the incr_windows reply for keys: "DUPLICATE" (applied before: values unknown,
// nothing to report), or one integer (new value) or string (error) per key. It returns the new
// values and the refused keys.
func incrValues(reply any, keys []string) ([]int64, []error) {
	vals := make([]int64, len(keys))
	if s, ok := reply.(string); ok && s == replyDuplicate {
		return vals, nil
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) != len(keys) {
		return vals, []error{fmt.Errorf("store: incr: unexpected reply %T of %d for %d keys", reply, len(arr), len(keys))}
	}
	var errs []error
	for i, v := range arr {
		switch v := v.(type) {
		case int64:
			vals[i] = v
		case string:
			errs = append(errs, KeyErrorOf(keys[i], v))
		case error:
			errs = append(errs, KeyErrorOf(keys[i], v.Error()))
		default:
			errs = append(errs, &KeyError{Key: keys[i], Err: fmt.Errorf("unexpected reply %T", v)})
		}
	}
	return vals, errs
}

func hasNoScript(errs []error) bool {
	for _, err := range errs {
		if strings.Contains(err.Error(), "NOSCRIPT") {
			return true
		}
	}
	return false
}

// restore puts units back into pending, adding to any that arrived meanwhile.
func (w *Writer) restore(units map[string]*unit) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, u := range units {
		if p := w.pending[name]; p != nil {
			p.delta += u.delta
			p.events += u.events
			continue
		}
		w.pending[name] = u
	}
}

func (w *Writer) unsentKeys() int {
	n := 0
	for _, c := range w.unsent {
		n += len(c.counters())
	}
	return n
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
