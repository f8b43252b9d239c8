package scanner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
	"github.com/hourglass-dev/hourglass/store/limits"
)

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
	job    jobs.Key      // a job library's key: its queue
	limit  *limits.State // a library limiter's key, as the library answers for it
	// also is 1 + the index in the sweep's matchers of a second entry that would claim the key
	// too; 0 when none does.
	also int
}

// NoTTL is Key.TTL for a key without an expiry.
const NoTTL = time.Duration(-1)

// Counter reports whether the key is a counter family's.
func (k Key) Counter() bool { return k.kind == kindCounter }

// Page is what one sweep step saw.
type Page struct {
	Seen int   // keys SCAN returned, in families or not
	Keys []Key // the keys that belong to a family, read
	// SeenBy splits Seen by cluster master address (nil on a standalone server).
	SeenBy map[string]int

	// master is the address of the master a Run's page came from ("" on a standalone server,
	// and for a Step's page, which may span masters). firstSlot and lastSlot are the hash slots
	// of the first and last key SCAN returned, on a cluster (-1 otherwise): a page that begins in
	// the slot the last one ended in continues it, as it does where a server walks its keys slot
	// by slot, and the two count as one cluster of the sample.
	master              string
	firstSlot, lastSlot int
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
	matchers []matcher
	loc      *time.Location
	count    int           // the first SCAN's COUNT, and the most any asks for
	maxCall  time.Duration // the longest a call should hold Redis
	tuners   map[string]*tuner
	pace     *Pacer
	retry    *Retry           // nil: Run ends on the first error
	groups   *discover.Groups // the unclaimed keys, by shape
	samples  sampleReads
	// clock, when set, stands for the server's TIME: on a replica, the primary's clock.
	clock func() time.Time

	mu      sync.Mutex
	cursors map[string]uint64 // by master address ("" on a standalone server)
	runIDs  map[string]string // the run_id of each master the sweep began on
	// verified holds the masters whose sweep is done and whose run_id was checked after it
	verified map[string]bool
	pending  map[string][]Key // family keys SCAN returned, read with the next SCAN
	done     map[string]bool
	started  bool
	// population is the keys each master held when last read (DBSIZE), for the estimates of a
	// sweep under way; populationNote says why it could not be read.
	population     map[string]int64
	populationNote string
	// masters is how many masters the budget is shared among, and shares each one's pacer at its
	// share (share.go).
	masters int
	shares  map[string]*Pacer
}

// New returns a sweep over rdb for families.
func New(rdb redis.UniversalClient, families []*store.Family, opt Options) *Sweep {
	if opt.Count <= 0 {
		opt.Count = 1000
	}
	if opt.MaxCall <= 0 {
		opt.MaxCall = DefaultMaxCall
	}
	opt = opt.withDefaults()
	return &Sweep{
		rdb: rdb, families: families, loc: opt.Location, count: opt.Count, maxCall: opt.MaxCall, tuners: map[string]*tuner{},
		structs:  opt.Structures,
		matchers: matchers(opt.Structures, opt.Location),
		pace:     NewPacer(opt.KeysPerSecond, time.Now),
		retry:    opt.Retry,
		groups:   discover.New(discover.Options{Location: opt.Location, Host: opt.HostZone, MaxShapes: opt.MaxShapes}),
		cursors:  map[string]uint64{},
		runIDs:   map[string]string{},
		verified: map[string]bool{},
		pending:  map[string][]Key{},
		done:     map[string]bool{},

		population: map[string]int64{},
		masters:    1,
		clock:      primaryClock(opt),
		shares:     map[string]*Pacer{},
	}
}

// primaryClock is the clock a sweep on a replica reads by in place of TIME; nil on a primary.
func primaryClock(opt Options) func() time.Time {
	if !opt.Replica {
		return nil
	}
	return opt.Now
}

// serverTime is the server's clock: TIME on a primary, the primary's clock on a replica.
func (s *Sweep) serverTime(ctx context.Context, c redis.Cmdable) (time.Time, error) {
	if s.clock != nil {
		return s.clock(), nil
	}
	return c.Time(ctx).Result()
}

// Pacer is the sweep's budget, which work beside it (a Watcher's live reads, the drill-down's)
// is charged to as well.
func (s *Sweep) Pacer() *Pacer { return s.pace }

// UsePacer has the sweep keep p's budget, so that what an earlier sweep (or work beside it)
// charged is paid before this one reads more. Call it before the sweep's first step.
func (s *Sweep) UsePacer(p *Pacer) { s.pace = p }

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
		p, next, found, err := s.page(ctx, addr, c, cursor, pending, !begun || cursor != 0)
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
	s.pace.Spend(page.Seen)
	if err != nil {
		return page, fmt.Errorf("scanner: sweep: %w", err)
	}
	return page, nil
}
