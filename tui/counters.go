package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// counters is the table of families; enter opens one family (a familyLevel), and enter on one
// of its top dims opens that tuple (a dimLevel).
type counters struct {
	drillView
	rows list[string] // the families the table shows, after the filter
	// preview is the selected family's detail, which a tall terminal shows below the table.
	preview *familyLevel
}

func newCounters(c *console) *counters {
	v := &counters{rows: list[string]{id: func(name string) string { return name }}}
	v.drillView = drillView{c: c, build: v.build, reset: v.rows.reset}
	return v
}

// build sets the rows, and the preview to the selected family.
func (v *counters) build() {
	var names []string
	if snap := v.c.snapshot(); snap != nil {
		for _, f := range snap.Counters {
			if matches(v.filter, f.Family) {
				names = append(names, f.Family)
			}
		}
	}
	v.rows.set(names)
	v.showSelected()
}

// showSelected puts the selected family in the preview.
func (v *counters) showSelected() tea.Cmd {
	v.preview = nil
	if name, ok := v.rows.selected(); ok {
		v.preview = newFamilyLevel(v.c, nil, name)
	}
	return nil
}

// family is the open family, else the selected one.
func (v *counters) family() string {
	if len(v.d.stack) > 0 {
		if f, ok := v.d.stack[0].(*familyLevel); ok {
			return f.name
		}
	}
	name, _ := v.rows.selected()
	return name
}

func (v *counters) bindings() []binding {
	return v.levelBindings(func() []binding {
		return append(moveBindings(v.c.keys, &v.rows, v.showSelected), binding{Binding: v.c.keys.Enter, short: true, do: func() tea.Cmd {
			if name, ok := v.rows.selected(); ok {
				return v.d.push(newFamilyLevel(v.c, &v.d, name))
			}
			return nil
		}})
	})
}

func (v *counters) render(w, h int) string {
	snap := v.c.snapshot()
	if snap == nil {
		return v.c.styles.Muted.Render("Waiting for the first sweep's first page…")
	}
	if l := v.d.top(); l != nil {
		return l.render(w, h)
	}
	return v.table(snap, w, h)
}

func (v *counters) table(snap *snapshot.Snapshot, w, h int) string {
	st := v.c.styles
	t := &table{styles: v.c, cols: []column{
		{title: "FAMILY", flex: true}, {title: "KEYS", right: true}, {title: "THIS HOUR", right: true},
		{title: "RATE/S", right: true}, {title: "TODAY", right: true}, {title: "NO TTL", right: true},
		{title: "MISMATCH", right: true}, {title: "LAST 24 HOURS", optional: true},
	}}
	for _, f := range snap.Counters {
		if !matches(v.filter, f.Family) {
			continue
		}
		live := v.c.status.LiveFamily(f.Family)
		hour, today, mism := cells.WindowTotal(f, "hour", live), cells.WindowTotal(f, "day", live), "-"
		if f.Reconciliation != nil {
			mism = format.Commas(f.MismatchedDims)
		}
		if f.ZoneMismatch != nil { // the hour read is not the one being written: not 0
			hour = "? zone"
		}
		spark := ""
		if n := len(f.Series.Hours); n > 0 {
			spark = format.Sparkline(f.Series.Hours[max(n-24, 0):])
		}
		t.rows = append(t.rows, []string{f.Family, cells.Count(f.Keys, f.KeysEstimate), hour, cells.Rate(f, live, ""), today,
			problemCell(f.Health.NoTTL), mism, spark})
	}
	t.selected = v.rows.sel
	if len(t.rows) == 0 && len(snap.Counters) == 0 { // none configured: no totals of nothing
		return newPlaceholder(v.c, countersText).render(w, h)
	}
	if len(t.rows) == 0 {
		return st.Muted.Render(fmt.Sprintf("No family matches %q (esc clears the filter).", v.filter))
	}
	lines := t.render(w)
	from, to := v.rows.window(h - 2)
	out := append([]string{lines[0]}, lines[1+from:1+to]...)
	out = append(out, "", st.Muted.Render("enter opens a family · i injects a burst into it · t toggles steady test traffic"))
	// A tall terminal shows the selected family below the table.
	if rest := h - len(out) - 1; rest >= 14 && v.preview != nil && v.preview.f != nil {
		out = append(out, "", v.preview.detail(w, rest))
	}
	return strings.Join(out, "\n")
}
