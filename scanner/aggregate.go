package scanner

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// SnapshotOptions tune what an Aggregator keeps. The zero value is usable.
type SnapshotOptions struct {
	// Now reads the server clock (time.Now when nil): windows are current, and keys expired, by it.
	Now func() time.Time
	// Location is the time zone windows are cut in (time.Local when nil).
	Location *time.Location
	// TopK is how many of the largest values each window keeps (5 when zero).
	TopK int
	// Examples is how many example keys each problem keeps per family (3 when zero).
	Examples int
	// MemorySamples is how many keys per problem and family MEMORY USAGE reads (8 when zero;
	// negative reads none).
	MemorySamples int
	// ReconcileTuples caps the (dims, day) pairs reconciliation holds per family (65536 when
	// zero). Past it, pairs are sampled by hash and the counts become estimates.
	ReconcileTuples int
	// Target and Mode label the Snapshot.
	Target, Mode string
	// Structures are the queues, limiters, uniques and locks to report (the sweep's, for the
	// swept ones).
	Structures Structures
}

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
	opt     SnapshotOptions
	fams    map[*store.Family]*famAgg
	order   []*famAgg
	scan    ScanStats
	start   time.Time // when the first page arrived
	structs *structAgg
	masters map[string]int64 // keys seen by cluster master
}

type famAgg struct {
	f        *store.Family
	keys     int64
	ttl      TTLCounts
	windows  map[winKey]*winAgg
	problems [numProblems]probAgg
	recon    *reconciler // nil unless the family has hour and day windows
}

type winKey struct {
	g     store.Granularity
	start int64 // Unix seconds
}

type winAgg struct {
	w           store.Window
	expireAt    time.Time // the window's end plus retention
	total, keys int64
	top         []topEntry // largest first
}

type topEntry struct {
	name  string // the raw key, for live reads
	dims  []string
	value int64
}

type probAgg struct {
	keys     int64
	samples  []string  // raw names of the first keys, for MEMORY USAGE
	examples []Example // the first keys, escaped
}

// NewAggregator returns an Aggregator for families.
func NewAggregator(families []*store.Family, opt SnapshotOptions) *Aggregator {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
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
	a := &Aggregator{opt: opt, fams: map[*store.Family]*famAgg{}, structs: newStructAgg(opt.Structures)}
	for _, f := range families {
		fa := &famAgg{f: f, windows: map[winKey]*winAgg{}}
		if f.Has(store.Hour) && f.Has(store.Day) {
			fa.recon = newReconciler(opt.ReconcileTuples)
		}
		a.fams[f] = fa
		a.order = append(a.order, fa)
	}
	return a
}

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
	f := fa.f
	wk := winKey{k.Window.Granularity, k.Window.Start.Unix()}
	w := fa.windows[wk]
	if w == nil {
		w = &winAgg{w: k.Window, expireAt: f.ExpireAt(k.Window)}
		fa.windows[wk] = w
	}
	expireAt := w.expireAt
	ex := Example{Family: f.Name(), TTLMS: -1, ExpireAt: expireAt}
	switch {
	case k.TTL == NoTTL:
		fa.ttl.NoTTL++
		fa.note(probNoTTL, k, ex, a.opt)
	case !now.Before(expireAt.Add(ttlSlack)):
		fa.ttl.ExpiredButPresent++
		ex.TTLMS = k.TTL.Milliseconds()
		fa.note(probExpired, k, ex, a.opt)
	case now.Add(k.TTL).After(expireAt.Add(ttlSlack)):
		fa.ttl.OverRetention++
		ex.TTLMS = k.TTL.Milliseconds()
		fa.note(probOverRetention, k, ex, a.opt)
	default:
		fa.ttl.OK++
	}
	w.keys++
	if k.WrongType {
		ex.TTLMS = ttlMS(k.TTL)
		fa.note(probWrongType, k, ex, a.opt)
		return
	}
	v, ok := ParseInteger(k.Value)
	if !ok {
		ex.TTLMS = ttlMS(k.TTL)
		ex.Value = Escape(k.Value)
		fa.note(probNotInteger, k, ex, a.opt)
		return
	}
	w.total = addSat(w.total, v)
	if now.Before(expireAt) {
		w.push(k.Name, k.Dims, v, a.opt.TopK)
	}
	if fa.recon != nil {
		fa.recon.add(f, k.Window, k.Dims, v, now, a.opt.Location)
	}
}

func ttlMS(d time.Duration) int64 {
	if d == NoTTL {
		return -1
	}
	return d.Milliseconds()
}

// note counts k under problem p and keeps it as an example and a memory sample while there is room.
func (fa *famAgg) note(p int, k *Key, ex Example, opt SnapshotOptions) {
	pa := &fa.problems[p]
	pa.keys++
	if len(pa.samples) < opt.MemorySamples {
		pa.samples = append(pa.samples, k.Name)
	}
	if len(pa.examples) < opt.Examples {
		ex.Key = Escape(k.Name)
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

// addSat adds without wrapping: a total past the int64 range stays at its end.
func addSat(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// Snapshot returns what the pages added so far hold. It reads MEMORY USAGE (and TYPE, for keys
// of the wrong type) of the sampled problem keys in one pipeline on rdb; when the server refuses
// them the Snapshot says so in MemoryNote and carries no bytes. complete says whether the sweep
// ran to its end.
func (a *Aggregator) Snapshot(ctx context.Context, rdb redis.UniversalClient, complete bool) *Snapshot {
	now := a.opt.Now()
	snap := &Snapshot{
		TakenAt: now, Target: a.opt.Target, Mode: a.opt.Mode, Scan: a.scan,
		Counters: make([]FamilyStats, 0, len(a.order)),
	}
	snap.Scan.Complete = complete
	snap.Scan.Masters = []MasterKeys{}
	for addr, n := range a.masters {
		snap.Scan.Masters = append(snap.Scan.Masters, MasterKeys{Addr: addr, KeysSeen: n})
	}
	sort.Slice(snap.Scan.Masters, func(i, j int) bool { return snap.Scan.Masters[i].Addr < snap.Scan.Masters[j].Addr })
	if !a.start.IsZero() {
		snap.Scan.DurationMS = time.Since(a.start).Milliseconds()
	}
	sizes, types, note := a.readSamples(ctx, rdb)
	for _, fa := range a.order {
		snap.Counters = append(snap.Counters, fa.stats(now, a.opt, sizes, types, note))
	}
	snap.TTLHealth.MemoryNote = note
	for i := range snap.Counters {
		total := snap.TTLHealth.Problems()
		for j, p := range snap.Counters[i].Health.Problems() {
			t := total[j].Problem
			t.Keys += p.Keys
			t.Bytes += p.Bytes
			t.Sampled += p.Sampled
			for _, ex := range p.Examples {
				if len(t.Examples) < a.opt.Examples {
					t.Examples = append(t.Examples, ex)
				}
			}
		}
	}
	a.structs.fill(ctx, rdb, snap, now, a.opt)
	for _, p := range snap.TTLHealth.Problems() {
		if p.Examples == nil {
			p.Examples = []Example{}
		}
	}
	return snap
}

// readSamples reads the memory each sampled key holds, and the type of the wrong-type ones.
func (a *Aggregator) readSamples(ctx context.Context, rdb redis.UniversalClient) (map[string]int64, map[string]string, string) {
	sizes, types := map[string]int64{}, map[string]string{}
	if rdb == nil || a.opt.MemorySamples < 0 {
		return sizes, types, "not sampled"
	}
	pipe := rdb.Pipeline()
	mem := map[string]*redis.IntCmd{}
	typ := map[string]*redis.StatusCmd{}
	for _, fa := range a.order {
		for p := range fa.problems {
			for _, name := range fa.problems[p].samples {
				if mem[name] == nil {
					mem[name] = pipe.MemoryUsage(ctx, name)
				}
				if p == probWrongType && typ[name] == nil {
					typ[name] = pipe.Type(ctx, name)
				}
			}
		}
	}
	if pipe.Len() == 0 {
		return sizes, types, ""
	}
	_, err := pipe.Exec(ctx)
	if err != nil && !keyLevel(err) {
		return sizes, types, "MEMORY USAGE failed: " + err.Error()
	}
	note := ""
	for name, c := range mem {
		n, err := c.Result()
		switch {
		case err == nil:
			sizes[name] = n
		case err == redis.Nil: // gone since the sweep read it
		default:
			var rerr redis.Error
			if errors.As(err, &rerr) && note == "" {
				note = "MEMORY USAGE refused: " + strings.TrimSpace(err.Error())
			}
		}
	}
	for name, c := range typ {
		if t, err := c.Result(); err == nil && t != "none" {
			types[name] = t
		}
	}
	if note != "" {
		return map[string]int64{}, types, note
	}
	return sizes, types, ""
}

// stats renders one family's aggregate.
func (fa *famAgg) stats(now time.Time, opt SnapshotOptions, sizes map[string]int64, types map[string]string, note string) FamilyStats {
	f := fa.f
	fs := FamilyStats{
		Family: f.Name(), Dims: f.Dims(), Keys: fa.keys, TTL: fa.ttl,
		WrongType:  fa.problems[probWrongType].keys,
		NotInteger: fa.problems[probNotInteger].keys,
		Windows:    make([]WindowStats, 0, len(fa.windows)),
		Series:     Series{Hours: []int64{}, Days: []int64{}},
	}
	for _, g := range f.Granularities() {
		fs.Granularities = append(fs.Granularities, g.String())
	}
	wins := make([]*winAgg, 0, len(fa.windows))
	for _, w := range fa.windows {
		wins = append(wins, w)
	}
	sort.Slice(wins, func(i, j int) bool {
		if wins[i].w.Granularity != wins[j].w.Granularity {
			return wins[i].w.Granularity < wins[j].w.Granularity
		}
		return wins[i].w.Start.Before(wins[j].w.Start)
	})
	dimNames := f.Dims()
	for _, w := range wins {
		wf, _ := f.Format(w.w.Granularity)
		ws := WindowStats{
			Granularity: w.w.Granularity.String(), Window: wf.Format(w.w), Start: w.w.Start,
			Total: w.total, Keys: w.keys,
			Current: w.w.Contains(now),
			Expired: !now.Before(w.expireAt),
		}
		for _, t := range w.top {
			ws.Top = append(ws.Top, DimsValue{Dims: dimsMap(dimNames, t.dims), Value: t.value, key: t.name})
		}
		fs.Windows = append(fs.Windows, ws)
	}
	fs.Series = fa.series(now, opt.Location)
	if f.Has(store.Hour) {
		cur := store.WindowAt(store.Hour, now, opt.Location)
		if w := fa.windows[winKey{store.Hour, cur.Start.Unix()}]; w != nil {
			if secs := now.Sub(cur.Start).Seconds(); secs >= 1 {
				fs.HourAvgPerSec = float64(w.total) / secs
			}
		}
	}
	for i, p := range fs.Health.Problems()[:numProblems] {
		pa := &fa.problems[i]
		p.Keys = pa.keys
		p.Examples = make([]Example, 0, len(pa.examples))
		var sum int64
		for j, name := range pa.samples {
			n, ok := sizes[name]
			if !ok {
				continue
			}
			sum += n
			p.Sampled++
			if j < len(pa.examples) {
				pa.examples[j].Bytes = n
			}
		}
		for j, ex := range pa.examples {
			if i == probWrongType && j < len(pa.samples) {
				ex.Type = types[pa.samples[j]]
			}
			p.Examples = append(p.Examples, ex)
		}
		if p.Sampled > 0 {
			p.Bytes = int64(float64(sum) / float64(p.Sampled) * float64(pa.keys))
		}
	}
	fs.Health.MemoryNote = note
	if fa.recon != nil {
		r := fa.recon.result(f, dimNames)
		fs.Reconciliation = &r
		fs.MismatchedDims = r.Mismatched
	}
	return fs
}

// series returns the totals of the last SeriesHours hours and SeriesDays days, oldest first.
func (fa *famAgg) series(now time.Time, loc *time.Location) Series {
	s := Series{Hours: []int64{}, Days: []int64{}}
	for _, g := range fa.f.Granularities() {
		n := SeriesHours
		if g == store.Day {
			n = SeriesDays
		}
		out := make([]int64, n)
		w := store.WindowAt(g, now, loc)
		for i := n - 1; i >= 0; i-- {
			if a := fa.windows[winKey{g, w.Start.Unix()}]; a != nil {
				out[i] = a.total
			}
			w = w.Prev()
		}
		if g == store.Day {
			s.Days = out
		} else {
			s.Hours = out
		}
	}
	return s
}

// dimsMap pairs dims with their names, escaped for display.
func dimsMap(names, dims []string) map[string]string {
	m := make(map[string]string, len(names))
	for i, n := range names {
		if i < len(dims) {
			m[n] = Escape(dims[i])
		}
	}
	return m
}

// Take runs one sweep to its end and returns its Snapshot. When ctx ends first, it returns the
// Snapshot of what it saw (Complete false) with ctx's error.
func Take(ctx context.Context, rdb redis.UniversalClient, families []*store.Family, sweep Options, snap SnapshotOptions) (*Snapshot, error) {
	pairOptions(&sweep, &snap)
	s := New(rdb, families, sweep)
	a := NewAggregator(families, snap)
	err := s.Run(ctx, a.Add)
	readCtx := ctx
	if err != nil {
		readCtx = context.WithoutCancel(ctx) // still read the samples of what was seen, briefly
		var cancel context.CancelFunc
		readCtx, cancel = context.WithTimeout(readCtx, 2*time.Second)
		defer cancel()
	}
	return a.Snapshot(readCtx, rdb, err == nil && s.Done()), err
}

// pairOptions fills what a sweep's and a snapshot's options share (the time zone, the
// structures) from whichever of the two gives it.
func pairOptions(sweep *Options, snap *SnapshotOptions) {
	if sweep.Location == nil {
		sweep.Location = snap.Location
	}
	if snap.Location == nil {
		snap.Location = sweep.Location
	}
	if snap.Structures.Empty() {
		snap.Structures = sweep.Structures
	}
	if sweep.Structures.Empty() {
		sweep.Structures = snap.Structures
	}
}
