package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// Watcher keeps a Snapshot current for a console: each Poll sweeps on for a slice of time within
// the budget, and when a sweep completes its Snapshot replaces the last one and a new sweep
// begins. Each Poll returns that Snapshot with its counter families' rates measured again from
// the window totals read over the last minute (rateTrack). It also reads the server's INFO. A Poll that fails leaves
// the last Snapshot in place; after a failure the sweep starts over, since a restarted server
// invalidates its cursors.
type Watcher struct {
	rdb      redis.UniversalClient
	families []*store.Family
	opt      scanner.Options

	mu sync.Mutex // one Poll at a time
	// specMu guards families and the Structures for the drill-down's reads (Watched, for
	// internal/inspect), which must not wait for a Poll under way: Claim, their only writer, holds
	// mu as well.
	specMu sync.RWMutex
	// pace is the sweeps' budget (each sweep takes the last one's), charged by the drill-down's
	// reads without waiting for a Poll; nil before the first sweep.
	pace    atomic.Pointer[scanner.Pacer]
	clock   func() time.Time // the pacers' clock: time.Now (a test holds it still)
	sweep   *scanner.Sweep
	agg     *scanner.Aggregator
	last    *snapshot.Snapshot
	started time.Time
	restart bool
	conn    connTrack
	live    *liveSampler      // the counter families' keys read again at every Poll
	rates   rateTrack         // the families' current windows' totals read, for their rates
	tput    throughputTracker // the job libraries' counts of the jobs they ran, for their rates
	cost    *costMeter
	server  *ServerReader      // INFO, read at most every ServerEvery
	infer   *scanner.Inference // nil unless opt.Infer: the entries adopted from the keys
	// held is, after a first sweep started over with entries it adopted, the last figures of
	// the sweep dropped, shown until the new one has seen as many keys (heldSeen): its first
	// pages alone would make estimates that jump.
	held     *snapshot.Snapshot
	heldSeen int64
	// known is what the last complete sweep knew of the structures' keys, read again every Poll
	// (known.go); until one completes, the sweep under way's is read.
	known *scanner.Known
	// knownRead is the last read of them, at knownAt; nil when a sweep has
	// completed since.
	knownRead *scanner.LiveStructures
	knownAt   time.Time
	// primary follows the node a Sentinel client reaches (nil for any other client); seen is its
	// changes as the last Poll found them, and failoverAt when one last found a change.
	primary    *store.PrimaryTrack
	seen       int
	failoverAt time.Time
	// replica is where the sweep and the live reads go when read_from = "replica" (replica.go);
	// nil when they read from the primary.
	replica *replicaReads
}

// New returns a watcher of families on rdb. It adds a hook to rdb (to each node's client
// on a cluster) that counts the commands sent through it, for Status.Cost.
func New(rdb redis.UniversalClient, families []*store.Family, opt scanner.Options) *Watcher {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	w := &Watcher{rdb: rdb, families: families, opt: opt, restart: true, conn: connTrack{now: now}, clock: time.Now,
		live: newLiveSampler(families, opt), cost: newCostMeter(rdb), server: NewServerReader(), infer: scanner.NewInference(opt.Infer),
		primary: store.PrimaryOf(rdb)}
	if w.primary != nil {
		_, w.seen, _ = w.primary.Primary()
	}
	return w
}

// Poll sweeps on until slice has passed (within the budget), reads INFO when ServerEvery has
// passed since the last read, and returns the status.
// An error means Redis could not be reached or refused the sweep; the Status still holds the last
// Snapshot.
//
// focus names the family on screen: its current windows' top dims are read again (a GET each, one
// pipeline), so the numbers an operator looks at move between sweeps. "" reads none.
func (w *Watcher) Poll(ctx context.Context, slice time.Duration, focus string) (snapshot.Status, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := time.Now()
	w.checkNodes(ctx)
	if w.restart {
		w.begin()
	}
	w.holdRedisTime(ctx)
	base := w.last // what the live reads' moves count from
	var st snapshot.Status
	var swept *snapshot.Snapshot // the sweep this Poll completed, and when
	var sweptAt time.Time
	err := w.sweep.RunUntil(ctx, start.Add(slice), func(p scanner.Page) {
		w.agg.Add(p)
		w.live.visit(p)
		w.cost.visited(p)
	})
	w.agg.SetProgress(w.sweep.Progress())
	if err == nil && w.infer != nil {
		// Entries adopted while the sweep is young start it over; later ones wait for the next.
		if add := w.infer.Turn(w.sweep, w.agg.KeysSeen(), w.sweep.Done()); !add.Empty() {
			if w.last == nil && w.agg.KeysSeen() > w.heldSeen {
				w.held, w.heldSeen = w.agg.Snapshot(false), w.agg.KeysSeen()
			}
			w.add(add.Families, add.Structures)
			w.restart = true
		}
	}
	if err == nil && w.sweep.Done() && !w.restart {
		swept, sweptAt = w.complete(ctx, start), time.Now()
		st.Sweep.Completed = true
	}
	if errors.Is(err, scanner.ErrMastersChanged) || errors.Is(err, scanner.ErrRestarted) { // not an error to show, a sweep to redo
		w.begin()
		err = nil
	}
	if err != nil {
		w.restart = true
	}
	if w.server.due(time.Now()) {
		if _, infoErr := w.server.Read(ctx, w.rdb); err == nil && infoErr != nil {
			err = infoErr
		}
	}
	if err == nil {
		st.Cost = w.cost.read(ctx, w.rdb)
	}
	st.Snapshot, st.Inferred = w.last, w.infer.State()
	switch {
	case w.last != nil:
		w.held = nil
	case w.held != nil && w.agg.KeysSeen() < w.heldSeen && !w.restart:
		st.Partial = w.held // the sweep started over with new entries and has not caught up
	case w.agg.KeysSeen() > 0:
		st.Partial = w.agg.Snapshot(false)
	}
	st.Sweep.KeysSeen, st.Sweep.Started = w.agg.KeysSeen(), w.started
	st.Unclaimed = w.sweep.Unclaimed()
	if err == nil {
		st.Families, st.LiveReads, err = w.live.read(ctx, w.reader(), w.sweep.Pacer(), w.last, w.liveBudget())
		w.cost.readLive(st.LiveReads)
	}
	w.rates.observe(st.Families, swept, sweptAt)
	if err == nil {
		err = w.tput.poll(ctx, w.reader(), w.last, w.opt.Structures.JobQueues, w.conn.now())
	}
	st.Snapshot = w.tput.fill(w.rates.fill(w.last, time.Now(), w.live.current), time.Now())
	st.Server = w.serverInfo(st)
	if err == nil && focus != "" && w.last != nil {
		st.Live, err = w.readLive(ctx, focus, base)
	}
	if err == nil {
		err = w.readKnown(ctx, &st)
	}
	w.conn.polled(w.spent(start), st.Sweep.KeysSeen)
	st.Conn = w.conn.status(ctx, err)
	w.followPrimary(&st.Conn)
	return st, err
}

// followPrimary says where the reads go when a replica is asked for and, through Sentinel,
// which primary the Watcher reaches and when a failover was last seen; one seen during this
// Poll starts the sweep again at the next.
func (w *Watcher) followPrimary(cs *snapshot.ConnState) {
	cs.Reads = w.replica.state()
	if w.primary == nil {
		return
	}
	w.restart = w.failedOver() || w.restart
	cs.Primary, _, _ = w.primary.Primary()
	cs.FailoverAt = w.failoverAt
}

// checkNodes starts the sweep again when the node it reads has changed: a new primary, or
// another replica read from. The sweep's cursors mean nothing there.
func (w *Watcher) checkNodes(ctx context.Context) {
	w.restart = w.failedOver() || w.restart
	w.chooseReplica(ctx)
}

// failedOver reports whether the Sentinel client's connections have reached another primary
// since the last look, and notes when it was seen. The figures stay; the sweep starts again.
func (w *Watcher) failedOver() bool {
	if w.primary == nil {
		return false
	}
	if _, changes, _ := w.primary.Primary(); changes != w.seen {
		w.seen, w.failoverAt = changes, w.conn.now()
		return true
	}
	return false
}

// complete ends the sweep that is done: its last step's reads, its Snapshot (which replaces the
// last one, with the rates measured between the two), what it knows of the structures' keys for
// the live reads, and the next sweep begun. w.mu is held.
func (w *Watcher) complete(ctx context.Context, start time.Time) *snapshot.Snapshot {
	w.agg.AddReads(w.sweep.Finish(ctx, w.agg.Wants()))
	snap := w.agg.Snapshot(true)
	scanner.SetRate(snap, w.last)
	w.last = snap
	known := w.agg.Known()
	w.known, w.knownRead = &known, nil
	w.infer.Completed()
	w.conn.completed(w.spent(start))
	w.begin()
	return snap
}

// spent is the time the Poll begun at start has spent on the sweep under way.
func (w *Watcher) spent(start time.Time) time.Duration {
	if w.started.After(start) {
		start = w.started
	}
	return time.Since(start)
}

// readLive reads the current windows' top dims of family again, and how far each moved since
// base (nil: not known).
func (w *Watcher) readLive(ctx context.Context, family string, base *snapshot.Snapshot) ([]snapshot.LiveWindow, error) {
	f := w.last.Family(family)
	if f == nil {
		return nil, nil
	}
	now := w.opt.Now
	if now == nil {
		now = time.Now
	}
	pipe := w.reader().Pipeline()
	var live []snapshot.LiveWindow
	var cmds [][]*redis.StringCmd
	for _, win := range f.Windows {
		if !win.Current || len(win.Top) == 0 {
			continue
		}
		lw := snapshot.LiveWindow{Family: family, Granularity: win.Granularity, Window: win.Window}
		var wc []*redis.StringCmd
		for _, t := range win.Top {
			lw.Top = append(lw.Top, snapshot.DimsValue{Dims: t.Dims, Value: t.Value, Raw: t.Raw})
			wc = append(wc, pipe.Get(ctx, t.Raw))
		}
		live = append(live, lw)
		cmds = append(cmds, wc)
	}
	if len(live) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !scanner.KeyLevel(err) {
		return nil, err
	}
	at := now()
	for i := range live {
		for j, c := range cmds[i] {
			if v, err := c.Result(); err == nil {
				if n, ok := scanner.ParseInteger(v); ok {
					live[i].Top[j].Value = n
				}
			} else if err == redis.Nil {
				live[i].Top[j].Value = 0 // expired since the sweep
			}
		}
		top := live[i].Top
		sort.SliceStable(top, func(a, b int) bool { return top[a].Value > top[b].Value })
		live[i].ReadAt = at
		live[i].Moved, live[i].SweptAt = moved(base, &live[i])
	}
	return live, nil
}

// moved is how far each of lw's values moved since base's sweep, and when that sweep completed.
func moved(base *snapshot.Snapshot, lw *snapshot.LiveWindow) ([]snapshot.Moved, time.Time) {
	out := make([]snapshot.Moved, len(lw.Top))
	if base == nil {
		return out, time.Time{}
	}
	then := map[string]int64{}
	if f := base.Family(lw.Family); f != nil {
		for _, win := range f.Windows {
			if win.Granularity == lw.Granularity && win.Window == lw.Window {
				for _, t := range win.Top {
					then[t.Raw] = t.Value
				}
			}
		}
	}
	for i, t := range lw.Top {
		if v, ok := then[t.Raw]; ok {
			out[i] = snapshot.Moved{By: t.Value - v, Known: true}
		}
	}
	return out, base.TakenAt
}

// Claim adds counter families and structures to what the watcher counts. The sweep under way
// classified its keys without them, so it is dropped: the next Poll starts a sweep that counts
// the new entries' keys under them, and its Snapshot is the first to show them. A name already
// watched for the same kind of entry is refused, and nothing is added. Claim waits for a Poll
// under way to end (it holds the watcher's lock), so it never changes a sweep that is running.
func (w *Watcher) Claim(families []*store.Family, st scanner.Structures) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := claimClash(w.families, w.opt.Structures, families, st); err != nil {
		return err
	}
	w.add(families, st)
	w.restart = true
	return nil
}

// add adds families and structures to what the next sweep counts. w.mu is held.
func (w *Watcher) add(families []*store.Family, st scanner.Structures) {
	// New slices: the old ones may share their arrays with the caller's config.
	w.specMu.Lock()
	w.families = slices.Concat(w.families, families)
	w.opt.Structures = w.opt.Structures.With(st)
	w.specMu.Unlock()
	w.live.setFamilies(families)
}

// claimClash says which name of the added entries is already watched (or added twice) for the
// same kind of entry, as the config refuses a name declared twice.
func claimClash(fams []*store.Family, have scanner.Structures, addFams []*store.Family, add scanner.Structures) error {
	family := func(f *store.Family) string { return f.Name() }
	unique := func(u scanner.UniqueSpec) string { return u.Family.Name() }
	delay := func(q scanner.DelayQueueSpec) string { return q.Name }
	list := func(q scanner.ListQueueSpec) string { return q.Name }
	limiter := func(l scanner.LimiterSpec) string { return l.Name }
	lock := func(l scanner.LockSpec) string { return l.Name }
	job := func(j scanner.JobQueueSpec) string { return j.Name }
	bloom := func(b scanner.BloomSpec) string { return b.Name }
	for _, k := range []struct {
		what     string
		old, new []string
	}{
		{"counter family", names(fams, family), names(addFams, family)},
		{"unique family", names(have.Uniques, unique), names(add.Uniques, unique)},
		{"delay queue", names(have.DelayQueues, delay), names(add.DelayQueues, delay)},
		{"list queue", names(have.ListQueues, list), names(add.ListQueues, list)},
		{"limiter", names(have.Limiters, limiter), names(add.Limiters, limiter)},
		{"lock", names(have.Locks, lock), names(add.Locks, lock)},
		{"job queue", names(have.JobQueues, job), names(add.JobQueues, job)},
		{"bloom", names(have.Blooms, bloom), names(add.Blooms, bloom)},
	} {
		seen := map[string]bool{}
		for _, n := range k.old {
			seen[n] = true
		}
		for _, n := range k.new {
			if seen[n] {
				return fmt.Errorf("scanner: claim: a %s named %q is already watched", k.what, n)
			}
			seen[n] = true
		}
	}
	return nil
}

// names maps each of xs to its name.
func names[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

func (w *Watcher) begin() {
	if later := w.infer.TakePending(); !later.Empty() { // adopted too late for the last sweep
		w.add(later.Families, later.Structures)
	}
	pace := scanner.NewPacer(w.opt.KeysPerSecond, w.clock)
	if w.sweep != nil { // what the last sweep read, its unions included, is paid before the next reads more
		pace = w.sweep.Pacer()
	}
	w.sweep = scanner.New(w.reader(), w.families, w.opt)
	w.sweep.UsePacer(pace)
	w.pace.Store(pace)
	w.agg = scanner.NewAggregator(w.families, w.opt)
	w.live.newSweep()
	w.started, w.restart = time.Now(), false
	w.conn.began()
}
