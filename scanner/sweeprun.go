package scanner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// Run sweeps until the sweep is done or ctx ends, at the budget, handing each page to visit on
// the caller's goroutine. Each master runs as a pipeline of three stages on their own goroutines
// and connections: SCAN and classify; read the family keys' TTLs and values; visit. So Redis
// scans one page and reads another while hourglass classifies and visits a third, and neither
// side waits on the other. A Run stopped by an error or ctx leaves the sweep where the last
// visited page ended: Step or Run resume it from there, with nothing skipped.
func (s *Sweep) Run(ctx context.Context, visit func(Page)) error {
	if s.retry != nil {
		return s.runRetrying(ctx, time.Time{}, visit)
	}
	return s.run(ctx, time.Time{}, visit)
}

// RunUntil is Run that starts no new SCAN after until: the pages already scanned are still read
// and visited, so it returns soon after until with nothing lost, and the next call resumes. A
// console calls it on every poll with a slice of its refresh interval.
func (s *Sweep) RunUntil(ctx context.Context, until time.Time, visit func(Page)) error {
	return s.run(ctx, until, visit)
}

func (s *Sweep) run(ctx context.Context, until time.Time, visit func(Page)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make(chan visited, 4)
	go func() {
		defer close(out)
		var mu sync.Mutex
		masters := map[string]bool{}
		// The masters a sweep under way began on; none yet for a new sweep.
		s.mu.Lock()
		began := make(map[string]bool, len(s.done))
		for addr := range s.done {
			began[addr] = true
		}
		s.mu.Unlock()
		run := func(ctx context.Context, addr string, c redis.Cmdable) error {
			mu.Lock()
			masters[addr] = true
			mu.Unlock()
			if len(began) > 0 && !began[addr] {
				// A master the sweep did not begin on (a replica promoted in a failover) holds
				// keys another master may have given already: scanning it from the start
				// would count them twice.
				cancel(ErrMastersChanged)
				return nil
			}
			if err := s.runMaster(ctx, addr, c, until, out); err != nil {
				cancel(err)
			}
			return nil
		}
		if cc, ok := s.rdb.(*redis.ClusterClient); ok {
			s.countMasters(ctx)
			if err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
				return run(ctx, c.Options().Addr, c)
			}); err != nil {
				cancel(err)
			}
			if err := s.checkMasters(masters); err != nil {
				cancel(err)
			}
		} else {
			_ = run(ctx, "", s.rdb)
		}
	}()
	for v := range out {
		if err := <-v.read; err != nil {
			cancel(err)
		}
		if ctx.Err() != nil {
			continue // drain: the stages stop on ctx
		}
		visit(*v.page)
		s.mu.Lock()
		s.started = true
		s.cursors[v.addr], s.pending[v.addr] = v.next, nil
		s.done[v.addr] = v.next == 0
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.started = s.started || len(s.done) > 0
	s.mu.Unlock()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("scanner: sweep: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// ErrMastersChanged says a cluster's masters are not those the sweep began with (a failover): its
// cursors mean nothing on the new ones, so the sweep must start over.
var ErrMastersChanged = errors.New("the cluster's masters changed during the sweep")

// checkMasters reports ErrMastersChanged when a master the sweep began on, and had not finished,
// is no longer one. (A new master is caught before it is scanned, in run.)
func (s *Sweep) checkMasters(now map[string]bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for addr, done := range s.done {
		if !done && !now[addr] {
			return ErrMastersChanged
		}
	}
	return nil
}

// visited is a page of one master, the cursor after it, and the outcome of its read, which
// may still be under way: page is filled before read says so.
type visited struct {
	addr string
	page *Page
	next uint64
	read chan error
}

// readsInFlight is how many pages of one master are read at once: while hourglass parses one
// reply, Redis works on the next page.
const readsInFlight = 3

// runMaster sweeps one master to its end, sending each page read to out.
func (s *Sweep) runMaster(ctx context.Context, addr string, c redis.Cmdable, until time.Time, out chan<- visited) error {
	s.mu.Lock()
	if s.done[addr] {
		verified := s.verified[addr]
		s.mu.Unlock()
		if verified {
			return nil
		}
		return s.verify(ctx, addr, c) // its last check failed: the server may have restarted since
	}
	s.done[addr] = false // known, and not done: Done waits for it
	cursor, begun := s.cursors[addr]
	pending := append([]Key(nil), s.pending[addr]...) // read into a copy: a Step may read the original
	s.mu.Unlock()
	if err := s.sameServer(ctx, addr, c, begun); err != nil {
		return err
	}
	s.readPopulation(ctx, addr, c)

	// Every goroutine started here has ended when runMaster returns: on success the reads under
	// way finish; on failure cancel stops them first.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()

	// Unbuffered: SCAN runs at most one page ahead of the page being classified.
	batches := make(chan scanBatch)
	scanErr := make(chan error, 1)
	m := master{addr: addr, c: c, tune: s.tunerOf(addr), turn: &sync.Mutex{}}
	wg.Add(1)
	go func() { // stage 1: SCAN
		defer wg.Done()
		defer close(batches)
		if err := s.scanPages(ctx, m, cursor, begun, pending, until, batches); err != nil {
			scanErr <- err
		}
	}()
	if !s.readPages(ctx, m, batches, out, &wg) { // stage 2: classify and read
		return nil
	}
	select {
	case err := <-scanErr:
		return err
	default:
		wg.Wait() // the last reads are in: a restart under them shows now
		return s.verify(ctx, addr, c)
	}
}

// master is one master a Run sweeps: its address ("" on a standalone server), its client and the
// tuner of its calls. Its SCAN and its pipelines of reads take turns (turn, nil in Step, where
// they overlap): nothing of the sweep's is then queued at Redis ahead of a call, so each call's
// round trip bounds Redis' time of that call alone. The SCAN stage hands a page on only when the
// read stage takes it, so at most two more SCANs come between a page's SCAN and its reads (the
// fewer, the more of the keys that SCAN walked are still in Redis' CPU cache). Redis has the next
// call as soon as one ends, while hourglass classifies and parses.
type master struct {
	addr string
	c    redis.Cmdable
	tune *tuner
	turn *sync.Mutex
}

// lock takes the master's turn; unlock gives it back.
func (m master) lock() {
	if m.turn != nil {
		m.turn.Lock()
	}
}

func (m master) unlock() {
	if m.turn != nil {
		m.turn.Unlock()
	}
}

// scanBatch is one page of a master's SCAN: the names it returned (or, for the keys pending from
// an earlier step, keys already classified) and the cursor after it.
type scanBatch struct {
	names   []string
	keys    []Key
	pending bool
	next    uint64
	// first and last are the hash slots of the page's first and last key on a cluster (-1
	// otherwise).
	first, last int
}

// scanPages is a master's first stage: it sends the keys pending from an earlier sweep step, then
// SCANs from cursor at the budget, each SCAN at the COUNT its tuner sets and in its own turn,
// until the master is scanned to its end, until passes (when
// not zero) or ctx ends. begun says whether cursor came from a SCAN already made. It returns only
// a SCAN's error.
func (s *Sweep) scanPages(ctx context.Context, m master, cursor uint64, begun bool, pending []Key, until time.Time, batches chan<- scanBatch) error {
	send := func(b scanBatch) bool {
		select {
		case batches <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if len(pending) > 0 && !send(scanBatch{keys: pending, pending: true, next: cursor, first: -1, last: -1}) {
		return nil
	}
	if begun && cursor == 0 {
		return nil // scanned to the end before; only pending keys were left
	}
	for {
		share := s.shareOf(m.addr)
		if !until.IsZero() && (!s.pace.readyBy(until) || !share.readyBy(until)) {
			return nil // the budget, or this master's share of it, allows no more pages in this slice
		}
		if err := share.Wait(ctx); err != nil {
			return nil
		}
		if err := s.pace.Wait(ctx); err != nil {
			return nil
		}
		count := m.tune.scanCount()
		m.lock()
		start := time.Now()
		names, next, err := m.c.Scan(ctx, cursor, "", int64(count)).Result()
		took := time.Since(start)
		m.unlock()
		if err != nil {
			return s.refusal("SCAN", "", err)
		}
		m.tune.scanned(count, took)
		s.pace.Spend(len(names))
		share.Spend(len(names))
		b := scanBatch{names: names, next: next, first: -1, last: -1}
		if _, cluster := s.rdb.(*redis.ClusterClient); cluster && len(names) > 0 {
			b.first, b.last = store.Slot(names[0]), store.Slot(names[len(names)-1])
		}
		if !send(b) || next == 0 {
			return nil
		}
		cursor = next
	}
}

// readPages is a master's second stage: it classifies each batch's names in SCAN's order, reads
// the family keys, a few pages at once on goroutines counted in wg, and sends each page to out
// in SCAN's order, its read still under way. It reports false when ctx ended first.
func (s *Sweep) readPages(ctx context.Context, m master, batches <-chan scanBatch, out chan<- visited, wg *sync.WaitGroup) bool {
	sem := make(chan struct{}, readsInFlight)
	last := -1 // the hash slot the last page SCAN returned ended in, on a cluster
	for b := range batches {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		keys, samples := b.keys, []string(nil)
		if !b.pending {
			keys, samples = s.classify(m.addr, b.first >= 0 && b.first == last, b.names)
			if len(b.names) > 0 {
				last = b.last
			}
		}
		v := visited{addr: m.addr, next: b.next, read: make(chan error, 1),
			page: &Page{Seen: len(b.names), Keys: keys, master: m.addr, firstSlot: b.first, lastSlot: b.last}}
		if m.addr != "" {
			v.page.SeenBy = map[string]int{m.addr: len(b.names)}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.lock()
			err := s.readTimed(ctx, m, keys)
			if err == nil {
				err = s.readSamples(ctx, m.c, samples)
			}
			m.unlock()
			v.read <- err
			<-sem
		}()
		select {
		case out <- v:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// readTimed reads a page's keys at the master's MGET size, and tells the tuner what it took.
func (s *Sweep) readTimed(ctx context.Context, m master, keys []Key) error {
	if len(keys) == 0 {
		return nil
	}
	start := time.Now()
	err := s.read(ctx, m.c, keys, m.tune.readChunk())
	if err == nil {
		m.tune.read(len(keys), time.Since(start))
	}
	return err
}
