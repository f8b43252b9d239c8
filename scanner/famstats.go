package scanner

import (
	"sort"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// stats renders one family's aggregate.
func (fa *famAgg) stats(now time.Time, opt Options, sizes map[string]int64, types map[string]string, note string) snapshot.FamilyStats {
	f := fa.f
	fs := snapshot.FamilyStats{
		Family: f.Name(), Dims: f.Dims(), Keys: fa.keys, TTL: fa.ttl,
		WrongType:  fa.problems[probWrongType].keys,
		NotInteger: fa.problems[probNotInteger].keys,
		Windows:    make([]snapshot.WindowStats, 0, len(fa.windows)),
		Series:     snapshot.Series{Hours: []int64{}, Days: []int64{}},
	}
	for _, g := range f.Granularities() {
		fs.Granularities = append(fs.Granularities, g.String())
	}
	dimNames := f.Dims()
	for _, w := range sortedWindows(fa.windows) {
		wf, _ := f.Format(w.w.Granularity)
		ws := snapshot.WindowStats{
			Granularity: w.w.Granularity.String(), Window: wf.Format(w.w), Start: w.w.Start,
			Keys:    w.keys,
			Current: w.w.Contains(now),
			Expired: !now.Before(w.expireAt),
		}
		ws.Total, ws.Saturated = w.total.Int64()
		for _, t := range w.top {
			ws.Top = append(ws.Top, snapshot.DimsValue{Dims: dimsMap(dimNames, t.dims), Value: t.value, Raw: t.name})
		}
		fs.Windows = append(fs.Windows, ws)
	}
	loc := f.Zone(opt.Location) // the family's own zone, else the sweep's
	fs.Series = fa.series(now, loc)
	fs.RateNote = "one sweep: a rate needs the current window read again at least " + format.Span(MinRateSpan.Seconds()) +
		" later (the console and serve measure it over the last minute)"
	var hourTotal float64 // 0 when no key is in the current hour
	cur := store.WindowAt(store.Hour, now, loc)
	if w := fa.windows[winKey{store.Hour, cur.Start.Unix()}]; w != nil {
		hourTotal = w.total.Float() // exact even when the total saturated
	}
	setHourAvg(&fs, f.Has(store.Hour), hourTotal, now.Sub(cur.Start).Seconds())
	fa.problemStats(&fs.Health, sizes, types)
	fs.Health.MemoryNote = note
	if fa.recon != nil {
		r := fa.recon.result(f, dimNames)
		fs.Reconciliation = &r
		fs.MismatchedDims = r.Mismatched
	}
	return fs
}

// problemStats fills h's problems: their counts, their examples with the bytes and type read of
// each, and the memory of all their keys estimated from the sampled ones.
func (fa *famAgg) problemStats(h *snapshot.Health, sizes map[string]int64, types map[string]string) {
	for i, p := range h.Problems()[:numProblems] {
		pa := &fa.problems[i]
		p.Keys = pa.keys
		p.Examples = make([]snapshot.Example, 0, len(pa.examples))
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
}

// series returns the totals of the last SeriesHours hours and SeriesDays days, oldest first.
func (fa *famAgg) series(now time.Time, loc *time.Location) snapshot.Series {
	return fa.seriesOf(now, loc, func(_ winKey, w *winAgg) (int64, bool) { return w.total.Int64() })
}

// seriesOf is series with each window's total (and whether it saturated) given by total.
func (fa *famAgg) seriesOf(now time.Time, loc *time.Location, total func(winKey, *winAgg) (int64, bool)) snapshot.Series {
	s := snapshot.Series{Hours: []int64{}, Days: []int64{}}
	for _, g := range fa.f.Granularities() {
		n := snapshot.SeriesHours
		if g == store.Day {
			n = snapshot.SeriesDays
		}
		out := make([]int64, n)
		w := store.WindowAt(g, now, loc)
		for i := n - 1; i >= 0; i-- {
			wk := winKey{g, w.Start.Unix()}
			if a := fa.windows[wk]; a != nil {
				var sat bool
				out[i], sat = total(wk, a)
				s.Saturated = s.Saturated || sat
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
			m[n] = format.Escape(dims[i])
		}
	}
	return m
}

// sortedWindows returns the windows in m by granularity, then start: the order a snapshot lists
// them in.
func sortedWindows[T any](m map[winKey]T) []T {
	keys := make([]winKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].g != keys[j].g {
			return keys[i].g < keys[j].g
		}
		return keys[i].start < keys[j].start
	})
	wins := make([]T, len(keys))
	for i, k := range keys {
		wins[i] = m[k]
	}
	return wins
}

// setHourAvg sets fs's hour average: total, the current hour's, over secs, the seconds gone in
// it; nil with the reason for a family without hour windows, or in the hour's first second.
func setHourAvg(fs *snapshot.FamilyStats, hasHours bool, total, secs float64) {
	switch {
	case !hasHours:
		fs.HourAvgPerSec, fs.HourAvgNote = nil, "no hour windows: the family is written in day windows (rate_per_sec is the day's growth)"
	case secs < 1:
		fs.HourAvgPerSec, fs.HourAvgNote = nil, "the hour began less than a second ago"
	default:
		avg := total / secs
		fs.HourAvgPerSec, fs.HourAvgNote = &avg, ""
	}
}
