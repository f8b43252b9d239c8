package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// What watching costs Redis. A hook on the Watcher's client counts every command hourglass sends
// through it (the sweep's SCANs and reads, INFO, the live reads, the drill-down's, and any writes
// the console makes through the same client), by the name INFO commandstats files it under, per
// master. Each Poll reads INFO commandstats of every master; over the interval since the last
// reading, each command's mean time a call on that master is the difference of its usec over the
// difference of its calls, and hourglass' share of the master's time is, over the commands it
// sent, its calls times that mean, over the interval. It is an estimate: other clients' calls of
// the same command share that mean (a SCAN of another client's that reads more keys raises it),
// a script's EVALSHA counts with all its script does, and commandstats holds the time Redis spent
// executing commands, not reading requests and writing replies (with pipelines that is small:
// see docs/configuration.md for how the figure compares with the server's CPU).

// cmdStat is one line of INFO commandstats.
type cmdStat = store.CommandStat

// costReading is one master's INFO commandstats and hourglass' commands sent until it was read.
type costReading struct {
	at    time.Time
	stats map[string]cmdStat
	sent  map[string]int64
}

// costMeter counts hourglass' commands and what the sweep visited, and turns the readings of
// INFO commandstats into a Cost.
type costMeter struct {
	mu     sync.Mutex
	sent   map[string]map[string]int64 // per master address ("" standalone), per command name
	swept  int64                       // keys the sweep visited since the last reading
	live   int64                       // keys the live reads read since the last reading
	hooked map[*redis.Client]bool      // a cluster's node clients already counting
	last   map[string]costReading      // per master
	lastAt time.Time
	// spentUsec and sweptKeys are the Redis time of the busiest master (µs) and the keys the
	// budget paid for (swept, and read live),
	// each a moving sum over the last polls (each poll weighs costDecay less at the next): their
	// ratio is the Redis time a key costs, which paces a sweep held to a share of Redis' time.
	spentUsec, sweptKeys float64
	// heldUsec and heldKeys are the intervals not yet in those sums, too few keys to measure.
	heldUsec, heldKeys float64
	// rateKeys and rateSecs are the keys swept and the seconds they took, moving sums as above:
	// the keys a second shown.
	rateKeys, rateSecs float64
	// masters is how many masters the sweep's keys are spread over, for keyCost before a
	// measure; 0 until counted.
	masters int
}

// costDecay is how much of the moving sums a poll keeps: about the last four polls count.
const costDecay = 0.75

// costAim is the share of the budget the pace aims at: a poll's noise (another client's calls of
// the same command, Redis waiting for a core) then moves the figure about the aim, under the
// budget.
const costAim = 0.9

// assumedKeyCost is the Redis time a key swept is taken to cost its master before one is
// measured, and while INFO commandstats cannot be read: a sweep's commands took 2.2 to 3.1 µs of
// commandstats' time a key on a million keys (SCAN, the family keys' PTTLs and values), rounded
// up from their middle. A cluster's sweep spreads its keys evenly over the masters (each swept at
// its share), so the busiest master's time a key swept is this over the masters (keyCost).
const assumedKeyCost = 3e-6

// minPace is the slowest a Redis-time budget holds a sweep, in keys a second, so that a sweep
// always ends (unless keys_per_second is lower still).
const minPace = 100

// minCostKeys is the fewest keys the intervals that measure the cost of a key must have paid for
// together: over fewer, the poll's own reads (INFO, the live values) weigh too much.
const minCostKeys = 100

// newCostMeter returns a meter counting the commands sent through rdb: on a cluster, through
// each node's client, so they are counted per master.
func newCostMeter(rdb redis.UniversalClient) *costMeter {
	m := &costMeter{sent: map[string]map[string]int64{}, hooked: map[*redis.Client]bool{}, last: map[string]costReading{}}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		c.OnNewNode(m.hookNode) // the nodes that exist now are hooked at the first reading
	case nil:
	default:
		c.AddHook(&sentHook{m: m, addr: ""})
	}
	return m
}

// hookNode counts the commands sent to a cluster's node, once.
func (m *costMeter) hookNode(c *redis.Client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hooked[c] {
		return
	}
	m.hooked[c] = true
	c.AddHook(&sentHook{m: m, addr: c.Options().Addr})
}

// visited counts the keys of a page the sweep visited.
func (m *costMeter) visited(p scanner.Page) {
	m.mu.Lock()
	m.swept += int64(p.Seen)
	m.mu.Unlock()
}

// readLive counts the keys a Poll's live reads read: they cost Redis time as the sweep's keys
// do, and take their share of the same budget.
func (m *costMeter) readLive(n int) {
	m.mu.Lock()
	m.live += int64(n)
	m.mu.Unlock()
}

// count adds commands sent to addr.
func (m *costMeter) count(addr string, cmds []redis.Cmder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	byName := m.sent[addr]
	if byName == nil {
		byName = map[string]int64{}
		m.sent[addr] = byName
	}
	for _, c := range cmds {
		byName[store.CommandStatName(c.Args())]++
	}
}

// takeSent is what was sent to addr so far, cumulative.
func (m *costMeter) takeSent(addr string) map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int64, len(m.sent[addr]))
	for k, v := range m.sent[addr] {
		out[k] = v
	}
	return out
}

// read reads every master's INFO commandstats and returns the Cost over the interval since the
// last read. A refusal or a failure is said in Cost.Err; the sweep's rate is known regardless.
func (m *costMeter) read(ctx context.Context, rdb redis.UniversalClient) snapshot.Cost {
	now := time.Now()
	var mu sync.Mutex
	readings := map[string]costReading{}
	var errs []string
	read := func(ctx context.Context, addr string, c redis.Cmdable) error {
		r, err := readMaster(ctx, c, func() map[string]int64 { return m.takeSent(addr) })
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err.Error())
			return nil
		}
		readings[addr] = r
		return nil
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			m.hookNode(c)
			return read(ctx, c.Options().Addr, c)
		}); err != nil {
			errs = append(errs, "INFO commandstats: "+err.Error())
		}
	} else {
		_ = read(ctx, "", rdb)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	var cost snapshot.Cost
	if !m.lastAt.IsZero() {
		cost.Interval = now.Sub(m.lastAt)
		// Over the last few polls, as the Redis time is: a sweep that completed early and waits
		// for the next refresh visits nothing in a poll, and the next poll makes up for it.
		m.rateKeys = costDecay*m.rateKeys + float64(m.swept)
		m.rateSecs = costDecay*m.rateSecs + cost.Interval.Seconds()
		cost.KeysPerSecond = m.rateKeys / m.rateSecs
	}
	charged := m.swept + m.live // every key the budget paid for: the sweep's and the live reads'
	m.swept, m.live, m.lastAt = 0, 0, now
	for addr, r := range readings {
		if prev, ok := m.last[addr]; ok && cost.Interval > 0 {
			cost.Share = max(cost.Share, share(prev, r))
			cost.Masters++
		}
	}
	m.last = readings
	switch {
	case len(errs) > 0:
		cost.Err = errs[0]
	case cost.Interval > 0 && cost.Masters == 0:
		cost.Err = "no master read twice yet" // a failover: the new masters count from now
	}
	cost.ShareKnown = cost.Interval > 0 && cost.Err == ""
	if cost.ShareKnown && cost.Share > 0 {
		m.fold(cost.Share*cost.Interval.Seconds()*1e6, float64(charged))
	}
	return cost
}

// fold adds an interval's Redis time (µs) and the keys the budget paid for in it to the moving
// sums. Intervals of fewer than minCostKeys keys are held and added together until they reach it:
// over so few, the poll's own reads weigh too much for one interval to measure a key, yet
// dropping them would keep a cost once measured too high for good, since the pace it sets sweeps
// fewer keys a poll than a measure needs. Moving sums, not the mean of each poll's ratio: a poll
// that swept more keys weighs more, and one poll's noise moves the pace a quarter of the way.
func (m *costMeter) fold(usec, keys float64) {
	m.heldUsec += usec
	m.heldKeys += keys
	if m.heldKeys < minCostKeys {
		return
	}
	m.spentUsec = costDecay*m.spentUsec + m.heldUsec
	m.sweptKeys = costDecay*m.sweptKeys + m.heldKeys
	m.heldUsec, m.heldKeys = 0, 0
}

// sweptRate is the keys the sweep visited a second over the last polls, 0 before two readings.
func (m *costMeter) sweptRate() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rateSecs <= 0 {
		return 0
	}
	return m.rateKeys / m.rateSecs
}

// keyCost is the Redis time a key swept costs on the busiest master, in seconds: measured over
// the last polls, or before any, assumedKeyCost over the masters the keys are spread on. Taking
// a cluster's masters as one server paced its first poll at a third of its budget: on 3 masters
// the first figures came after 2.06 s, where one server's came after 0.95 s.
func (m *costMeter) keyCost() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sweptKeys <= 0 {
		return assumedKeyCost / float64(max(m.masters, 1))
	}
	return m.spentUsec / 1e6 / m.sweptKeys
}

// countMasters counts the masters of rdb (1 on a standalone server) until a key's cost is
// measured: the measure holds the spread of the keys over them.
func (m *costMeter) countMasters(ctx context.Context, rdb redis.UniversalClient) {
	m.mu.Lock()
	measured := m.sweptKeys > 0
	m.mu.Unlock()
	cc, ok := rdb.(*redis.ClusterClient)
	if measured || !ok {
		return
	}
	var n atomic.Int64
	if err := cc.ForEachMaster(ctx, func(context.Context, *redis.Client) error { n.Add(1); return nil }); err != nil {
		return // the sweep reports it; the pace keeps the count it had
	}
	m.mu.Lock()
	m.masters = int(n.Load())
	m.mu.Unlock()
}

// pace is the keys a second a sweep may visit so that, at the Redis time a key costs, the
// busiest master gives hourglass costAim of maxShare of a core; ceiling (keys_per_second) caps
// it, and it is never below minPace (nor ceiling, when that is lower). maxShare 0 leaves ceiling
// alone.
func (m *costMeter) pace(maxShare float64, ceiling int) float64 {
	if maxShare <= 0 {
		return float64(ceiling)
	}
	r := costAim * maxShare / m.keyCost()
	floor := float64(minPace)
	if ceiling > 0 {
		r, floor = min(r, float64(ceiling)), min(floor, float64(ceiling))
	}
	return max(r, floor)
}

// holdRedisTime paces the sweep for the Poll under way at the Redis-time budget, from the cost
// of a key the last Polls measured.
func (w *Watcher) holdRedisTime(ctx context.Context) {
	if w.opt.MaxRedisTime > 0 {
		w.cost.countMasters(ctx, w.rdb)
		w.pace.Load().SetRate(w.cost.pace(w.opt.MaxRedisTime, w.opt.KeysPerSecond))
	}
}

// readMaster reads one master's INFO commandstats, taking what was sent to it just before.
func readMaster(ctx context.Context, c redis.Cmdable, sent func() map[string]int64) (costReading, error) {
	r := costReading{sent: sent()}
	text, err := c.Info(ctx, "commandstats").Result()
	r.at = time.Now()
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return r, fmt.Errorf("INFO commandstats refused: %w", err)
	}
	if err != nil {
		return r, fmt.Errorf("INFO commandstats: %w", err)
	}
	r.stats = store.ParseCommandStats(text)
	return r, nil
}

// share is hourglass' share of one core of the master between two readings: its calls of each
// command times that command's mean time a call over the interval.
func share(prev, now costReading) float64 {
	var usec float64
	for name, n := range now.sent {
		ours := n - prev.sent[name]
		if ours <= 0 {
			continue
		}
		usec += float64(ours) * meanUsec(prev.stats, now.stats, name)
	}
	secs := now.at.Sub(prev.at).Seconds()
	if secs <= 0 {
		return 0
	}
	return usec / 1e6 / secs
}

// meanUsec is a command's mean time a call between two readings of commandstats. A name Redis
// does not list is looked up without its subcommand (Redis 6 files MEMORY USAGE under
// "memory"); a command whose counters went back (CONFIG RESETSTAT) takes its mean since then.
func meanUsec(prev, now map[string]cmdStat, name string) float64 {
	if _, ok := now[name]; !ok {
		name, _, _ = strings.Cut(name, "|")
	}
	a, b := prev[name], now[name]
	if b.Calls < a.Calls || b.Usec < a.Usec {
		a = cmdStat{}
	}
	if b.Calls == a.Calls {
		return 0
	}
	return float64(b.Usec-a.Usec) / float64(b.Calls-a.Calls)
}

// sentHook counts the commands a client sends to one master, pipelined or not.
type sentHook struct {
	m    *costMeter
	addr string
}

func (h *sentHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *sentHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.m.count(h.addr, []redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *sentHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.m.count(h.addr, cmds)
		return next(ctx, cmds)
	}
}
