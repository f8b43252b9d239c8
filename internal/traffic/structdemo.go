package traffic

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/limits"
)

// structDemo drives every configured queue, limiter, unique and lock the way live systems do, so
// the console's views move. A delay queue's producer outruns its consumer for a while, then falls
// behind it, so lag rises and falls. A limiter is hammered by a few hot users, so rejections show.
// There are page views and daily actives, and locks taken and released. Now and then comes an
// anomaly for TTL health to find: a counter key that loses its TTL, a lock left without one.
type structDemo struct {
	st      *store.Store
	structs scanner.Structures
	counter []*store.Family
	rate    float64 // events per second per structure, before the swings
	rnd     *rand.Rand
	// anomalies is set only on the embedded Redis: on a real one the demo must not PERSIST a
	// production key or leave a lock that never expires.
	anomalies  bool
	userPrefix string // the limiter's users: "user" on the embedded Redis

	queues   []*store.DelayQueue
	lists    []*store.ListQueue
	limiters []*store.Limiter
	uniques  []*store.Uniques
	blooms   []*bloomGuard
	users    *rand.Zipf
	// bloomsLeft says why a [[bloom]] entry is not driven (its filter would be an application's)
	bloomsLeft []string

	counts demoCounts
}

// demoCounts add up what the demo did, per kind.
type demoCounts struct {
	enqueued, claimed, acked, pushed, popped, allowed, rejected, uniques, locks, anomalies atomic.Int64
}

// sampleQueueKey is the queue a demo or profile drives: the configured key, or for a pattern the
// key of its first sample dims ("delay:<topic>" -> "delay:topic0").
func sampleQueueKey(q scanner.DelayQueueSpec) string {
	if q.Pattern == nil {
		return q.Key
	}
	dims := make([]string, len(q.Pattern.Dims()))
	for i, name := range q.Pattern.Dims() {
		dims[i] = dimValue(name, 0)
	}
	k, _ := q.Pattern.Key(dims, "")
	return k
}

// ownWritable keeps of structs what hourglass itself would write: a library's limiter keys are
// that library's to write, and a list queue given by pattern is driven at one sample key.
func ownWritable(structs scanner.Structures) scanner.Structures {
	out := structs
	out.Limiters = nil
	for _, l := range structs.Limiters {
		if l.Layout == limits.Hourglass {
			out.Limiters = append(out.Limiters, l)
		}
	}
	out.ListQueues = nil
	for _, q := range structs.ListQueues {
		if q.Pattern != nil {
			q.Key = sampleQueueKey(scanner.DelayQueueSpec{Pattern: q.Pattern})
		}
		out.ListQueues = append(out.ListQueues, q)
	}
	return out
}

func newStructDemo(st *store.Store, structs scanner.Structures, counters []*store.Family, rate float64) (*structDemo, error) {
	structs = ownWritable(structs)
	d := &structDemo{st: st, structs: structs, counter: counters, rate: rate, rnd: rand.New(rand.NewPCG(7, 11)), userPrefix: "user"}
	d.users = rand.NewZipf(d.rnd, 1.3, 1, 999)
	for _, q := range structs.DelayQueues {
		d.queues = append(d.queues, st.DelayQueue(sampleQueueKey(q), q.Unit))
	}
	for _, q := range structs.ListQueues {
		d.lists = append(d.lists, st.ListQueue(q.Key))
	}
	for _, l := range structs.Limiters {
		lim, err := st.NewLimiter(l.LimiterSpec)
		if err != nil {
			return nil, err
		}
		d.limiters = append(d.limiters, lim)
	}
	for _, u := range structs.Uniques {
		d.uniques = append(d.uniques, st.NewUniques(u.Kind, u.Family))
	}
	for _, b := range structs.Blooms {
		g, err := newBloomGuard(st, b, demoBloom, true)
		if err != nil {
			return nil, err
		}
		d.blooms = append(d.blooms, g)
	}
	return d, nil
}

// run works every 100 ms until ctx ends; every error goes to report, a permanent one as the line
// that names the command it met and the user.
func (d *structDemo) run(ctx context.Context, report func(error)) {
	const tick = 100 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	user := store.UserOf(d.st.Client())
	fail := func(err error, command string) {
		if err != nil && ctx.Err() == nil {
			report(refusal(err, command, "", user))
		}
	}
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		phase := time.Since(start).Seconds() / 120 * 2 * math.Pi // a two-minute cycle
		per := d.rate * tick.Seconds()
		fail(d.queueTick(ctx, per, phase), "ZADD")
		fail(d.limiterTick(ctx, per), "EVALSHA")
		fail(d.uniqueTick(ctx, per), "PFADD")
		fail(d.bloomTick(ctx, per), "EVALSHA")
		if n%10 == 0 {
			fail(d.lockTick(ctx), "SET")
			for _, l := range d.limiters {
				fail(l.Flush(ctx), "EVALSHA")
			}
		}
		if d.anomalies && n%300 == 150 { // every half minute, an anomaly for TTL health
			fail(d.anomaly(ctx), "PERSIST")
		}
	}
}

// queueTick produces and consumes: the producer swings between 0.4 and 1.6 times the rate, the
// consumer keeps the average pace, so the backlog and its lag rise and fall.
func (d *structDemo) queueTick(ctx context.Context, per, phase float64) error {
	produce := int(per*(1+0.6*math.Sin(phase)) + d.rnd.Float64())
	consume := int(per*0.75 + d.rnd.Float64()) // the mean of what falls due at once: a backlog builds and drains
	now := d.st.Now()
	for i, q := range d.queues {
		tasks := make([]string, produce)
		for j := range tasks {
			tasks[j] = fmt.Sprintf("task-%d-%d", now.UnixNano(), j)
		}
		// Most are due at once, some in the next minutes and hours, so the schedule fills.
		if err := q.Enqueue(ctx, now, tasks[:produce*3/4]...); err != nil {
			return err
		}
		if err := q.Enqueue(ctx, now.Add(time.Duration(d.rnd.IntN(7200))*time.Second), tasks[produce*3/4:]...); err != nil {
			return err
		}
		d.counts.enqueued.Add(int64(produce))
		got, err := q.Claim(ctx, consume, 30*time.Second)
		if err != nil {
			return err
		}
		d.counts.claimed.Add(int64(len(got.Tasks)))
		done := got.Tasks
		if len(done) > 1 && i == 0 && d.rnd.IntN(20) == 0 {
			done = done[1:] // a worker that dies holding one: the reaper brings it back
		}
		n, err := q.Ack(ctx, got, done...)
		if err != nil {
			return err
		}
		d.counts.acked.Add(n)
		if _, err := q.Reap(ctx, 100); err != nil {
			return err
		}
	}
	for _, q := range d.lists {
		tasks := make([]string, max(produce/2, 1))
		for j := range tasks {
			// JSON with the time it was enqueued, as many services' own list queues hold it: the
			// queue's latency is read from it.
			tasks[j] = fmt.Sprintf(`{"id":"mail-%d-%d","enqueued_at":%d}`, now.UnixNano(), j, now.UnixMilli())
		}
		if err := q.Push(ctx, tasks...); err != nil {
			return err
		}
		d.counts.pushed.Add(int64(len(tasks)))
		for range max(consume/2, 1) {
			task, ok, err := q.Pop(ctx, time.Millisecond)
			if err != nil || !ok {
				return err
			}
			d.counts.popped.Add(1)
			if err := q.Ack(ctx, task); err != nil {
				return err
			}
		}
	}
	return nil
}

// limiterTick hits each limiter for Zipf-drawn users: the hottest few go over their limit.
func (d *structDemo) limiterTick(ctx context.Context, per float64) error {
	for i, l := range d.limiters {
		n := len(d.structs.Limiters[i].Pattern.Dims())
		for range int(per*3 + d.rnd.Float64()) {
			user := fmt.Sprint(d.userPrefix, d.users.Uint64())
			vals := make([]string, n) // every placeholder takes the user: rl:api:<user>
			for i := range vals {
				vals[i] = user
			}
			dec, err := l.Allow(ctx, vals...)
			if err != nil {
				return err
			}
			if dec.Allowed {
				d.counts.allowed.Add(1)
			} else {
				d.counts.rejected.Add(1)
			}
		}
	}
	return nil
}

// uniqueTick records visits: user ids Zipf-drawn, pages from a few.
func (d *structDemo) uniqueTick(ctx context.Context, per float64) error {
	for _, u := range d.uniques {
		n := int(per + d.rnd.Float64())
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprint(d.rnd.IntN(5000))
		}
		dims := make([]string, len(u.Dims()))
		for i, name := range u.Dims() {
			dims[i] = dimValue(name, d.rnd.IntN(3))
		}
		g := u.Granularities()[len(u.Granularities())-1] // days when it has them
		if err := u.Add(ctx, g, dims, time.Time{}, members...); err != nil {
			return err
		}
		d.counts.uniques.Add(int64(n))
	}
	return nil
}

// lockTick takes a lock now and then and releases one taken earlier.
func (d *structDemo) lockTick(ctx context.Context) error {
	for _, l := range d.structs.Locks {
		dims := make([]string, len(l.Pattern.Dims()))
		for i := range dims {
			dims[i] = fmt.Sprint(d.rnd.IntN(8))
		}
		key, err := l.Pattern.Key(dims, "")
		if err != nil {
			return err
		}
		lock, ok, err := d.st.Acquire(ctx, key, time.Duration(5+d.rnd.IntN(20))*time.Second)
		if err != nil {
			return err
		}
		if ok {
			d.counts.locks.Add(1)
			if d.rnd.IntN(2) == 0 {
				if _, err := lock.Release(ctx); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// anomaly makes one thing TTL health should find: a counter key that lost its TTL (PERSIST, as a
// careless script would), or a lock taken by SETNX whose PEXPIRE never ran.
func (d *structDemo) anomaly(ctx context.Context) error {
	rdb := d.st.Client()
	d.counts.anomalies.Add(1)
	if len(d.structs.Locks) > 0 && d.rnd.IntN(2) == 0 {
		l := d.structs.Locks[0]
		dims := make([]string, len(l.Pattern.Dims()))
		for i := range dims {
			dims[i] = fmt.Sprint("stuck", d.rnd.IntN(1000))
		}
		key, _ := l.Pattern.Key(dims, "")
		return rdb.SetNX(ctx, key, "pid-"+fmt.Sprint(d.rnd.IntN(30000)), 0).Err()
	}
	if len(d.counter) == 0 {
		return nil
	}
	f := d.counter[d.rnd.IntN(len(d.counter))]
	dims := make([]string, len(f.Dims()))
	for i, name := range f.Dims() {
		dims[i] = dimValue(name, d.rnd.IntN(DemoTuples))
	}
	key, err := f.Key(store.WindowAt(f.Granularities()[0], d.st.Now(), d.st.Location()), dims)
	if err != nil {
		return err
	}
	return rdb.Persist(ctx, key).Err()
}

// summary is one line per kind of what the demo did.
func (d *structDemo) summary() string {
	c := &d.counts
	var added, lookups, turned int64
	for _, g := range d.blooms {
		added, lookups, turned = added+g.added.Load(), lookups+g.lookups.Load(), turned+g.turned.Load()
	}
	line := fmt.Sprintf("delay_queue enqueued=%d claimed=%d acked=%d · list_queue pushed=%d popped=%d · limiter allowed=%d rejected=%d · uniques added=%d · bloom added=%d lookups=%d turned_away=%d · locks taken=%d · anomalies=%d",
		c.enqueued.Load(), c.claimed.Load(), c.acked.Load(), c.pushed.Load(), c.popped.Load(), c.allowed.Load(),
		c.rejected.Load(), c.uniques.Load(), added, lookups, turned, c.locks.Load(), c.anomalies.Load())
	for _, why := range d.bloomsLeft {
		line += " · " + why
	}
	return line
}

// burst runs ticks of the demo at once, with no waiting, so a one-shot command on the embedded
// Redis (snapshot, repair) has structures to report.
func (d *structDemo) burst(ctx context.Context, ticks int) error {
	per := d.rate * 0.1
	for n := range ticks {
		phase := float64(n) / float64(ticks) * math.Pi
		for _, err := range []error{d.queueTick(ctx, per, phase), d.limiterTick(ctx, per*4), d.uniqueTick(ctx, per), d.bloomTick(ctx, per), d.lockTick(ctx)} {
			if err != nil {
				return err
			}
		}
	}
	for _, l := range d.limiters {
		if err := l.Flush(ctx); err != nil {
			return err
		}
	}
	if !d.anomalies {
		return nil
	}
	return d.anomaly(ctx)
}

// useTestQueues points the demo's queues at test queues beside the configured ones, for a real
// Redis: its consumers then claim only the demo's own tasks; and its limiter users at keys no
// real user has.
func (d *structDemo) useTestQueues() {
	d.userPrefix = store.TestValue("user") // and limiter keys no real user has
	for i, q := range d.queues {
		d.queues[i] = d.st.DelayQueue(store.TestQueueKey(q.Key), q.Unit)
	}
	for i, q := range d.lists {
		d.lists[i] = d.st.ListQueue(store.TestQueueKey(q.Key))
	}
	d.blooms = nil
	for _, b := range d.structs.Blooms {
		g, err := newBloomGuard(d.st, b, demoBloom, false)
		if err != nil {
			d.bloomsLeft = append(d.bloomsLeft, err.Error())
			continue
		}
		d.blooms = append(d.blooms, g)
	}
}

// bloomTick creates a few records behind each filter and looks up twice as many ids.
func (d *structDemo) bloomTick(ctx context.Context, per float64) error {
	for _, g := range d.blooms {
		if _, err := g.step(ctx, d.rnd, int(per/2+d.rnd.Float64())); err != nil {
			return err
		}
	}
	return nil
}
