package scanner

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// reconciler adds up, for each (dims, day) pair of a family with hour and day windows, the day's
// hour values and its day value, for the days that have ended and whose hours are all retained.
//
// It holds at most max pairs. Past that it keeps only the pairs whose hash starts with level zero
// bits (a 1/2^level share, chosen by the pair, not by arrival order), doubling level and
// dropping the rest each time it fills again: the counts it gives are then the sample's, scaled
// up, and say so. A sweep of any size holds max pairs at most.
type reconciler struct {
	max   int
	level uint
	seed  maphash.Seed
	pairs map[uint64]*pair
	days  map[int64]bool // day start (Unix) → whether it can be checked
	used  map[int64]bool // the checkable days a key was found in
}

type pair struct {
	day      store.Window
	dims     []string
	hours    snapshot.Int128 // exact: the Snapshot clamps them and says when they saturated
	dayValue snapshot.Int128
}

func newReconciler(max int) *reconciler {
	return &reconciler{
		max: max, seed: maphash.MakeSeed(),
		pairs: map[uint64]*pair{}, days: map[int64]bool{}, used: map[int64]bool{},
	}
}

// add folds in the value v of family f's key in window w with dims.
func (r *reconciler) add(f *store.Family, w store.Window, dims []string, v int64, now time.Time, loc *time.Location) {
	day := w
	if w.Granularity == store.Hour {
		day = store.WindowAt(store.Day, w.Start, loc)
	}
	ok, known := r.days[day.Start.Unix()]
	if !known {
		firstHour := store.WindowAt(store.Hour, day.Start, loc)
		ok = !now.Before(day.End) && now.Before(f.ExpireAt(firstHour)) && now.Before(f.ExpireAt(day))
		r.days[day.Start.Unix()] = ok
	}
	if !ok {
		return
	}
	r.used[day.Start.Unix()] = true
	h := r.hash(day, dims)
	if !r.keep(h) {
		return
	}
	p := r.pairs[h]
	if p == nil {
		for len(r.pairs) >= r.max {
			r.level++
			for k := range r.pairs {
				if !r.keep(k) {
					delete(r.pairs, k)
				}
			}
		}
		if !r.keep(h) {
			return
		}
		p = &pair{day: day, dims: dims}
		r.pairs[h] = p
	}
	if w.Granularity == store.Hour {
		p.hours.AddInt(v)
	} else {
		p.dayValue.AddInt(v)
	}
}

func (r *reconciler) keep(h uint64) bool {
	return r.level == 0 || h>>(64-r.level) == 0
}

func (r *reconciler) hash(day store.Window, dims []string) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(day.Start.Unix()))
	h.Write(b[:])
	for _, d := range dims {
		binary.LittleEndian.PutUint64(b[:], uint64(len(d)))
		h.Write(b[:])
		h.WriteString(d)
	}
	return h.Sum64()
}

// maxMismatchExamples is how many disagreeing pairs a reconciliation shows.
const maxMismatchExamples = 3

func (r *reconciler) result(f *store.Family, dimNames []string) snapshot.Reconciliation {
	res := snapshot.Reconciliation{Days: len(r.used), Sampled: 1 / float64(uint64(1)<<r.level), Examples: []snapshot.Mismatch{}}
	var bad []*pair
	var diff snapshot.Int128
	for _, p := range r.pairs {
		res.Dims++
		if p.hours != p.dayValue {
			res.Mismatched++
			diff = diff.Add(p.hours.Sub(p.dayValue).Abs())
			bad = append(bad, p)
		}
	}
	res.Dims <<= r.level
	res.Mismatched <<= r.level
	res.Difference, res.Saturated = diff.Int64()
	if r.level > 0 {
		res.Difference, res.Saturated = scaled(diff.Float(), res.Sampled)
	}
	sort.Slice(bad, func(i, j int) bool {
		di, dj := bad[i].hours.Sub(bad[i].dayValue).Abs(), bad[j].hours.Sub(bad[j].dayValue).Abs()
		if di != dj {
			return di.Greater(dj)
		}
		if !bad[i].day.Start.Equal(bad[j].day.Start) {
			return bad[i].day.Start.Before(bad[j].day.Start)
		}
		return strings.Join(bad[i].dims, "\x00") < strings.Join(bad[j].dims, "\x00")
	})
	wf, _ := f.Format(store.Day)
	for _, p := range bad[:min(len(bad), maxMismatchExamples)] {
		m := snapshot.Mismatch{Day: wf.Format(p.day), Dims: dimsMap(dimNames, p.dims)}
		var hs, ds bool
		m.Hours, hs = p.hours.Int64()
		m.DayValue, ds = p.dayValue.Int64()
		m.Saturated = hs || ds
		res.Examples = append(res.Examples, m)
	}
	return res
}

// scaled is a sampled sum scaled up to the whole, as a figure: clamped to int64, and saturated
// when it does not fit.
func scaled(sum, share float64) (int64, bool) {
	v := sum / share
	if v >= math.MaxInt64 { // float64(math.MaxInt64) is 2^63, past the range
		return math.MaxInt64, true
	}
	return int64(v), false
}
