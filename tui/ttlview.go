package tui

import (
	"fmt"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// ttlView lists each family's unhealthy keys, with examples of the selected one.
type ttlView struct {
	drillView
	rows list[string] // the families shown: those whose name or an example matches the filter
}

func newTTLView(c *console) *ttlView {
	v := &ttlView{rows: list[string]{id: func(name string) string { return name }}}
	v.drillView = drillView{c: c, build: v.build, reset: v.rows.reset}
	return v
}

func (v *ttlView) build() {
	var names []string
	if snap := v.c.snapshot(); snap != nil {
		for _, f := range snap.Counters {
			if matches(v.filter, f.Family) || anyExample(f, v.filter) {
				names = append(names, f.Family)
			}
		}
	}
	v.rows.set(names)
}

func (v *ttlView) family() string {
	name, _ := v.rows.selected()
	return name
}

func (v *ttlView) bindings() []binding { return moveBindings(v.c.keys, &v.rows, nil) }

func (v *ttlView) render(w, h int) string {
	st := v.c.styles
	snap := v.c.snapshot()
	if snap == nil {
		return st.Muted.Render("Waiting for the first sweep's first page…")
	}
	name, ok := v.rows.selected()
	if !ok && len(snap.Counters)+len(snap.Locks) == 0 { // nothing whose TTLs it checks
		return newPlaceholder(v.c, ttlText).render(w, h)
	}
	if !ok {
		return st.Muted.Render(fmt.Sprintf("No family or key matches %q (esc clears the filter).", v.filter))
	}
	h0 := snap.TTLHealth
	lines := v.healthTable(snap, v.rows.rows).render(w)
	lines = append(lines, v.exampleLines(snap.Family(name), w)...)
	lines = append(lines, v.lockLines(snap.Locks, w)...)
	if note := h0.MemoryNote; note != "" {
		lines = append(lines, st.Muted.Render("memory: "+note))
	}
	lines = append(lines, "")
	if v.c.opt.Actions != nil {
		lines = append(lines, st.Muted.Render(fmt.Sprintf("r repairs the keys without a TTL (%s in the last sweep): a dry run first, then confirm", format.Commas(h0.NoTTL.Keys))))
	} else {
		lines = append(lines, st.Muted.Render("r (repair) is off: "+v.c.opt.ReadOnlyWhy))
	}
	if len(lines) > h { // keep the table's head and the footer hint; cut examples
		lines = append(lines[:h-1], lines[len(lines)-1])
	}
	return strings.Join(lines, "\n")
}

// healthTable has a row of problem counts for each visible family, the selected one marked, and
// a last row that adds up all families.
func (v *ttlView) healthTable(snap *snapshot.Snapshot, visible []string) *table {
	t := &table{styles: v.c, cols: []column{
		{title: "FAMILY", flex: true}, {title: "KEYS", right: true}, {title: "NO TTL", right: true},
		{title: "OVER RET", right: true}, {title: "EXPIRED", right: true}, {title: "WRONG TYPE", right: true},
		{title: "NOT INT", right: true}, {title: "~MEMORY", right: true},
	}}
	for _, name := range visible {
		f := snap.Family(name)
		var bytes int64
		sampled := false
		for _, p := range f.Health.Problems() {
			bytes += p.Bytes
			sampled = sampled || p.Sampled > 0
		}
		mem := "-"
		if sampled {
			mem = format.BytesIEC(bytes)
		}
		h := f.Health
		t.rows = append(t.rows, []string{f.Family, cells.Count(f.Keys, f.KeysEstimate), problemCell(h.NoTTL), problemCell(h.OverRetention),
			problemCell(h.ExpiredButPresent), problemCell(h.WrongType), problemCell(h.NotInteger), mem})
	}
	t.selected = v.rows.sel
	h0 := snap.TTLHealth
	var familyKeys int64
	for _, f := range snap.Counters {
		familyKeys += f.Keys
	}
	all := format.Commas(familyKeys)
	if !snap.Scan.Complete {
		all = partialMark(snap) + format.Short(float64(familyKeys))
	}
	t.rows = append(t.rows, []string{"all families", all, problemCell(h0.NoTTL),
		problemCell(h0.OverRetention), problemCell(h0.ExpiredButPresent), problemCell(h0.WrongType), problemCell(h0.NotInteger), ""})
	return t
}

// problemCell is a problem's count of keys, an estimate while the sweep is under way.
func problemCell(p snapshot.Problem) string { return cells.Count(p.Keys, p.KeysEstimate) }

// exampleLines lists the examples of f's problems that match the filter, under a title, or says
// there are none.
func (v *ttlView) exampleLines(f *snapshot.FamilyStats, w int) []string {
	st := v.c.styles
	lines := []string{"", st.Title.Render("Examples in "+f.Family) + st.Muted.Render("  (names escaped; ↑/↓ picks the family)")}
	any := false
	for _, p := range f.Health.Problems() {
		for _, ex := range p.Examples {
			if !matches(v.filter, f.Family, ex.Key) {
				continue
			}
			any = true
			lines = append(lines, fit(st.Warn.Render(fmt.Sprintf("%-19s", strings.ReplaceAll(p.Name, "_", " ")))+" "+ex.Key+"  "+
				st.Muted.Render(v.exampleNote(p.Name, ex)), w))
		}
	}
	switch {
	case any:
	case f.KeysEstimate != nil: // a sweep under way has not seen every key
		lines = append(lines, st.Muted.Render("none so far: every key the first sweep has seen expires on time"))
	default:
		lines = append(lines, st.Good.Render("none: every key of this family expires on time"))
	}
	return lines
}

// lockLines says how many locks of each pattern are held and how many have no TTL, warning of
// those, with a few holders.
func (v *ttlView) lockLines(locks []snapshot.Lock, w int) []string {
	st := v.c.styles
	var lines []string
	for _, l := range locks {
		line := fmt.Sprintf("locks %s: %s held, %s without a TTL", l.Name, format.Commas(l.Held), format.Commas(l.NoTTL))
		if l.NoTTL > 0 {
			lines = append(lines, "", st.Warn.Render(line+" (held forever: the holder died between SETNX and PEXPIRE)"))
		} else {
			lines = append(lines, "", line)
		}
		for _, ex := range l.Examples[:min(len(l.Examples), 3)] {
			age := "age unknown"
			if ex.AgeMS >= 0 {
				age = "taken " + format.Millis(ex.AgeMS) + " ago"
			}
			lines = append(lines, fit("  "+ex.Key+"  "+st.Muted.Render("held by "+ex.Token+", TTL "+format.Millis(ex.TTLMS)+", "+age), w))
		}
	}
	return lines
}

func (v *ttlView) exampleNote(problem string, ex snapshot.Example) string {
	due := ex.ExpireAt.In(v.c.opt.Location).Format("01-02 15:04")
	var s string
	switch problem {
	case "no_ttl":
		s = "no TTL, due " + due
	case "over_retention":
		s = fmt.Sprintf("TTL %s, due %s", format.Millis(ex.TTLMS), due)
	case "expired_but_present":
		s = "was due " + due
	case "wrong_type":
		s = "a " + ex.Type
	case "not_integer":
		s = `value "` + ex.Value + `"` // escaped already: %q would escape it again
	}
	if ex.Bytes > 0 {
		s += ", " + format.BytesIEC(ex.Bytes)
	}
	return s
}

func anyExample(f snapshot.FamilyStats, filter string) bool {
	if filter == "" {
		return true
	}
	for _, p := range f.Health.Problems() {
		for _, ex := range p.Examples {
			if matches(filter, ex.Key) {
				return true
			}
		}
	}
	return false
}
