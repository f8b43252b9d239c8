package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"hourglass/internal/format"
	"hourglass/scanner"
)

// ttlView lists each family's unhealthy keys, with examples of the selected one.
type ttlView struct {
	c      *common
	sel    int
	filter string
}

// visible lists the families the table shows: those whose name or an example matches the filter.
func (v *ttlView) visible() []string {
	var names []string
	if snap := v.c.status.Snapshot; snap != nil {
		for _, f := range snap.Counters {
			if matches(v.filter, f.Family) || anyExample(f, v.filter) {
				names = append(names, f.Family)
			}
		}
	}
	return names
}

func newTTLView(c *common) *ttlView { return &ttlView{c: c} }

func (v *ttlView) filterable() bool      { return true }
func (v *ttlView) setFilter(text string) { v.filter, v.sel = text, 0 }
func (v *ttlView) back() bool            { return false }
func (v *ttlView) crumbs() []string      { return nil }
func (v *ttlView) filterText() string    { return v.filter }
func (v *ttlView) refresh() tea.Cmd      { return nil }

func (v *ttlView) family() string {
	if vis := v.visible(); v.sel < len(vis) {
		return vis[v.sel]
	}
	return ""
}

func (v *ttlView) key(msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch {
	case key.Matches(msg, v.c.keys.Up):
		v.sel = max(v.sel-1, 0)
	case key.Matches(msg, v.c.keys.Down):
		v.sel = min(v.sel+1, max(len(v.visible())-1, 0))
	default:
		return false, nil
	}
	return true, nil
}

func (v *ttlView) render(w, h int) string {
	st := v.c.styles
	snap := v.c.status.Snapshot
	if snap == nil {
		return st.Muted.Render("Waiting for the first sweep to complete…")
	}
	visible := v.visible()
	if len(visible) == 0 {
		return st.Muted.Render(fmt.Sprintf("No family or key matches %q (esc clears the filter).", v.filter))
	}
	v.sel = min(v.sel, len(visible)-1)
	h0 := snap.TTLHealth
	lines := v.healthTable(snap, visible).render(w)
	lines = append(lines, v.exampleLines(snap.Family(visible[v.sel]), w)...)
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
func (v *ttlView) healthTable(snap *scanner.Snapshot, visible []string) *table {
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
		t.rows = append(t.rows, []string{f.Family, format.Commas(f.Keys), format.Commas(f.TTL.NoTTL), format.Commas(f.TTL.OverRetention),
			format.Commas(f.TTL.ExpiredButPresent), format.Commas(f.WrongType), format.Commas(f.NotInteger), mem})
	}
	t.selected = v.sel
	h0 := snap.TTLHealth
	var familyKeys int64
	for _, f := range snap.Counters {
		familyKeys += f.Keys
	}
	t.rows = append(t.rows, []string{"all families", format.Commas(familyKeys), format.Commas(h0.NoTTL.Keys),
		format.Commas(h0.OverRetention.Keys), format.Commas(h0.ExpiredButPresent.Keys), format.Commas(h0.WrongType.Keys), format.Commas(h0.NotInteger.Keys), ""})
	return t
}

// exampleLines lists the examples of f's problems that match the filter, under a title, or says
// there are none.
func (v *ttlView) exampleLines(f *scanner.FamilyStats, w int) []string {
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
	if !any {
		lines = append(lines, st.Good.Render("none: every key of this family expires on time"))
	}
	return lines
}

// lockLines says how many locks of each pattern are held and how many have no TTL, warning of
// those, with a few holders.
func (v *ttlView) lockLines(locks []scanner.Lock, w int) []string {
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

func (v *ttlView) exampleNote(problem string, ex scanner.Example) string {
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

func anyExample(f scanner.FamilyStats, filter string) bool {
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
