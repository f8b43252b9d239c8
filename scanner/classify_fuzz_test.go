package scanner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// classifySweep is a sweep with one entry of each kind whose keys are built by pattern: counter
// families, a limiter, a lock, delay queues by key and by pattern (with hourglass's own in-flight
// sets), a list queue by key, and a unique family. It never reads Redis: classify is plain string
// work.
func classifySweep(t testing.TB) *Sweep {
	t.Helper()
	pattern := func(text string) *store.Pattern {
		p, err := store.ParseKeyPattern(text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	uv, err := store.NewFamily(store.FamilySpec{Name: "uv", Pattern: "uv:{<page>}:<window>", DayFormat: "yyyyMMdd", DayRetention: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, families(t), Options{Location: shanghai, Structures: Structures{
		Limiters: []LimiterSpec{{LimiterSpec: store.LimiterSpec{Name: "api", Pattern: "rl:api:<user>", Kind: store.Sliding,
			Window: time.Minute, Limit: 5}, Pattern: pattern("rl:api:<user>")}},
		Locks: []LockSpec{{Name: "jobs", Pattern: pattern("lock:{<name>}")}},
		DelayQueues: []DelayQueueSpec{
			{Name: "orders", Key: "delay:orders", Unit: store.Milliseconds},
			{Name: "topics", Pattern: pattern("delay:<topic>"), Unit: store.Milliseconds},
		},
		ListQueues: []ListQueueSpec{{Name: "jobs", Key: "queue:jobs"}},
		Uniques:    []UniqueSpec{{Kind: store.HyperLogLog, Family: uv}},
	}})
}

// FuzzSweepClassify builds, from any dims value at any hour, a key of every entry of
// classifySweep and checks that the sweep's classification gives each to its own entry, with the
// dims and window it was built from; and that any key at all that an entry claims is one that
// entry's pattern writes again from what was read.
func FuzzSweepClassify(f *testing.F) {
	s := classifySweep(f)
	f.Fuzz(func(t *testing.T, d string, at int64) {
		if len(d) > 4096 {
			return
		}
		const span = 3124137600 // 1970 to 2068: every format writes the year in full
		now := time.Unix((at%span+span)%span, 0)
		hour := store.WindowAt(store.Hour, now, shanghai)
		day := store.WindowAt(store.Day, now, shanghai)
		type want struct {
			kind keyKind
			spec int
			dims []string
			w    store.Window
		}
		wants := map[string]want{
			"rl:api:" + d:                   {kindLimiter, 0, []string{d}, store.Window{}},
			"lock:{" + d + "}":              {kindLock, 0, []string{d}, store.Window{}},
			"uv:{" + d + "}:" + ymd(day):    {kindUnique, 0, []string{d}, day},
			store.InFlightKey("delay:" + d): {kindClaimed, 1, nil, store.Window{}},
		}
		if !store.IsCompanionKey("delay:" + d) {
			wants["delay:"+d] = want{kindDelayQueue, 1, []string{d}, store.Window{}}
		}
		if d == "orders" { // the queue configured by its key claims its key and its in-flight set
			wants["delay:"+d] = want{kindClaimed, 0, nil, store.Window{}}
			wants[store.InFlightKey("delay:"+d)] = want{kindClaimed, 0, nil, store.Window{}}
		}
		if !strings.Contains(d, ":") { // counters' dims before the last hold no separator
			wants["flow:count:"+d+":"+d+":"+d+":"+hour.Start.Format("2006010215")] = want{kindCounter, 0, []string{d, d, d}, hour}
			wants["{"+d+":"+d+"}:"+ymd(day)] = want{kindCounter, 1, []string{d, d}, day}
		}
		names := append(slices.Sorted(func(yield func(string) bool) {
			for k := range wants {
				if !yield(k) {
					return
				}
			}
		}), d)
		found, _ := s.classify("", false, names)
		got := map[string]Key{}
		for _, k := range found {
			got[k.Name] = k
			checkReadBack(t, s, k)
		}
		for name, w := range wants {
			k, ok := got[name]
			spec := k.spec
			if k.kind == kindCounter && ok {
				spec = slices.Index(s.families, k.Family)
			}
			if !ok || k.kind != w.kind || spec != w.spec || !slices.Equal(k.Dims, w.dims) {
				t.Fatalf("%q: claimed %v as kind %d entry %d dims %q; want kind %d entry %d dims %q", name, ok, k.kind, spec, k.Dims, w.kind, w.spec, w.dims)
			}
			window := k.window
			if k.kind == kindCounter {
				window = k.Window
			}
			if !w.w.Start.IsZero() && (!window.Start.Equal(w.w.Start) || window.Granularity != w.w.Granularity) {
				t.Fatalf("%q: window %v %v, want %v %v", name, window.Granularity, window.Start, w.w.Granularity, w.w.Start)
			}
		}
	})
}

// ymd is a day window as yyyyMMdd.
func ymd(w store.Window) string { return w.Start.Format("20060102") }

// checkReadBack fails unless the entry that claimed k writes k.Name again from what was read.
func checkReadBack(t *testing.T, s *Sweep, k Key) {
	t.Helper()
	var back string
	var err error
	switch k.kind {
	case kindCounter:
		back, err = k.Family.Key(k.Window, k.Dims)
	case kindLimiter:
		back, err = s.structs.Limiters[k.spec].Pattern.Key(k.Dims, "")
	case kindLock:
		back, err = s.structs.Locks[k.spec].Pattern.Key(k.Dims, "")
	case kindDelayQueue:
		back, err = s.structs.DelayQueues[k.spec].Pattern.Key(k.Dims, "")
	case kindUnique:
		back, err = s.structs.Uniques[k.spec].Family.Key(k.window, k.Dims)
	default:
		return // claimed by its key or as a companion: matched whole
	}
	if err != nil || back != k.Name {
		t.Fatalf("%q claimed as kind %d entry %d dims %q, which builds %q (%v)", k.Name, k.kind, k.spec, k.Dims, back, err)
	}
}
