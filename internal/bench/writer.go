package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// writerCase is one shape the writer is measured at.
type writerCase struct {
	name                string
	id                  string // its name in Report.ServerTime
	pairs, lanes, calls int
	zipf                bool
	// steady writes the keys of the case before again (the same draws), which are all there
	// with their TTL; the others start on an empty keyspace.
	steady bool
}

// writerPlan is the writer's cases in the order Report.Writer holds them.
var writerPlan = []writerCase{
	{name: "1 connection, pipelines of 16, 1 pair a call", id: "writer_single_pair_c1", pairs: 1, lanes: 1, calls: 16},
	{name: "1 connection, pipelines of 16, 32 pairs a call", id: "writer_fresh_c1", pairs: 32, lanes: 1, calls: 16},
	{name: "4 connections, pipelines of 16, 1 pair a call", id: "writer_single_pair_c4", pairs: 1, lanes: 4, calls: 16},
	{name: "4 connections, pipelines of 16, 32 pairs a call", id: "writer_fresh_c4", pairs: 32, lanes: 4, calls: 16},
	{name: "defaults (4 lanes, pipelines of 256, 32 pairs)", id: "writer_defaults", pairs: 32},
	{name: "defaults, Zipf over 10,000 dims", id: "writer_zipf", pairs: 32, zipf: true},
	{name: "1 connection, pipelines of 16, 32 pairs a call, keys there", id: "writer_steady_c1", pairs: 32, lanes: 1, calls: 16, steady: true},
	{name: "4 connections, pipelines of 16, 32 pairs a call, keys there", id: "writer_steady_c4", pairs: 32, lanes: 4, calls: 16, steady: true},
}

// writerOrder is the order the cases run in: each steady case right after the fresh one whose
// keys it writes again.
var writerOrder = []int{0, 1, 6, 2, 3, 7, 4, 5}

// writerCases measures the writer at each shape into rep.Writer, and after its steady cases the
// floors on the keys they wrote, into rep.Floors. A steady case and its floors run in rounds, one
// of each in turn, so that the writer and its floors meet the same state of the machine.
func (b *bencher) writerCases(rep *Report, st *store.Store, fam *store.Family, events int) error {
	rep.Writer = make([]rate3, len(writerPlan))
	rep.Floors = make([]floorRate, len(floorPlan))
	rep.SteadyRounds = steadyRounds
	for _, i := range writerOrder {
		c := writerPlan[i]
		if !c.steady {
			if err := b.clean(); err != nil { // every fresh case starts from the same keyspace
				return err
			}
		}
		rounds := rounds(c)
		var runs []caseRun
		floors := map[int][]caseRun{}
		for k := range rounds {
			b.step("writer: %s%s", c.name, roundOf(k, rounds))
			r, err := b.writer(st, fam, max(events/rounds, 1), c)
			if err != nil {
				return err
			}
			runs = append(runs, r)
			for _, j := range floorAfter[i] {
				b.step("%s%s", floorPlan[j].name, roundOf(k, rounds))
				f, err := b.floor(st, fam, max(events/rounds, 1), floorPlan[j])
				if err != nil {
					return err
				}
				floors[j] = append(floors[j], f)
			}
		}
		rep.Writer[i] = b.writerRate(c, runs)
		for j, fr := range floors {
			rep.Floors[j] = b.floorRate(floorPlan[j], fr)
		}
	}
	return nil
}

// steadyRounds is how many rounds a steady case and its floors run in, each with a share of the
// events. A round is stretched wherever Redis waited for a core, so more and shorter rounds give
// more chances of one that was not; each round still makes a few hundred calls.
const steadyRounds = 5

// rounds is how many rounds writer case c runs in: a steady case steadyRounds, any other once.
func rounds(c writerCase) int {
	if c.steady {
		return steadyRounds
	}
	return 1
}

// roundOf names round k of n in a step, or nothing when there is one.
func roundOf(k, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(", round %d of %d", k+1, n)
}

// caseRun is one run of a writer case or a floor: what it sent, how long it took, and Redis'
// time on it (nil when the server's counters could not be read).
type caseRun struct {
	events, pairs, calls, secs float64
	st                         *ServerTime
}

// sumRuns is runs together (what they sent, over the time they took), and the server time to file
// for them: the least a unit of any run's, with the longest call of all of them; nil when no
// run's is known. A run's time is stretched wherever Redis waited for a core (usec is wall time),
// never shrunk, so the least of a few rounds is the closest to Redis' own. leastCalls is the
// calls of the run whose time that is.
func sumRuns(runs []caseRun) (all caseRun, filed *ServerTime, leastCalls float64) {
	var longest *float64
	for _, r := range runs {
		all.events += r.events
		all.pairs += r.pairs
		all.calls += r.calls
		all.secs += r.secs
		if r.st == nil {
			continue
		}
		if filed == nil || r.st.UsPer < filed.UsPer {
			filed, leastCalls = r.st, r.calls
		}
		if l := r.st.LongestAtMost; l != nil && (longest == nil || *l > *longest) {
			longest = l
		}
	}
	all.secs = max(all.secs, 1e-9)
	if filed != nil {
		c := *filed
		c.LongestAtMost = longest
		filed = &c
	}
	return all, filed, leastCalls
}

// writerRate is case c's row from its runs: wall-clock rates over all of them, Redis' time that
// of the least run (sumRuns), filed as the case's server time.
func (b *bencher) writerRate(c writerCase, runs []caseRun) rate3 {
	all, st, calls := sumRuns(runs)
	r := rate3{Case: c.name, Keys: "fresh", EventsPerSec: all.events / all.secs, PairsPerSec: all.pairs / all.secs,
		ScriptsPerSec: all.calls / all.secs}
	if c.steady {
		r.Keys = "steady"
	}
	if st != nil {
		b.server[c.id] = st
		perCall := st.Usec / max(calls, 1)
		r.ServerUsPerPair, r.LongestCallUs, r.ServerUsPerCall = &st.UsPer, st.LongestAtMost, &perCall
	}
	return r
}

// writer adds events on one goroutine while another flushes, as a service runs it.
func (b *bencher) writer(st *store.Store, f *store.Family, events int, c writerCase) (caseRun, error) {
	w := st.NewWriter(store.WriterOptions{KeysPerCall: 2 * c.pairs, Lanes: c.lanes, CallsPerPipeline: c.calls})
	// Dims are drawn the way redis-benchmark draws its keys (-r 1000000: uniformly from a
	// million), so both find the same share of keys already there; or Zipf-like from 10,000.
	// Every case draws the same sequence, so a steady case finds the keys of the one before.
	tuples := b.tuples()
	dims := len(tuples)
	if c.zipf {
		dims = 10_000
	}
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.1, 1, uint64(dims-1))
	var sent store.FlushResult
	var addErr atomic.Value
	mk := b.meter.start(b.ctx)
	start := time.Now()
	added := make(chan struct{})
	go func() {
		defer close(added)
		for i := range events {
			if i%4096 == 0 && b.ctx.Err() != nil {
				return
			}
			idx := r.IntN(dims)
			if c.zipf {
				idx = int(z.Uint64())
			}
			if err := w.Add(f, tuples[idx], 1, time.Time{}); err != nil {
				addErr.Store(fmt.Sprint(err))
				return
			}
		}
	}()
	for done := false; !done || w.Pending() > 0; {
		select {
		case <-added:
			done = true
		default:
		}
		res, err := w.Flush(b.ctx)
		if err != nil {
			<-added
			return caseRun{}, err
		}
		sent.Events += res.Events
		sent.Keys += res.Keys
		sent.Calls += res.Calls
	}
	if err := b.ctx.Err(); err != nil {
		return caseRun{}, err
	}
	if e, _ := addErr.Load().(string); e != "" {
		return caseRun{}, errors.New(e)
	}
	secs := time.Since(start).Seconds()
	pairs := float64(sent.Keys) / 2
	return caseRun{events: float64(sent.Events), pairs: pairs, calls: float64(sent.Calls), secs: secs,
		st: b.meter.since(b.ctx, mk, pairs, "key pair", nil)}, nil
}

// tuples returns the dims tuples the writer cases draw from, made once.
func (b *bencher) tuples() [][]string {
	if b.dims == nil {
		b.dims = make([][]string, benchKeyspace)
		for i := range b.dims {
			b.dims[i] = []string{"c" + strconv.Itoa(i%97), strconv.Itoa(i)}
		}
	}
	return b.dims
}

// bareClients measures go-redis alone at redis-benchmark's shape, on one connection and on four.
func (b *bencher) bareClients(rep *Report, events int) error {
	var err error
	b.step("go-redis alone at redis-benchmark's shape, 1 connection")
	if rep.BareClient, rep.BareC1, err = b.bareClient(events, 1); err != nil {
		return err
	}
	b.step("go-redis alone at redis-benchmark's shape, 4 connections")
	rep.BareClient4, rep.BareC4, err = b.bareClient(events, 4)
	return err
}

// bareClient sends the calls redis-benchmark sends (one pair a call, sequence 0, keys drawn from
// a million) through go-redis alone, in pipelines of 16 on each of conns connections at once.
// It returns pairs/s and Redis' µs a pair.
func (b *bencher) bareClient(n, conns int) (float64, *float64, error) {
	st := store.New(b.rdb, store.Options{})
	if err := st.LoadScripts(b.ctx); err != nil {
		return 0, nil, err
	}
	if err := b.clean(); err != nil {
		return 0, nil, err
	}
	sha := store.CounterScriptHash()
	seq, prefix := "{"+store.BenchKey("gr")+"}:seq", store.BenchKey("gr:")
	exp := time.Now().Add(3 * time.Hour).UnixMilli()
	const depth = 16
	each := max(n/conns/depth, 1) * depth
	errs := make([]error, conns)
	var secs float64
	stime, err := b.measure(fmt.Sprintf("bare_client_c%d", conns), float64(each*conns), "key pair", func() error {
		var wg sync.WaitGroup
		start := time.Now()
		for c := range conns {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(9, uint64(c)))
				for i := 0; i < each; i += depth {
					pipe := b.rdb.Pipeline()
					for range depth {
						h, d := strconv.Itoa(r.IntN(benchKeyspace)), strconv.Itoa(r.IntN(benchKeyspace))
						pipe.EvalSha(b.ctx, sha, []string{seq, "{" + prefix + h + "}:h", "{" + prefix + d + "}:d"}, 0, 0, 0, 1, exp, 1, exp)
					}
					if _, err := pipe.Exec(b.ctx); err != nil {
						errs[c] = err
						return
					}
				}
			})
		}
		wg.Wait()
		secs = time.Since(start).Seconds()
		return errors.Join(errs...)
	})
	if err != nil {
		return 0, nil, err
	}
	var us *float64
	if stime != nil {
		us = &stime.UsPer
	}
	return float64(each*conns) / secs, us, nil
}
