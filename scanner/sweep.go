package scanner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// Options tune a sweep. The zero value is usable.
type Options struct {
	// Count is the COUNT hint of each SCAN call (1000 when zero).
	Count int
	// KeysPerSecond caps how many keys a sweep visits a second, across all masters; 0 is no cap.
	KeysPerSecond int
	// Location is the time zone windows are cut in (time.Local when nil).
	Location *time.Location
	// Structures are the limiters, locks and uniques whose keys the sweep also finds and reads
	// (queues are read by their keys, not swept).
	Structures Structures
}

// Key is what a sweep read about one key of a family (or, when Structure is not zero, of a
// limiter, lock or unique: Value then holds its hit count, holder token or distinct count).
type Key struct {
	Name string
	store.Classified
	TTL       time.Duration // remaining time to live; NoTTL when the key has none
	Value     string        // the raw value of a string key
	WrongType bool          // the key holds something other than a string
	Gone      bool          // the key expired or was deleted between SCAN and the read

	kind   keyKind // counter, limiter, lock or unique
	spec   int     // index of its spec in Structures, for the kinds other than counter
	window store.Window
}

// NoTTL is Key.TTL for a key without an expiry.
const NoTTL = time.Duration(-1)

// Page is what one sweep step saw.
type Page struct {
	Seen int   // keys SCAN returned, in families or not
	Keys []Key // the keys that belong to a family, read
	// SeenBy splits Seen by cluster master address (nil on a standalone server).
	SeenBy map[string]int
}

// Sweep walks the keyspace with SCAN (on every master of a cluster, each with its own cursor),
// classifies each key to the first family it fits, and reads the family keys' TTL and value in
// one pipeline per page. Keys in no family are counted, not kept. It never uses KEYS.
//
// A sweep is budgeted: Step does nothing until the keys already visited fit KeysPerSecond, so a
// console that calls it on every poll never visits keys faster than that.
type Sweep struct {
	rdb      redis.UniversalClient
	families []*store.Family
	structs  Structures
	loc      *time.Location
	count    int
	pace     *pacer

	mu      sync.Mutex
	cursors map[string]uint64 // by master address ("" on a standalone server)
	pending map[string][]Key  // family keys SCAN returned, read with the next SCAN
	done    map[string]bool
	started bool
}

// New returns a sweep over rdb for families.
func New(rdb redis.UniversalClient, families []*store.Family, opt Options) *Sweep {
	if opt.Count <= 0 {
		opt.Count = 1000
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
	return &Sweep{
		rdb: rdb, families: families, loc: opt.Location, count: opt.Count, structs: opt.Structures,
		pace:    newPacer(opt.KeysPerSecond, time.Now),
		cursors: map[string]uint64{},
		pending: map[string][]Key{},
		done:    map[string]bool{},
	}
}

// Done reports whether every master's cursor has come back to 0.
func (s *Sweep) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return false
	}
	for _, d := range s.done {
		if !d {
			return false
		}
	}
	return true
}

// Step visits one SCAN page on every master not yet done, if the budget allows; otherwise it
// returns an empty page at once. The family keys a SCAN finds are read in the next step's
// pipeline, together with the next SCAN, so a page costs one round trip. It is safe to call
// after Done (it returns an empty page).
func (s *Sweep) Step(ctx context.Context) (Page, error) {
	if !s.pace.ready() {
		return Page{}, nil
	}
	var page Page
	var mu sync.Mutex
	step := func(ctx context.Context, addr string, c redis.Cmdable) error {
		s.mu.Lock()
		if s.done[addr] {
			s.mu.Unlock()
			return nil
		}
		cursor, begun := s.cursors[addr] // absent until this master's first SCAN succeeded
		pending := s.pending[addr]
		s.done[addr] = false
		s.mu.Unlock()
		p, next, found, err := s.page(ctx, c, cursor, pending, !begun || cursor != 0)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.cursors[addr], s.pending[addr] = next, found
		s.done[addr] = next == 0 && len(found) == 0 // scanned to the end, and all of it read
		s.mu.Unlock()
		mu.Lock()
		page.Seen += p.Seen
		page.Keys = append(page.Keys, p.Keys...)
		if addr != "" {
			if page.SeenBy == nil {
				page.SeenBy = map[string]int{}
			}
			page.SeenBy[addr] += p.Seen
		}
		mu.Unlock()
		return nil
	}
	var err error
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return step(ctx, c.Options().Addr, c)
		})
	} else {
		err = step(ctx, "", s.rdb)
	}
	s.mu.Lock()
	s.started = s.started || len(s.done) > 0
	s.mu.Unlock()
	s.pace.spend(page.Seen)
	if err != nil {
		return page, fmt.Errorf("scanner: sweep: %w", err)
	}
	return page, nil
}

// Run sweeps until the sweep is done or ctx ends, at the budget, handing each page to visit on
// the caller's goroutine. Each master runs as a pipeline of three stages on their own goroutines
// and connections: SCAN and classify; read the family keys' TTLs and values; visit. So Redis
// scans one page and reads another while hourglass classifies and visits a third, and neither
// side waits on the other. A Run stopped by an error or ctx leaves the sweep where the last
// visited page ended: Step or Run resume it from there, with nothing skipped.
func (s *Sweep) Run(ctx context.Context, visit func(Page)) error {
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
		visit(v.page)
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
// may still be under way.
type visited struct {
	addr string
	page Page
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
		s.mu.Unlock()
		return nil
	}
	s.done[addr] = false // known, and not done: Done waits for it
	cursor, begun := s.cursors[addr]
	pending := append([]Key(nil), s.pending[addr]...) // read into a copy: a Step may read the original
	s.mu.Unlock()

	// Every goroutine started here has ended when runMaster returns: on success the reads under
	// way finish; on failure cancel stops them first.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()

	type batch struct {
		keys []Key
		seen int
		next uint64
	}
	batches := make(chan batch, 2)
	scanErr := make(chan error, 1)
	wg.Add(1)
	go func() { // stage 1: SCAN and classify
		defer wg.Done()
		defer close(batches)
		send := func(b batch) bool {
			select {
			case batches <- b:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if len(pending) > 0 && !send(batch{keys: pending, next: cursor}) {
			return
		}
		if begun && cursor == 0 {
			return // scanned to the end before; only pending keys were left
		}
		for {
			if !until.IsZero() && !s.pace.readyBy(until) {
				return // the budget allows no more pages in this slice
			}
			if err := s.pace.wait(ctx); err != nil {
				return
			}
			names, next, err := c.Scan(ctx, cursor, "", int64(s.count)).Result()
			if err != nil {
				scanErr <- err
				return
			}
			s.pace.spend(len(names))
			if !send(batch{keys: s.classify(names), seen: len(names), next: next}) || next == 0 {
				return
			}
			cursor = next
		}
	}()
	sem := make(chan struct{}, readsInFlight)
	for b := range batches { // stage 2: read, a few pages at once; visits keep SCAN's order
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		v := visited{addr: addr, page: Page{Seen: b.seen, Keys: b.keys}, next: b.next, read: make(chan error, 1)}
		if addr != "" {
			v.page.SeenBy = map[string]int{addr: b.seen}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.read <- s.read(ctx, c, b.keys)
			<-sem
		}()
		select {
		case out <- v:
		case <-ctx.Done():
			return nil
		}
	}
	select {
	case err := <-scanErr:
		return err
	default:
		return nil
	}
}

// page reads the family keys the previous SCAN returned (pending) and, at the same time on
// another connection, runs the next SCAN from cursor when scan is true, so Redis reads one page
// while hourglass classifies the next. It returns the keys read, the next cursor and the family
// keys the new SCAN found, to read next time.
func (s *Sweep) page(ctx context.Context, c redis.Cmdable, cursor uint64, pending []Key, scan bool) (Page, uint64, []Key, error) {
	var wg sync.WaitGroup
	var readErr error
	if len(pending) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readErr = s.read(ctx, c, pending)
		}()
	}
	var (
		names []string
		next  uint64
		found []Key
		err   error
	)
	if scan {
		names, next, err = c.Scan(ctx, cursor, "", int64(s.count)).Result()
		if err == nil {
			found = s.classify(names)
		}
	}
	wg.Wait()
	if readErr != nil {
		return Page{}, 0, nil, readErr
	}
	if err != nil {
		return Page{}, 0, nil, err
	}
	return Page{Seen: len(names), Keys: pending}, next, found, nil
}

// classify returns the keys among names that belong to a family.
func (s *Sweep) classify(names []string) []Key {
	found := make([]Key, 0, len(names))
	for _, name := range names {
		if store.IsOwnKey(name) {
			continue // the tool's own bookkeeping (writer sequence records, decision counters)
		}
		if cl, ok := store.Classify(s.families, name, s.loc); ok {
			found = append(found, Key{Name: name, Classified: cl})
		} else if k, ok := s.classifyStructure(name); ok {
			found = append(found, k)
		}
	}
	return found
}

// classifyStructure finds the limiter, lock, unique or delay queue a key belongs to.
func (s *Sweep) classifyStructure(name string) (Key, bool) {
	for i, l := range s.structs.Limiters {
		if dims, ok := l.Pattern.Match(name); ok {
			return Key{Name: name, kind: kindLimiter, spec: i, Classified: store.Classified{Dims: dims}}, true
		}
	}
	for i, l := range s.structs.Locks {
		if dims, ok := l.Pattern.Match(name); ok {
			return Key{Name: name, kind: kindLock, spec: i, Classified: store.Classified{Dims: dims}}, true
		}
	}
	for i, q := range s.structs.DelayQueues {
		if q.Pattern == nil || store.IsCompanionKey(name) {
			continue
		}
		if dims, ok := q.Pattern.Match(name); ok {
			return Key{Name: name, kind: kindDelayQueue, spec: i, Classified: store.Classified{Dims: dims}}, true
		}
	}
	for i, u := range s.structs.Uniques {
		for _, g := range u.Family.Granularities() {
			if w, dims, ok := u.Family.Match(g, name, s.loc); ok {
				return Key{Name: name, kind: kindUnique, spec: i, window: w, Classified: store.Classified{Dims: dims}}, true
			}
		}
	}
	return Key{}, false
}

// read fills pending's TTLs and values in one pipeline.
//
// Values are read with MGET, one per page (per hash slot on a cluster node, where one command may
// not span slots): Redis spends most of a small command's cost on dispatching it, so a page of
// PTTLs and one MGET costs about half of PTTL and GET for every key. MGET answers nil for a key
// that is not a string; those few are read again with GET, which says WRONGTYPE.
func (s *Sweep) read(ctx context.Context, c redis.Cmdable, pending []Key) error {
	if len(pending) == 0 {
		return nil
	}
	if n := countStructures(pending); n > 0 {
		// Structure keys are few beside counters; they are read with their own commands.
		counters := make([]Key, 0, len(pending)-n)
		var structs []int
		for i := range pending {
			if pending[i].kind == kindCounter {
				counters = append(counters, pending[i])
			} else {
				structs = append(structs, i)
			}
		}
		if err := s.readStructures(ctx, c, pending, structs); err != nil {
			return err
		}
		if len(counters) == 0 {
			return nil
		}
		if err := s.read(ctx, c, counters); err != nil {
			return err
		}
		j := 0
		for i := range pending {
			if pending[i].kind == kindCounter {
				pending[i] = counters[j]
				j++
			}
		}
		return nil
	}
	pipe := c.Pipeline()
	ttls := make([]*redis.DurationCmd, len(pending))
	for i, k := range pending {
		ttls[i] = pipe.PTTL(ctx, k.Name)
	}
	gets := s.queueValues(ctx, pipe, pending)
	if _, err := pipe.Exec(ctx); err != nil && !keyLevel(err) {
		return err
	}
	var recheck []int // keys MGET had no string for, though PTTL found them
	for i := range pending {
		k := &pending[i]
		if err := readTTL(k, ttls[i]); err != nil {
			return err
		}
		v, ok, err := gets.value(i)
		if err != nil {
			return err
		}
		switch {
		case ok:
			k.Value = v
		case !k.Gone:
			recheck = append(recheck, i)
		}
	}
	if len(recheck) > 0 {
		return s.recheck(ctx, c, pending, recheck)
	}
	return nil
}

// valueReads are the MGETs of one page: key i's value is reply pos[i].at of cmds[pos[i].cmd].
type valueReads struct {
	cmds []*redis.SliceCmd
	pos  []struct{ cmd, at int }
}

// queueValues queues MGETs for keys on pipe: one for all of them on a standalone server, one per
// hash slot on a cluster node.
func (s *Sweep) queueValues(ctx context.Context, pipe redis.Pipeliner, keys []Key) *valueReads {
	r := &valueReads{pos: make([]struct{ cmd, at int }, len(keys))}
	if len(keys) == 0 {
		return r
	}
	if _, cluster := s.rdb.(*redis.ClusterClient); !cluster {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name
			r.pos[i] = struct{ cmd, at int }{0, i}
		}
		r.cmds = append(r.cmds, pipe.MGet(ctx, names...))
		return r
	}
	bySlot := map[int][]int{}
	var slots []int
	for i, k := range keys {
		sl := store.Slot(k.Name)
		if bySlot[sl] == nil {
			slots = append(slots, sl)
		}
		bySlot[sl] = append(bySlot[sl], i)
	}
	for _, sl := range slots {
		idx := bySlot[sl]
		names := make([]string, len(idx))
		for j, i := range idx {
			names[j] = keys[i].Name
			r.pos[i] = struct{ cmd, at int }{len(r.cmds), j}
		}
		r.cmds = append(r.cmds, pipe.MGet(ctx, names...))
	}
	return r
}

// value returns key i's value; ok is false when MGET had none (no key, or not a string).
func (r *valueReads) value(i int) (string, bool, error) {
	p := r.pos[i]
	vals, err := r.cmds[p.cmd].Result()
	if err != nil {
		return "", false, err
	}
	if p.at >= len(vals) {
		return "", false, fmt.Errorf("MGET answered %d values for more keys", len(vals))
	}
	switch v := vals[p.at].(type) {
	case string:
		return v, true, nil
	case nil:
		return "", false, nil
	default:
		return fmt.Sprint(v), true, nil
	}
}

// recheck reads with GET the keys (indexes into keys) that PTTL found but MGET had no string for:
// GET's WRONGTYPE marks them, and a key gone meanwhile is marked gone.
func (s *Sweep) recheck(ctx context.Context, c redis.Cmdable, keys []Key, idx []int) error {
	pipe := c.Pipeline()
	gets := make([]*redis.StringCmd, len(idx))
	for j, i := range idx {
		gets[j] = pipe.Get(ctx, keys[i].Name)
	}
	if _, err := pipe.Exec(ctx); err != nil && !keyLevel(err) {
		return err
	}
	for j, i := range idx {
		k := &keys[i]
		v, err := gets[j].Result()
		switch {
		case err == redis.Nil:
			k.Gone = true
		case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			k.WrongType = true
		case err != nil:
			return err
		default:
			k.Value = v // it became a string between the two reads
		}
	}
	return nil
}

// readTTL fills k's TTL from its PTTL reply.
func readTTL(k *Key, ttl *redis.DurationCmd) error {
	d, err := ttl.Result()
	if err != nil { // PTTL has no per-key error: this is the server refusing (NOPERM) or failing
		return err
	}
	switch {
	case d == -2*time.Nanosecond || d == -2*time.Millisecond:
		k.Gone = true
	case d < 0:
		k.TTL = NoTTL
	default:
		k.TTL = d
	}
	return nil
}

// keyLevel reports whether a pipeline error is one key's reply (nil or a Redis error reply), so
// the other replies still stand.
func keyLevel(err error) bool {
	var rerr redis.Error
	return err == redis.Nil || errors.As(err, &rerr)
}
