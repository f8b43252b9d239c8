package watch

import (
	"cmp"
	"container/heap"
	"math/bits"
	"time"

	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// liveRateSpan is the longest time a live rate is measured over: a key's growth is counted from
// a read at most this long ago and at least half of it once the Watcher has run that long, so
// the rate follows a change of traffic within a minute and rests on tens of seconds of events.
const liveRateSpan = time.Minute

// liveExact is the fewest keys of the largest values each family's live reads read exactly (the
// top dims, TopK, when it is more). A counter's value grows with its rate, so these are the
// busiest keys: a sample that left them to chance would swing with whether it held one, and its
// interval, computed from the sample, would say less than that swing.
const liveExact = 20

// liveShare is the share of the sweep's keys/s budget the live reads may take: the rest is the
// sweep's, so a full sweep still ends however many families are read live.
const liveShare = 0.5

// liveSampler keeps, for each counter family, the keys of its current window that the Watcher
// reads again at every Poll: the largest values seen, and a priority sample of the others (each
// key's priority is its value over a uniform draw made from its name's hash). It is fed by every
// page of every sweep and outlives them: a key seen again by a later sweep draws the same, so
// it is not sampled twice, and the sample stays one of the window's keys seen, whichever sweep
// saw them.
type liveSampler struct {
	size, topK int
	loc        *time.Location
	now        func() time.Time // the server clock, for the current window
	clock      func() time.Time // this machine's, for when keys were read: time.Now
	fams       map[*store.Family]*famSample
	order      []*famSample
	lastRead   time.Time
	// dbsize is the keys each master held at the last read (the sweep's DBSIZE), which says when
	// a frame has walked a master whole.
	dbsize map[string]int64
	// lastFigures are each family's last figures, returned again by a Poll whose budget cannot
	// read it; turn is the family a read on a tight budget begins with (inTurn).
	lastFigures []snapshot.LiveFamily
	turn        int
}

// famSample is one family's live keys in its current window.
type famSample struct {
	f   *store.Family
	g   store.Granularity
	win store.Window // the window the keys are of; zero before the first
	// swept is how many of the window's keys the sweep under way has visited.
	swept  int64
	top    []*liveKey // largest value first, at most topK
	sample liveHeap   // the others of the highest priorities, the lowest on top
	byName map[string]*liveKey
	// tau is the highest priority of the keys offered and not kept: a key's chance to be in the
	// sample is min(1, weight/tau). 0 while every key offered is kept.
	tau float64
	// baseT is the live read the family's rate counts growth from, and midT a later one that
	// becomes it once baseT is liveRateSpan old: the rate is measured between baseT and now, the
	// same span for every key.
	baseT, midT time.Time
	// frame is the pages walked since the window began: while no sweep has counted the window
	// whole, the figures are scaled from it (livescale.go).
	frame liveFrame
	// counted is set once a sweep that began in the window has completed (the last read said
	// so): the sweeps offer every key again, and the sample follows their values.
	counted bool
	// base and mid are the keys read at the base and mid reads, with the threshold of each read:
	// the rate counts each key as that read saw it (its weight, its place in the top list).
	base, mid heldRead
}

// heldRead is one read's keys and the threshold they were read at, as a rate's base, and whether
// a sweep had counted the window then.
type heldRead struct {
	keys    []*liveKey
	tau     float64
	counted bool
	frame   map[string]frameMark // the frame as the read saw it
	sampled int                  // its keys of the sample, beyond the top keys
}

// liveKey is one key read live: its last value, and the reads its growth is counted from.
type liveKey struct {
	name  string
	hash  uint64
	value int64
	// w is the key's weight, from its value when a sweep's page last offered it (setWeight), and
	// prio its priority, w over a uniform draw in (0, 1] made from its hash.
	w, prio float64
	// base and mid are the key's values at its family's base and mid reads (set when it was read
	// then); first is its first live read, for a key that joined after the base read; page is the
	// value a sweep's page offered when the key joined (or its weight last changed), and when.
	// framed is the value its cluster's page read, which the frame's sums hold.
	base, mid, first livePoint
	page, framed     livePoint
	// held and heldMid are the key's weight and place at the family's base and mid reads.
	held, heldMid heldKey
	idx           int // in the heap; -1 in the top list
	// cl is the cluster of pages whose page offered the key first since the window began, nil
	// when that page came after the frame had walked its master whole.
	cl *liveCluster
}

// heldKey is a key as one read saw it: its weight and priority, and whether it was a top key.
type heldKey struct {
	w, prio float64
	top     bool
}

type livePoint struct {
	v   int64
	t   time.Time
	set bool
}

// newLiveSampler returns the live samples of families, cut in opt's zone (local time when nil)
// by opt's clock (the machine's when nil), as the sweep cuts them.
func newLiveSampler(families []*store.Family, opt scanner.Options) *liveSampler {
	size := opt.LiveSample
	if size == 0 {
		size = scanner.DefaultLiveSample
	}
	top := max(opt.TopK, liveExact)
	s := &liveSampler{size: max(size, 0), topK: top, loc: cmp.Or(opt.Location, time.Local), now: opt.Now, clock: time.Now,
		fams: map[*store.Family]*famSample{}}
	if s.now == nil {
		s.now = time.Now
	}
	s.setFamilies(families)
	return s
}

// setFamilies adds a sample for each family not yet held (a claim adds families).
func (s *liveSampler) setFamilies(families []*store.Family) {
	for _, f := range families {
		if s.fams[f] != nil || len(f.Granularities()) == 0 {
			continue
		}
		fs := &famSample{f: f, g: f.Granularities()[0], byName: map[string]*liveKey{}} // hour when it has hours
		s.fams[f] = fs
		s.order = append(s.order, fs)
	}
}

// current is the start of the named family's current window as of the last read or page, and
// whether the family is read live.
func (s *liveSampler) current(family string) (time.Time, bool) {
	for _, fs := range s.order {
		if fs.f.Name() == family && !fs.win.Start.IsZero() {
			return fs.win.Start, true
		}
	}
	return time.Time{}, false
}

// newSweep is called when a sweep begins: its count of each window's keys starts from none.
func (s *liveSampler) newSweep() {
	for _, fs := range s.order {
		fs.swept = 0
	}
}

// visit offers a page's counter keys in their family's current window, and adds the page to
// each family's frame.
func (s *liveSampler) visit(p scanner.Page) {
	if s.size == 0 && s.topK == 0 {
		return
	}
	now, at := s.now(), s.clock()
	for _, fs := range s.order {
		fs.roll(now, s.loc)
		fs.frame.add(p, s.dbsize)
	}
	for i := range p.Keys {
		k := &p.Keys[i]
		if !k.Counter() || k.Gone || k.WrongType {
			continue
		}
		fs := s.fams[k.Family]
		if fs == nil || k.Window.Granularity != fs.g || !k.Window.Start.Equal(fs.win.Start) {
			continue
		}
		fs.swept++
		if v, ok := scanner.ParseInteger(k.Value); ok {
			cl := fs.frame.cluster(p)
			if cl == nil && !fs.counted {
				continue // offered again, past a master walked whole: the frame has it, or it is new since
			}
			fs.frame.offered(cl, v)
			fs.offer(k.Name, v, at, s.size, s.topK, cl)
		}
	}
}

// roll starts the family's sample over when its current window is not the one it holds.
func (fs *famSample) roll(now time.Time, loc *time.Location) {
	cur := store.WindowAt(fs.g, now, fs.f.Zone(loc))
	if cur.Start.Equal(fs.win.Start) && !fs.win.Start.IsZero() {
		return
	}
	*fs = famSample{f: fs.f, g: fs.g, win: cur, byName: map[string]*liveKey{}}
}

// offer counts a key of the window with the value a page read at: into the top list when it
// ranks there, else into the sample when its priority is high enough. cl is the page's cluster
// in the frame (nil past a master walked whole).
func (fs *famSample) offer(name string, v int64, at time.Time, size, topK int, cl *liveCluster) {
	k := fs.byName[name]
	if k != nil {
		if k.idx < 0 { // in the top list: keep its rank current (a live read may be newer than the page)
			k.value = max(k.value, v)
			fs.resort()
			return
		}
		if !fs.ranks(v, topK) {
			// Already sampled. Once a sweep has counted the window, a value grown past a power
			// of two raises its weight, as it would be drawn with now; the rate of the span
			// under way keeps the weights of its base read (held). Before, a page offers each
			// key once, and one offering it again is past a master walked whole: its weight
			// stays the one it was drawn with.
			if fs.counted {
				k.setWeight(v)
				heap.Fix(&fs.sample, k.idx)
			}
			return
		}
		heap.Remove(&fs.sample, k.idx)
	} else {
		p := livePoint{v: v, t: at, set: true}
		k = &liveKey{name: name, hash: keyHash(name), value: v, page: p, framed: p, cl: cl}
		if !fs.ranks(v, topK) {
			fs.sampleAdd(k, v, size)
			return
		}
		fs.byName[name] = k
	}
	k.value, k.idx = v, -1
	fs.top = append(fs.top, k)
	fs.resort()
	if len(fs.top) > topK { // the smallest leaves the top list for the sample
		out := fs.top[len(fs.top)-1]
		fs.top = fs.top[:len(fs.top)-1]
		delete(fs.byName, out.name)
		w := out.value
		if !fs.counted {
			w = out.heldValue()
		}
		fs.sampleAdd(out, w, size)
	}
}

// heldValue is the key's value as of the read its rate counts from (its page's before it has a
// base read): a key that leaves the top list before a sweep has counted the window is weighed
// on it, so that its weight says nothing of the growth its rate counts.
func (k *liveKey) heldValue() int64 {
	if k.base.set {
		return k.base.v
	}
	return k.page.v
}

// ranks reports whether value v belongs in the top list.
func (fs *famSample) ranks(v int64, topK int) bool {
	return topK > 0 && (len(fs.top) < topK || v > fs.top[len(fs.top)-1].value)
}

// resort orders the top list, largest value first (it holds a few keys).
func (fs *famSample) resort() {
	for i := 1; i < len(fs.top); i++ {
		for j := i; j > 0 && fs.top[j].value > fs.top[j-1].value; j-- {
			fs.top[j], fs.top[j-1] = fs.top[j-1], fs.top[j]
		}
	}
}

// sampleAdd puts k, weighed on value v, in the sample when its priority is among the size highest
// of the keys offered (priority sampling: a key's chance grows with its value, so the keys that
// hold most of the total are read, and each is weighted by its chance).
func (fs *famSample) sampleAdd(k *liveKey, v int64, size int) {
	k.setWeight(v)
	if size <= 0 || k.prio <= fs.tau {
		fs.tau = max(fs.tau, k.prio)
		return
	}
	heap.Push(&fs.sample, k)
	fs.byName[k.name] = k
	if len(fs.sample) > size {
		out := heap.Pop(&fs.sample).(*liveKey)
		delete(fs.byName, out.name)
		fs.tau = max(fs.tau, out.prio)
	}
}

// setWeight sets the key's weight from its value v: v rounded down to a power of two (at least
// 1), so that a key's weight, and its place in the sample, change only when its value doubles.
// A sweep offers every key again, grown since; weights that followed every increment would churn
// the sample at every sweep. A rate counts each key at the weight and the chance it had at the
// rate's base read (heldRate): a weight raised since by the growth it weighs would count the keys
// that grew most for least (docs/estimates.md, Live rates).
func (k *liveKey) setWeight(v int64) {
	k.w = 1
	if v > 1 {
		k.w = float64(uint64(1) << (63 - bits.LeadingZeros64(uint64(v))))
	}
	k.prio = k.w / (float64(k.hash>>11+1) / (1 << 53)) // the hash as a uniform draw in (0, 1]
}

// drop forgets a key that is gone (expired or deleted).
func (fs *famSample) drop(k *liveKey) {
	if fs.byName[k.name] != k {
		return // read for the base read's sake only (toRead)
	}
	delete(fs.byName, k.name)
	if k.idx >= 0 {
		heap.Remove(&fs.sample, k.idx)
		return
	}
	for i, t := range fs.top {
		if t == k {
			fs.top = append(fs.top[:i], fs.top[i+1:]...)
			return
		}
	}
}

// keyHash is a key name's uniform draw for the sample: FNV-1a, then mixed (splitmix64's
// finalizer) so that names differing in their last bytes spread over all 64 bits. It depends on
// the name only, so a key draws the same across sweeps and runs.
func keyHash(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// liveHeap is the sample as a heap with the lowest priority on top, the one a higher evicts.
type liveHeap []*liveKey

func (h liveHeap) Len() int           { return len(h) }
func (h liveHeap) Less(i, j int) bool { return h[i].prio < h[j].prio }
func (h liveHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *liveHeap) Push(x any) {
	k := x.(*liveKey)
	k.idx = len(*h)
	*h = append(*h, k)
}
func (h *liveHeap) Pop() any {
	old := *h
	k := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	k.idx = -1
	return k
}
