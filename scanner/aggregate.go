package scanner

import (
	"math"
	"sort"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// ttlSlack is how far a key's expiry may pass its window's end plus retention before it counts
// as over retention: clocks differ, and writers that EXPIRE from their first write land a little
// after the window-aligned instant.
const ttlSlack = time.Minute

// problem indexes, in Health.Problems order.
const (
	probNoTTL = iota
	probOverRetention
	probExpired
	probWrongType
	probNotInteger
	numProblems
)

// Aggregator folds sweep pages into a Snapshot. What it holds is bounded by the families, their
// windows, TopK, the examples and ReconcileTuples, never by the number of keys. It is not safe
// for concurrent use.
type Aggregator struct {
	opt     Options
	fams    map[*store.Family]*famAgg
	order   []*famAgg
	scan    snapshot.ScanStats
	start   time.Time // when the first page arrived
	structs *structAgg
	masters map[string]int64 // keys seen by cluster master
	reads   *Reads           // what the sweep's last step read for the Snapshot; nil before it
	est     *estAgg          // the sums a sweep under way is scaled from
}

type famAgg struct {
	idx      int // its place in the Aggregator's order
	f        *store.Family
	keys     int64
	ttl      snapshot.TTLCounts
	windows  map[winKey]*winAgg
	problems [numProblems]probAgg
	recon    *reconciler // nil unless the family has hour and day windows
}

type winKey struct {
	g     store.Granularity
	start int64 // Unix seconds
}

type winAgg struct {
	w        store.Window
	expireAt time.Time       // the window's end plus retention
	total    snapshot.Int128 // exact; the Snapshot clamps it to int64 and says when it saturated
	keys     int64
	top      []topEntry // largest first
}

type topEntry struct {
	name  string // the raw key, for live reads
	dims  []string
	value int64
}

type probAgg struct {
	keys     int64
	samples  []string           // raw names of the first keys, for MEMORY USAGE
	examples []snapshot.Example // the first keys, escaped
}

// NewAggregator returns an Aggregator for families.
func NewAggregator(families []*store.Family, opt Options) *Aggregator {
	opt = opt.withDefaults()
	if opt.TopK <= 0 {
		opt.TopK = 5
	}
	if opt.Examples <= 0 {
		opt.Examples = 3
	}
	if opt.MemorySamples == 0 {
		opt.MemorySamples = 8
	}
	if opt.ReconcileTuples <= 0 {
		opt.ReconcileTuples = 1 << 16
	}
	a := &Aggregator{opt: opt, fams: map[*store.Family]*famAgg{}, structs: newStructAgg(opt.Structures, opt.Location), est: newEstAgg()}
	for i, f := range families {
		fa := &famAgg{idx: i, f: f, windows: map[winKey]*winAgg{}}
		if f.Has(store.Hour) && f.Has(store.Day) {
			fa.recon = newReconciler(opt.ReconcileTuples)
		}
		a.fams[f] = fa
		a.order = append(a.order, fa)
	}
	return a
}

// KeysSeen is how many keys the pages added so far saw.
func (a *Aggregator) KeysSeen() int64 { return a.scan.KeysSeen }

// Add folds one sweep page in.
func (a *Aggregator) Add(p Page) {
	if a.start.IsZero() {
		a.start = time.Now() // a console's sweep starts at its first page, not when it was made
	}
	a.scan.KeysSeen += int64(p.Seen)
	for addr, n := range p.SeenBy {
		if a.masters == nil {
			a.masters = map[string]int64{}
		}
		a.masters[addr] += int64(n)
	}
	a.est.begin(&p)
	defer a.est.end(&p)
	if len(p.Keys) == 0 {
		return
	}
	now := a.opt.Now()
	for i := range p.Keys {
		a.add(&p.Keys[i], now)
	}
}

func (a *Aggregator) add(k *Key, now time.Time) {
	if k.Gone {
		a.scan.KeysGone++
		return
	}
	a.structs.claims.add(k, a.opt.Structures)
	if k.kind != kindCounter {
		a.scan.KeysMatched++
		a.structs.add(k, now, a.opt)
		return
	}
	fa := a.fams[k.Family]
	if fa == nil {
		return // a family this aggregator was not given
	}
	a.scan.KeysMatched++
	fa.keys++
	fa.noteEst(a.est, figKeys, 1)
	f := fa.f
	wk := winKey{k.Window.Granularity, k.Window.Start.Unix()}
	w := fa.windows[wk]
	if w == nil {
		w = &winAgg{w: k.Window, expireAt: f.ExpireAt(k.Window)}
		fa.windows[wk] = w
	}
	expireAt := w.expireAt
	ex := snapshot.Example{Family: f.Name(), TTLMS: -1, ExpireAt: expireAt}
	switch {
	case k.TTL == NoTTL:
		fa.ttl.NoTTL++
		fa.note(probNoTTL, k, ex, a)
	case !now.Before(expireAt.Add(ttlSlack)):
		fa.ttl.ExpiredButPresent++
		ex.TTLMS = k.TTL.Milliseconds()
		fa.note(probExpired, k, ex, a)
	case now.Add(k.TTL).After(expireAt.Add(ttlSlack)):
		fa.ttl.OverRetention++
		ex.TTLMS = k.TTL.Milliseconds()
		fa.note(probOverRetention, k, ex, a)
	default:
		fa.ttl.OK++
		fa.noteEst(a.est, figTTLOK, 1)
	}
	w.keys++
	a.est.note(figID{fam: fa.idx, what: figWinKeys, win: wk}, 1)
	if k.WrongType {
		ex.TTLMS = ttlMS(k.TTL)
		fa.note(probWrongType, k, ex, a)
		return
	}
	v, ok := ParseInteger(k.Value)
	if !ok {
		ex.TTLMS = ttlMS(k.TTL)
		ex.Value = format.Escape(k.Value)
		fa.note(probNotInteger, k, ex, a)
		return
	}
	w.total.AddInt(v)
	a.est.note(figID{fam: fa.idx, what: figWinTotal, win: wk}, float64(v))
	if now.Before(expireAt) {
		w.push(k.Name, k.Dims, v, a.opt.TopK)
	}
	if fa.recon != nil {
		fa.recon.add(f, k.Window, k.Dims, v, now, f.Zone(a.opt.Location))
	}
}

func ttlMS(d time.Duration) int64 {
	if d == NoTTL {
		return -1
	}
	return d.Milliseconds()
}

// note counts k under problem p and keeps it as an example and a memory sample while there is room.
func (fa *famAgg) note(p int, k *Key, ex snapshot.Example, a *Aggregator) {
	opt := a.opt
	pa := &fa.problems[p]
	pa.keys++
	fa.noteEst(a.est, problemFig[p], 1)
	if len(pa.samples) < opt.MemorySamples {
		pa.samples = append(pa.samples, k.Name)
	}
	if len(pa.examples) < opt.Examples {
		ex.Key = format.Escape(k.Name)
		pa.examples = append(pa.examples, ex)
	}
}

// push offers a value to the window's top list.
func (w *winAgg) push(name string, dims []string, v int64, k int) {
	var i int
	if w.top, i = topSlot(w.top, v, k, func(e topEntry) int64 { return e.value }); i >= 0 {
		w.top[i] = topEntry{name: name, dims: dims, value: v}
	}
}

// topSlot makes room in top (largest value first, at most k long) for a value v that ranks among
// them: it returns the list and the index to write v's entry at, or -1 when v does not rank, so
// an entry is built only when it is kept.
func topSlot[T any](top []T, v int64, k int, value func(T) int64) ([]T, int) {
	if k <= 0 || (len(top) >= k && v <= value(top[k-1])) {
		return top, -1
	}
	i := sort.Search(len(top), func(i int) bool { return value(top[i]) < v })
	if len(top) < k {
		var zero T
		top = append(top, zero)
	}
	copy(top[i+1:], top[i:])
	return top, i
}

// ParseInteger parses a counter's value the way Redis' INCRBY does: an optional minus sign and
// decimal digits with no leading zero, within 64 bits. " 5", "+5", "05" and "5.0" are not integers
// to Redis, so they are not here.
func ParseInteger(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	neg := s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if digits == "" || (digits[0] == '0' && (len(digits) > 1 || neg)) {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
