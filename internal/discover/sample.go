package discover

import (
	"fmt"
	"math"
	"time"

	"github.com/hourglass-dev/hourglass/internal/format"

	est "github.com/hourglass-dev/hourglass/internal/estimate"
)

// A sweep stopped before its end (discover --sample, a sweep under way) has seen part of the
// keyspace. SCAN's order has nothing to do with key names, so its pages are a sample of the
// keyspace in clusters, and each group's keys are scaled to the whole with internal/estimate's
// ratio estimator: the group's keys per key seen, page by page, times the keys each master holds.
// That needs each group's keys per page, which Groups keep per master as rows of pages: at most
// maxRows rows, two neighbouring rows merged into one whenever they fill, so what is kept is
// bounded by the shapes and the masters, never by the keys or the pages.

// Estimate is a group's figure scaled from a sweep stopped before its end (see estimate.Shown).
type Estimate = est.Shown

// Stratum is how far a sweep has come on one master ("" on a standalone server): the keys it
// holds (DBSIZE, 0 when unknown) and whether it was swept to its end.
type Stratum struct {
	DBSize int64
	Done   bool
}

// maxRows is how many rows of pages a master keeps: enough clusters for an interval (Student's t
// with 31 degrees of freedom or more once they merge), few enough to stay small.
const maxRows = 64

// sampleRow is a run of consecutive pages of one master: their keys, and each shape's among them.
type sampleRow struct {
	keys float64
	y    map[*shape]float64
}

// sampleStratum is one master's rows.
type sampleStratum struct {
	rows  []sampleRow
	open  sampleRow // the row still growing
	runs  int       // clusters in open
	width int       // clusters a row holds before it closes; doubles when the rows merge
}

// AddPage is Add for one whole page of SCAN on master stratum: seen is every key the page
// returned (names are those no entry claims among them), and continues says the page carries on
// the last one's cluster (a cluster's hash slot), so the two count as one.
func (g *Groups) AddPage(stratum string, seen int, continues bool, names []string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.page == nil {
		g.page = map[*shape]float64{}
	}
	sample := g.add(names, g.page)
	if seen > 0 {
		g.endPage(stratum, float64(seen), continues)
	}
	clear(g.page)
	return sample
}

// endPage adds the page counted in g.page to stratum's rows. g.mu is held.
func (g *Groups) endPage(stratum string, seen float64, continues bool) {
	if g.strata == nil {
		g.strata = map[string]*sampleStratum{}
	}
	st := g.strata[stratum]
	if st == nil {
		st = &sampleStratum{width: 1}
		g.strata[stratum] = st
	}
	if !continues || st.runs == 0 {
		if st.runs >= st.width {
			st.closeRow()
		}
		st.runs++
	}
	if st.open.y == nil {
		st.open.y = map[*shape]float64{}
	}
	st.open.keys += seen
	for sh, n := range g.page {
		st.open.y[sh] += n
	}
}

// closeRow keeps the open row, merging neighbouring rows when maxRows are kept.
func (st *sampleStratum) closeRow() {
	st.rows = append(st.rows, st.open)
	st.open, st.runs = sampleRow{y: map[*shape]float64{}}, 0
	if len(st.rows) < maxRows {
		return
	}
	half := st.rows[:0]
	for i := 0; i+1 < len(st.rows); i += 2 {
		a, b := st.rows[i], st.rows[i+1]
		a.keys += b.keys
		for sh, n := range b.y {
			a.y[sh] += n
		}
		half = append(half, a)
	}
	st.rows, st.width = half, st.width*2
}

// redirect moves what the rows counted for shape from to shape to, which from was merged into.
// g.mu is held.
func (g *Groups) redirect(from, to *shape) {
	move := func(m map[*shape]float64) {
		if n, ok := m[from]; ok {
			m[to] += n
			delete(m, from)
		}
	}
	move(g.page)
	for _, st := range g.strata {
		move(st.open.y)
		for _, r := range st.rows {
			move(r.y)
		}
	}
}

// own is the live shapes sh counts: itself, or, for a copy merged from others, theirs.
func own(sh *shape) []*shape {
	if sh.derived {
		return sh.members
	}
	return []*shape{sh}
}

// scale sets the estimates of r and its groups from the rows, for a sweep that stopped before
// its end on some master of strata; with none such (or no strata), r stays as seen. g.mu is held.
func (g *Groups) scale(r *Result, strata map[string]Stratum) {
	open := false
	for _, s := range strata {
		open = open || !s.Done
	}
	if !open || len(g.strata) == 0 {
		return
	}
	var keys, pop float64
	for addr, st := range g.strata {
		n := st.open.keys
		for _, row := range st.rows {
			n += row.keys
		}
		keys += n
		pop += math.Max(float64(strata[addr].DBSize), n)
		if strata[addr].DBSize <= 0 && !strata[addr].Done {
			pop = math.NaN() // unknown: nothing is scaled
		}
	}
	if pop > 0 {
		r.Coverage, r.DBSize = math.Min(keys/pop, 1), int64(pop)
	}
	r.KeysEstimate = g.figure(nil, strata, r.Coverage)
	r.BytesEstimate = bytesOf(r.Bytes, r.KeysEstimate)
	for i := range r.Groups {
		gr := &r.Groups[i]
		gr.KeysEstimate = g.figure(gr.members, strata, r.Coverage)
		gr.BytesEstimate = bytesOf(gr.Bytes, gr.KeysEstimate)
	}
}

// figure estimates the keys of members (every shape when nil) over the strata.
func (g *Groups) figure(members []*shape, strata map[string]Stratum, coverage float64) *Estimate {
	var sts []est.Stratum
	for addr, st := range g.strata {
		var fr est.Frame
		var sum est.Sum
		add := func(row sampleRow) {
			y := 0.0
			if members == nil {
				for _, n := range row.y {
					y += n
				}
			} else {
				for _, sh := range members {
					y += row.y[sh]
				}
			}
			fr.Add(row.keys)
			sum.Add(row.keys, y)
		}
		for _, row := range st.rows {
			add(row)
		}
		if st.open.keys > 0 {
			add(st.open)
		}
		p := strata[addr]
		sts = append(sts, est.Stratum{Frame: fr, Sum: sum, Population: float64(p.DBSize), Done: p.Done})
	}
	shown := est.Show(coverage, sts...).AtLeastSeen() // keys seen are there: the whole holds at least those
	return &shown
}

// bytesOf scales the memory of the keys seen (their sampled mean times their number) by the keys'
// estimate: the sampled mean memory times the estimated keys, and the keys' interval times that
// mean. The spread of the sampled keys' sizes is not in the interval.
func bytesOf(seen *int64, keys *Estimate) *Estimate {
	if seen == nil || keys == nil || keys.Seen <= 0 {
		return nil
	}
	mean := float64(*seen) / keys.Seen
	e := &Estimate{Estimate: mean * keys.Estimate, Low: mean * keys.Low, Coverage: keys.Coverage,
		Seen: float64(*seen), SoFar: keys.SoFar}
	if keys.High != nil {
		h := mean * *keys.High
		e.High = &h
	}
	return e
}

// sampleHeader says, for a sweep stopped on purpose, how much of the keyspace it saw and that the
// keys and memory given are estimates.
func (d *Doc) sampleHeader(w *writer) {
	r := d.Result
	if r.DBSize <= 0 {
		w.comment(fmt.Sprintf("SAMPLE:   swept in %s, but the keys the servers hold are unknown (DBSIZE):", d.Elapsed.Round(100*time.Millisecond)))
		w.comment("          nothing is scaled; the keys given are those seen.")
		return
	}
	w.comment(fmt.Sprintf("SAMPLE:   from %.1f%% of %s keys, swept in %s; keys and memory are estimates with their",
		100*r.Coverage, format.Commas(r.DBSize), d.Elapsed.Round(100*time.Millisecond)))
	w.comment("          95% intervals (see docs/commands.md#a-sample); a group in too few pages to scale says")
	w.comment("          what was seen.")
	if e := r.KeysEstimate; e != nil && !e.SoFar && e.High != nil {
		w.comment(fmt.Sprintf("          unclaimed keys in the whole keyspace: ≈%s (95%%: %s–%s)%s",
			format.Short(e.Estimate), format.Short(e.Low), format.Short(*e.High), approxBytes(r.BytesEstimate)))
	}
}

// estimatedKeys is a group's estimated keys and memory, with their intervals: "≈120k keys (95%:
// 112k–128k), ≈9.6 MiB (95%: 9.0 MiB–10.2 MiB)", or, for a group in too few pages to scale, "at
// least 37 keys seen".
func estimatedKeys(g Group) string {
	e := g.KeysEstimate
	if e.SoFar || e.High == nil {
		return fmt.Sprintf("at least %s keys seen (in too few pages to estimate the whole)", format.Commas(int64(e.Seen)))
	}
	return fmt.Sprintf("≈%s keys (95%%: %s–%s)%s", format.Short(e.Estimate), format.Short(e.Low), format.Short(*e.High),
		approxBytes(g.BytesEstimate))
}

// approxBytes is ", ≈9.6 MiB (95%: 9.0 MiB–10.2 MiB)" for a memory estimate, "" for none.
func approxBytes(b *Estimate) string {
	if b == nil || b.SoFar || b.High == nil {
		return ""
	}
	return fmt.Sprintf(", ≈%s (95%%: %s–%s)", format.BytesIEC(int64(math.Round(b.Estimate))),
		format.BytesIEC(int64(math.Round(b.Low))), format.BytesIEC(int64(math.Round(*b.High))))
}
