package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// WriterOptions tune a Writer. The zero value is usable.
type WriterOptions struct {
	// KeysPerCall caps the keys one script call writes (64, 32 hour+day pairs, when zero).
	// Packing many key pairs into one call spreads the fixed cost of a script call over all of
	// them; past about 32 pairs the gain is gone (measured by BenchmarkWriter).
	KeysPerCall int
	// Lanes is how many pipelines a flush sends at once, each on its own connection (4 when
	// zero), so Redis works on one while the client encodes the next.
	Lanes int
	// CallsPerPipeline caps the script calls in one pipeline (256 when zero): a lane sends a
	// large flush as several pipelines, one after another.
	CallsPerPipeline int
	// SeqTTL is how long Redis keeps a lane's sequence record, which makes resending a call whose
	// reply was lost safe (24 hours when zero, at least a minute). Calls ask for the record's TTL
	// again only once a quarter of it has passed, so a call still unconfirmed after three quarters
	// of SeqTTL could be applied twice.
	SeqTTL time.Duration
	// HoldFor is how long a writer through Sentinel keeps a confirmed call, to send it again
	// should a failover lose it (DefaultHoldFor when zero; hold.go).
	HoldFor time.Duration
}

// Writer pre-aggregates counter events in memory, per window key, and flushes them as pipelines
// of script calls, each call writing many keys of one hash slot. It is safe for concurrent use:
// Add from many goroutines while another calls Flush.
//
// Every increment added is applied exactly once. A call whose outcome is unknown (the connection
// dropped before its reply came back) is kept and sent again, unchanged, at the next Flush; the
// script recognises a call it already applied by its sequence number and skips it (flush.go).
// A key Redis refuses (wrong type, not an integer, overflow) is reported as a *KeyError and its
// delta is not retried, since no retry can succeed.
//
// On Redis Cluster a family's hour and day keys travel in one call when its pattern's hash tag
// keeps them in one slot (Family.SharesSlot); otherwise they go in separate calls, each atomic.
type Writer struct {
	s                *Store
	id               string // names this writer's sequence keys
	keysPerCall      int
	lanes            int
	callsPerPipeline int
	seqTTL           time.Duration

	mu      sync.Mutex
	pending map[string]*unit // by unit name (hour key + NUL + day key)
	nameBuf []byte           // Add builds unit names here
	windows map[*Family]*[2]windowCache

	unsentPairs int // units in unsent calls, kept under mu for Pending

	flushMu   sync.Mutex // one Flush at a time, so each lane applies its calls in sequence order
	seq       map[laneSlot]int64
	refreshed map[laneSlot]time.Time // when a call last asked to refresh the sequence record's TTL
	confirmed map[laneSlot]int64     // the highest number Redis confirmed, per lane and slot
	unsent    []*call                // calls not confirmed by Redis, in lane order: sent again first

	// Through Sentinel (track set): the confirmed calls a failover could lose, by lane and slot
	// in sequence order, and the primary's changes when they were last checked (hold.go).
	track    *PrimaryTrack
	holdFor  time.Duration
	held     map[laneSlot][]heldCall
	heldSeen int
	lost     error // calls a failover lost past holding them, for the next flush to report
}

// unit is the increments of one family+dims in one hour (and so one day): its hour and day keys
// go out in the same script call, so they move together.
type unit struct {
	keys   [2]string // by Granularity; "" when the family lacks it or the window has expired
	expire [2]any    // unix milliseconds as an int64, boxed once per window for the script's arguments
	delta  int64
	events int64
}

// windowCache keeps the last window a family's events fell in, so a stream of events in the
// current hour does not format the same window string again and again.
type windowCache struct {
	w         Window
	text      string
	expire    time.Time
	expireArg any // expire in unix milliseconds, boxed once
}

// FlushResult counts what one Flush wrote.
type FlushResult struct {
	Events int64 // events whose increments were written
	Keys   int   // key updates sent (an hour and a day key are two)
	Calls  int   // script calls confirmed (including ones found already applied)
	Failed int   // key updates whose call is unconfirmed and will be sent again
}

// NewWriter returns a batch writer over s.
func (s *Store) NewWriter(opt WriterOptions) *Writer {
	if opt.KeysPerCall <= 0 {
		opt.KeysPerCall = 64
	}
	if opt.KeysPerCall < 2 {
		opt.KeysPerCall = 2 // an hour and a day key always share a call
	}
	if opt.Lanes <= 0 {
		opt.Lanes = 4
	}
	if opt.CallsPerPipeline <= 0 {
		opt.CallsPerPipeline = 256
	}
	if opt.SeqTTL <= 0 {
		opt.SeqTTL = 24 * time.Hour
	}
	opt.SeqTTL = max(opt.SeqTTL, time.Minute) // it must outlast a call's trip and its resends
	if opt.HoldFor <= 0 {
		opt.HoldFor = DefaultHoldFor
	}
	track := PrimaryOf(s.rdb)
	var seen int
	if track != nil {
		_, seen, _ = track.Primary()
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Writer{
		s:                s,
		id:               hex.EncodeToString(id[:]),
		keysPerCall:      opt.KeysPerCall,
		lanes:            opt.Lanes,
		callsPerPipeline: opt.CallsPerPipeline,
		seqTTL:           opt.SeqTTL,
		pending:          map[string]*unit{},
		windows:          map[*Family]*[2]windowCache{},
		seq:              map[laneSlot]int64{},
		refreshed:        map[laneSlot]time.Time{},
		confirmed:        map[laneSlot]int64{},
		track:            track,
		holdFor:          opt.HoldFor,
		held:             map[laneSlot][]heldCall{},
		heldSeen:         seen,
	}
}

// Add records delta for dims of family f at time at; a zero at means the Redis server's now. It
// returns ErrExpired when every window of at is past its retention. It returns ErrFuture when at is
// more than MaxAhead ahead of the server clock. It returns an error when dims do not fit the
// family's pattern. In each case nothing is recorded.
func (w *Writer) Add(f *Family, dims []string, delta int64, at time.Time) error {
	if len(dims) != len(f.pattern.dims) {
		_, err := f.pattern.Key(dims, "")
		return fmt.Errorf("store: add %s: %w", f.name, err)
	}
	now := w.s.clock.Now()
	if at.IsZero() {
		at = now
	}
	if at.Sub(now) > MaxAhead {
		return fmt.Errorf("store: add %s: %w (%v)", f.name, ErrFuture, at)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cache := w.windows[f]
	if cache == nil {
		cache = new([2]windowCache)
		w.windows[f] = cache
	}
	// The unit's name is its hour key, a NUL and its day key, built in a reused buffer: an event
	// that folds into a pending unit allocates nothing, and a new unit's keys are cut from its
	// name.
	var expire [2]any
	var bounds [2][2]int // where each key lies in the name
	buf := w.nameBuf[:0]
	for _, g := range [2]Granularity{Hour, Day} {
		if g == Day {
			buf = append(buf, 0)
		}
		spec := f.specs[g]
		if spec == nil {
			continue
		}
		c := &cache[g]
		if c.text == "" || !c.w.Contains(at) {
			win := WindowAt(g, at, f.Zone(w.s.loc))
			exp := f.ExpireAt(win)
			*c = windowCache{w: win, text: spec.format.Format(win), expire: exp, expireArg: exp.UnixMilli()}
		}
		if !c.expire.After(now) {
			continue
		}
		start := len(buf)
		buf = f.pattern.appendKey(buf, dims, c.text)
		bounds[g] = [2]int{start, len(buf)}
		expire[g] = c.expireArg
	}
	w.nameBuf = buf
	if expire[Hour] == nil && expire[Day] == nil {
		return fmt.Errorf("store: add %s: %w", f.name, ErrExpired)
	}
	if p := w.pending[string(buf)]; p != nil {
		p.delta += delta
		p.events++
		return nil
	}
	name := string(buf)
	u := &unit{expire: expire, delta: delta, events: 1}
	for g, b := range bounds {
		u.keys[g] = name[b[0]:b[1]]
	}
	w.pending[name] = u
	return nil
}

// Pending returns how many key pairs wait for the next Flush, counting those in calls whose
// outcome is not yet known.
func (w *Writer) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) + w.unsentPairs
}
