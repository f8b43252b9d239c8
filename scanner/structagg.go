package scanner

import (
	"slices"
	"strconv"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// structAgg folds the structure keys of a sweep; like the counters' aggregate it holds what the
// structures number and a few top keys, not the keys.
type structAgg struct {
	specs     Structures
	limiters  []limAgg
	locks     []lockAgg
	uniques   []uniqAgg
	lockNoTTL probAgg
	queues    [][]snapshot.KeyCount // per delay queue pattern: the deepest queues found, deepest first
	queuesN   []int64               // per pattern: how many queues were found
	lists     [][]snapshot.KeyCount // per list queue pattern: the longest lists found
	listsN    []int64
	jobs      []jobAgg
	blooms    []bloomAgg
	claims    claimAgg
}

type limAgg struct {
	keys, atLimit, overLimit, wrongType int64
	hits                                snapshot.Int128     // exact; the Snapshot says when it saturated
	top                                 []snapshot.KeyCount // largest first
	// refused sums the refused attempts a library's keys count beside their hits; unknown
	// counts keys its layout cannot read, with the first reason.
	refused    snapshot.Int128
	unknown    int64
	unknownWhy string
	// refusedKeys counts the keys whose value counts what they refuse (refused covers them);
	// kinds are the kinds of the library's keys read, in the order first seen.
	refusedKeys int64
	kinds       []string
}

type lockAgg struct {
	held, noTTL, wrongType int64
	examples               []snapshot.LockHolder
}

type uniqAgg struct {
	windows   map[winKey]*uniqWin
	wrongType int64
}

type uniqWin struct {
	w     store.Window
	keys  int64
	count snapshot.Int128 // exact; the Snapshot says when it saturated
	// best is the dims tuple with the largest count, for the unions.
	best      []string
	bestCount int64
}

// maxTopKeys is how many keys a limiter's top list keeps; maxLockExamples how many held locks a
// lock pattern shows (those without a TTL first); maxPatternQueues how many of a delay queue pattern's queues are reported.
const (
	maxTopKeys       = 10
	maxLockExamples  = 10
	maxPatternQueues = 20
)

func newStructAgg(s Structures, loc *time.Location) *structAgg {
	a := &structAgg{specs: s, limiters: make([]limAgg, len(s.Limiters)), locks: make([]lockAgg, len(s.Locks)),
		uniques: make([]uniqAgg, len(s.Uniques)), queues: make([][]snapshot.KeyCount, len(s.DelayQueues)), queuesN: make([]int64, len(s.DelayQueues)),
		lists: make([][]snapshot.KeyCount, len(s.ListQueues)), listsN: make([]int64, len(s.ListQueues)), jobs: make([]jobAgg, len(s.JobQueues)),
		blooms: make([]bloomAgg, len(s.Blooms)), claims: newClaimAgg(s, loc)}
	for i := range a.jobs {
		a.jobs[i] = newJobAgg()
	}
	for i := range a.uniques {
		a.uniques[i].windows = map[winKey]*uniqWin{}
	}
	return a
}

// add folds one structure key in, by its kind; a key whose spec is not among the aggregate's is
// left out.
func (a *structAgg) add(k *Key, now time.Time, opt Options) {
	switch {
	case k.kind == kindLimiter && k.spec < len(a.limiters):
		a.addLimiter(k)
	case k.kind == kindLock && k.spec < len(a.locks):
		a.addLock(k, now, opt)
	case k.kind == kindDelayQueue && k.spec < len(a.queues):
		a.addQueue(k, a.queues, a.queuesN)
	case k.kind == kindListQueue && k.spec < len(a.lists):
		a.addQueue(k, a.lists, a.listsN)
	case k.kind == kindJob && k.spec < len(a.jobs):
		a.jobs[k.spec].add(k.Name, k.job, a.specs.JobQueues[k.spec])
	case k.kind == kindUnique && k.spec < len(a.uniques):
		a.addUnique(k)
	case k.kind == kindBloom && k.spec < len(a.blooms):
		a.blooms[k.spec].add(k)
	}
}

// addLimiter folds in a limiter key: its hits, whether it is at or over the limit, and its rank
// among the busiest.
func (a *structAgg) addLimiter(k *Key) {
	l, spec := &a.limiters[k.spec], a.specs.Limiters[k.spec]
	if k.limit != nil {
		l.addLibraryKey(k, spec)
		return
	}
	n, ok := ParseInteger(k.Value) // a fixed limiter's GET may hold anything
	if k.WrongType || !ok {
		l.wrongType++
		return
	}
	l.keys++
	l.hits.AddInt(n)
	switch {
	case n > spec.Limit:
		l.overLimit++
	case n == spec.Limit:
		l.atLimit++
	}
	var i int
	if l.top, i = topSlot(l.top, n, maxTopKeys, keyCount); i >= 0 {
		l.top[i] = snapshot.KeyCount{Key: format.Escape(k.Name), Raw: k.Name, Dims: dimsMap(spec.Pattern.Dims(), k.Dims), Count: n, TTLMS: ttlMS(k.TTL)}
	}
}

// addLibraryKey folds in a key of a library's limiter as the library answers for it: at its
// limit or not, never over (these libraries count what they refuse in the same value).
func (l *limAgg) addLibraryKey(k *Key, spec LimiterSpec) {
	st := k.limit
	if st.Unknown != "" {
		l.unknown++
		if l.unknownWhy == "" {
			l.unknownWhy = format.Escape(k.Name) + ": " + st.Unknown
		}
		return
	}
	l.keys++
	l.hits.AddInt(st.Used)
	var refused *int64
	if st.KeepsRejected() {
		l.refused.AddInt(st.Rejected)
		l.refusedKeys++
		refused = &st.Rejected
	}
	if st.Kind != "" && !slices.Contains(l.kinds, st.Kind) {
		l.kinds = append(l.kinds, st.Kind)
	}
	if st.AtLimit {
		l.atLimit++
	}
	var i int
	if l.top, i = topSlot(l.top, st.Used, maxTopKeys, keyCount); i >= 0 {
		rem, lim := st.Remaining, st.Limit
		kc := snapshot.KeyCount{Key: format.Escape(k.Name), Raw: k.Name, Dims: dimsMap(spec.Pattern.Dims(), k.Dims), Count: st.Used, TTLMS: -1,
			Remaining: &rem, Limit: &lim, Refused: refused}
		if st.ResetIn >= 0 {
			kc.TTLMS = st.ResetIn.Milliseconds()
		}
		kc.AtLimit = st.AtLimit
		l.top[i] = kc
	}
}

// addLock folds in a held lock: its holder as an example, and the lock among those held with no
// expiry when it has none.
func (a *structAgg) addLock(k *Key, now time.Time, opt Options) {
	l := &a.locks[k.spec]
	if k.WrongType {
		l.wrongType++
		return
	}
	l.held++
	ex := snapshot.LockHolder{Key: format.Escape(k.Name), Raw: k.Name, Token: format.Escape(k.Value), TTLMS: ttlMS(k.TTL), AgeMS: -1}
	if ms, ok := store.LockTokenTime(k.Value); ok {
		ex.AgeMS = max(now.UnixMilli()-ms, 0)
	}
	if k.TTL == NoTTL {
		l.noTTL++
		a.lockNoTTL.keys++
		if len(a.lockNoTTL.examples) < opt.Examples {
			a.lockNoTTL.examples = append(a.lockNoTTL.examples, snapshot.Example{Family: "lock:" + a.specs.Locks[k.spec].Name,
				Key: ex.Key, TTLMS: -1, Value: ex.Token})
		}
	}
	switch {
	case len(l.examples) < maxLockExamples:
		l.examples = append(l.examples, ex)
	case ex.TTLMS == -1: // a lock held forever is the one to show: it takes a place of one with a TTL
		for i, e := range l.examples {
			if e.TTLMS != -1 {
				l.examples[i] = ex
				break
			}
		}
	}
}

// addQueue counts a queue a pattern found and keeps it among the pattern's deepest (tops and ns
// are the delay queues' or the list queues').
func (a *structAgg) addQueue(k *Key, tops [][]snapshot.KeyCount, ns []int64) {
	if k.WrongType {
		return
	}
	ns[k.spec]++
	n, _ := strconv.ParseInt(k.Value, 10, 64)
	var i int
	if tops[k.spec], i = topSlot(tops[k.spec], n, maxPatternQueues, keyCount); i >= 0 {
		tops[k.spec][i] = snapshot.KeyCount{Key: k.Name, Count: n} // the raw name: fill reads it, then escapes it
	}
}

// addUnique folds a unique key's distinct count into its window, remembering the window's
// busiest dims for the unions.
func (a *structAgg) addUnique(k *Key) {
	u := &a.uniques[k.spec]
	if k.WrongType {
		u.wrongType++
		return
	}
	wk := winKey{k.window.Granularity, k.window.Start.Unix()}
	w := u.windows[wk]
	if w == nil {
		w = &uniqWin{w: k.window}
		u.windows[wk] = w
	}
	n, _ := strconv.ParseInt(k.Value, 10, 64)
	w.keys++
	w.count.AddInt(n)
	if w.best == nil || n > w.bestCount {
		w.best, w.bestCount = k.Dims, n
	}
}

// keyCount ranks a KeyCount for topSlot.
func keyCount(kc snapshot.KeyCount) int64 { return kc.Count }
