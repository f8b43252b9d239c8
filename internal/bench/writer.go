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
// floors on the keys they wrote, into rep.Floors.
func (b *bencher) writerCases(rep *Report, st *store.Store, fam *store.Family, events int) error {
	rep.Writer = make([]rate3, len(writerPlan))
	for _, i := range writerOrder {
		c := writerPlan[i]
		b.step("writer: %s", c.name)
		if !c.steady {
			if err := b.clean(); err != nil { // every fresh case starts from the same keyspace
				return err
			}
		}
		r, err := b.writer(st, fam, events, c)
		if err != nil {
			return err
		}
		r.Case, r.Keys = c.name, "fresh"
		if c.steady {
			r.Keys = "steady"
		}
		rep.Writer[i] = r
		if err := b.floors(rep, st, fam, events, i); err != nil {
			return err
		}
	}
	return nil
}

// writer adds events on one goroutine while another flushes, as a service runs it.
func (b *bencher) writer(st *store.Store, f *store.Family, events int, c writerCase) (rate3, error) {
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
			return rate3{}, err
		}
		sent.Events += res.Events
		sent.Keys += res.Keys
		sent.Calls += res.Calls
	}
	if err := b.ctx.Err(); err != nil {
		return rate3{}, err
	}
	if e, _ := addErr.Load().(string); e != "" {
		return rate3{}, errors.New(e)
	}
	secs := time.Since(start).Seconds()
	pairs := float64(sent.Keys) / 2
	rate := rate3{EventsPerSec: float64(sent.Events) / secs, PairsPerSec: pairs / secs, ScriptsPerSec: float64(sent.Calls) / secs}
	if stime := b.meter.since(b.ctx, mk, pairs, "key pair", nil); stime != nil {
		b.server[c.id] = stime
		rate.ServerUsPerPair, rate.LongestCallUs = &stime.UsPer, stime.LongestAtMost
		perCall := stime.Usec / float64(max(sent.Calls, 1))
		rate.ServerUsPerCall = &perCall
	}
	return rate, nil
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
