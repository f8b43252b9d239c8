package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// limiters shows each limiter and the busiest keys of the selected one, then the lock patterns;
// enter opens a limiter's keys or a lock pattern's holders.
type limiters struct {
	drillView
	rows list[limRow]
}

// limRow is a limiter's row or a lock pattern's: the selection runs over the limiters, then on
// over the locks.
type limRow struct {
	lim  *snapshot.Limiter
	lock *snapshot.Lock
}

func (r limRow) name() string {
	if r.lim != nil {
		return "limiter " + r.lim.Name
	}
	return "lock " + r.lock.Name
}

func newLimiters(c *console) *limiters {
	v := &limiters{rows: list[limRow]{id: limRow.name}}
	v.drillView = drillView{c: c, build: v.build, reset: v.rows.reset}
	return v
}

// build sets the rows: the limiters and the lock patterns the filter keeps.
func (v *limiters) build() {
	var rows []limRow
	if s := v.c.snapshot(); s != nil {
		for i, l := range s.Limiters {
			if matches(v.filter, l.Name) {
				rows = append(rows, limRow{lim: &s.Limiters[i]})
			}
		}
		for i, l := range s.Locks {
			if matches(v.filter, l.Name) {
				rows = append(rows, limRow{lock: &s.Locks[i]})
			}
		}
	}
	v.rows.set(rows)
}

// shown are the rows' limiters and lock patterns, in the order of the rows.
func (v *limiters) shown() ([]snapshot.Limiter, []snapshot.Lock) {
	var ls []snapshot.Limiter
	var ks []snapshot.Lock
	for _, r := range v.rows.rows {
		if r.lim != nil {
			ls = append(ls, *r.lim)
		} else {
			ks = append(ks, *r.lock)
		}
	}
	return ls, ks
}

func (v *limiters) bindings() []binding {
	return v.levelBindings(func() []binding {
		return append(moveBindings(v.c.keys, &v.rows, nil), binding{Binding: v.c.keys.Enter, short: true, do: v.open})
	})
}

// open lists the selected limiter's keys or lock pattern's holders.
func (v *limiters) open() tea.Cmd {
	switch r, _ := v.rows.selected(); {
	case r.lim != nil:
		return v.d.push(newLimKeysLevel(v.c, &v.d, r.lim.Name))
	case r.lock != nil:
		return v.d.push(newLockListLevel(v.c, &v.d, r.lock.Name))
	}
	return nil
}

func (v *limiters) render(w, h int) string {
	if l := v.d.top(); l != nil {
		return l.render(w, h)
	}
	s := v.c.snapshot()
	if s == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep's first page…")
	}
	if len(s.Limiters) == 0 && len(s.Locks) == 0 {
		return newPlaceholder(v.c, limitersText).render(w, h)
	}
	ls, ks := v.shown()
	if len(ls)+len(ks) == 0 {
		return v.c.styles.Muted.Render(fmt.Sprintf("No limiter or lock matches %q (esc clears the filter).", v.filter))
	}
	var lines []string
	if v.c.soFar() {
		lines = append(lines, v.c.styles.Muted.Render(fit(soFarLimiters, w)))
	}
	if len(ls) > 0 {
		lines = append(lines, v.limiterLines(s, ls, w)...)
	}
	if len(ks) > 0 {
		lines = append(lines, v.lockLines(ks, len(ls), w)...)
	}
	lines = append(lines, "", v.c.styles.Muted.Render(fit("enter opens the selected limiter's keys or lock's holders", w)))
	return strings.Join(lines, "\n")
}

// soFarLimiters says what the Limiters view holds while the first sweep is under way.
const soFarLimiters = "first sweep under way: ≥ counts the keys found so far; the busiest keys, the locks listed and this hour's decisions are read live"

// limiterLines are the limiters' table, and the notes and busiest keys of the one selected.
func (v *limiters) limiterLines(s *snapshot.Snapshot, shown []snapshot.Limiter, w int) []string {
	st := v.c.styles
	// Most telling first: a narrow terminal drops columns from the right.
	t := &table{styles: v.c, cols: []column{
		{title: "LIMITER", flex: true}, {title: "KEYS", right: true}, {title: "AT LIMIT", right: true}, {title: "OVER", right: true},
		{title: "REJECTED/S", right: true}, {title: "ALLOWED/S", right: true}, {title: "HITS", right: true},
		{title: "LIMIT", right: true}, {title: "WINDOW", right: true}, {title: "KIND"}, {title: "REJECTED/S OVER TIME", optional: true},
	}}
	t.selected = -1
	if v.rows.sel < len(shown) {
		t.selected = v.rows.sel
	}
	perSec := func(p *float64, hourTotal *int64) string {
		switch {
		case p != nil:
			return format.Rate(*p)
		case hourTotal == nil: // the hour's counters were not read
			return format.Unknown
		}
		// The first snapshot (or the first of an hour): this hour's average, up to when it was taken.
		taken := s.TakenAt
		return "~" + format.Rate(float64(*hourTotal)/max(taken.Sub(taken.Truncate(time.Hour)).Seconds(), 1))
	}
	n := v.c.countCell
	for _, l := range shown {
		if !l.KeepsDecisions() { // a library's decisions are its own: hourglass counts no rates for them
			t.rows = append(t.rows, []string{l.Name, n(l.Keys), n(l.AtLimit), v.c.bound(cells.Over(l)),
				format.NotKept, format.NotKept, v.c.bound(format.Total(l.Hits, l.HitsSaturated)), limitText(l.Limit), millisOrKey(l.WindowMS), cells.LimiterKind(l), ""})
			continue
		}
		t.rows = append(t.rows, []string{l.Name, n(l.Keys), n(l.AtLimit), v.c.bound(cells.Over(l)),
			perSec(l.RejectedPerSec, l.Rejected), perSec(l.AllowedPerSec, l.Allowed), v.c.bound(format.Total(l.Hits, l.HitsSaturated)), limitText(l.Limit),
			millisOrKey(l.WindowMS), cells.LimiterKind(l), v.c.spark("lim.rejected."+l.Name, 24)})
	}
	lines := t.render(w)
	if v.rows.sel >= len(shown) {
		return lines
	}
	l := shown[v.rows.sel]
	if l.Unknown > 0 {
		lines = append(lines, st.Warn.Render(fit(fmt.Sprintf("%s in no layout %s reads (unknown layout), e.g. %s", format.Count(l.Unknown, "key", "keys"), l.Layout, l.UnknownNote), w)))
	}
	if !l.KeepsDecisions() {
		lines = append(lines, st.Muted.Render(fit(refusedNote(l), w)))
	}
	if l.OverLimit != nil && *l.OverLimit > 0 {
		lines = append(lines, st.Bad.Render(format.Count(*l.OverLimit, "key is past its", "keys are past their")+" limit: a writer checks, then adds, and races (as a ZCARD-then-ZADD sliding limiter does)"))
	}
	lines = append(lines, "", st.Title.Render("Busiest keys of "+l.Name)+st.Muted.Render("  (the next hit on a key at its limit is refused)"))
	kt := &table{styles: v.c, selected: -1, cols: []column{
		{title: "KEY", flex: true}, {title: "HITS", right: true}, {title: "OF LIMIT", right: true}, {title: "TTL", right: true},
	}}
	for _, k := range l.Top {
		limit := limitOf(l)
		if k.Limit != nil { // a library's key, read against its own limit
			limit = *k.Limit
		}
		kt.rows = append(kt.rows, []string{k.Key, format.Commas(k.Count), fmt.Sprintf("%.0f%%", 100*float64(k.Count)/float64(max(limit, 1))), format.Millis(k.TTLMS)})
	}
	if len(kt.rows) == 0 {
		lines = append(lines, st.Muted.Render("no keys found"))
	} else {
		lines = append(lines, kt.render(w)...)
	}
	return lines
}

// limitOf is the limiter's configured limit, 0 when the keys spell their own.
func limitOf(l snapshot.Limiter) int64 {
	if l.Limit == nil {
		return 0
	}
	return *l.Limit
}

// refusedNote says what a library's keys count of the attempts they refused.
func refusedNote(l snapshot.Limiter) string {
	if l.RefusedInWindow == nil {
		return fmt.Sprintf("refused attempts: %s (%s keys of kind %s keep no count of what they refuse)", format.NotKept, l.Layout, l.Kind)
	}
	n := format.Total(*l.RefusedInWindow, l.RefusedSaturated)
	if l.RefusedKeys < l.Keys {
		return fmt.Sprintf("%s refused attempts counted in the current windows of %s of the %s keys (%s counts them beside the hits in its %s keys; the others keep no count)",
			n, format.Commas(l.RefusedKeys), format.Commas(l.Keys), l.Layout, "fixed")
	}
	return fmt.Sprintf("%s refused attempts counted in the keys' current windows (%s counts them beside the hits)", n, l.Layout)
}

// lockLines are the lock patterns' table; the selection runs on from the limiters' rows.
func (v *limiters) lockLines(ks []snapshot.Lock, first, w int) []string {
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "LOCK", flex: true}, {title: "HELD", right: true}, {title: "NO TTL", right: true}, {title: "WRONG TYPE", right: true},
	}}
	for i, l := range ks {
		if first+i == v.rows.sel {
			t.selected = i
		}
		noTTL := v.c.countCell(l.NoTTL)
		if l.NoTTL > 0 {
			noTTL = v.c.styles.Bad.Render(noTTL)
		}
		t.rows = append(t.rows, []string{l.Name, v.c.countCell(l.Held), noTTL, v.c.countCell(l.WrongType)})
	}
	return append([]string{""}, t.render(w)...)
}
