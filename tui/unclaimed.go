package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
)

// unclaimed lists the groups of keys no entry claims, as the sweep finds them, with the selected
// group's evidence, examples and proposed entry; a adds that entry to the session, w writes the
// proposal to a file (proposal.go). Patterns, evidence and entries are built from key names, so
// they go through discover.Printable like the examples the scanner escaped.
type unclaimed struct {
	drillView
	// rows are the groups that pass the filter. Groups move as a sweep finds more keys, so the
	// selection follows the group (its pattern), not its row.
	rows list[discover.Group]
}

func newUnclaimed(c *console) *unclaimed {
	v := &unclaimed{rows: list[discover.Group]{id: func(g discover.Group) string { return g.Pattern }}}
	v.drillView = drillView{c: c, build: v.build, reset: v.rows.reset}
	return v
}

// result is the groups on screen and where they come from. While the first sweep is under way, it
// is what that sweep has found so far. Afterwards it is the last complete sweep's. (A sweep under
// way has seen only part of the keyspace, so its counts would read low.)
func (v *unclaimed) result() (discover.Result, string) {
	st := v.c.status
	seen := format.Count(st.Sweep.KeysSeen, "key", "keys")
	if st.Snapshot == nil {
		return st.Unclaimed, "first sweep under way: " + seen + " seen; the groups grow as it goes"
	}
	s := st.Snapshot
	return s.Unclaimed, fmt.Sprintf("last complete sweep: %s, %s ago · sweep under way: %s seen",
		format.Count(s.Scan.KeysSeen, "key", "keys"), ago(v.c.now().Sub(s.TakenAt)), seen)
}

// proposal is what w writes: the groups on screen, and the sweep they come from.
func (v *unclaimed) proposal() Proposal {
	st := v.c.status
	r, _ := v.result()
	if s := st.Snapshot; s != nil {
		return Proposal{Result: r, TakenAt: s.TakenAt, Elapsed: time.Duration(s.Scan.DurationMS) * time.Millisecond,
			KeysSeen: s.Scan.KeysSeen, Complete: true}
	}
	return Proposal{Result: r, TakenAt: st.Sweep.Started, Elapsed: v.c.now().Sub(st.Sweep.Started), KeysSeen: st.Sweep.KeysSeen}
}

// build sets the rows: the groups that pass the filter.
func (v *unclaimed) build() {
	r, _ := v.result()
	var out []discover.Group
	for _, g := range r.Groups {
		if matches(v.filter, append([]string{g.Pattern, string(g.Kind)}, g.Examples...)...) {
			out = append(out, g)
		}
	}
	v.rows.set(out)
}

// selected is the selected group; nil when none is shown.
func (v *unclaimed) selected() *discover.Group {
	if g, ok := v.rows.selected(); ok {
		return &g
	}
	return nil
}

func (v *unclaimed) bindings() []binding { return moveBindings(v.c.keys, &v.rows, nil) }

func (v *unclaimed) render(w, h int) string {
	st := v.c.styles
	r, from := v.result()
	lines := append([]string{st.Muted.Render(fit(from, w))}, v.summary(r, w)...)
	groups := v.rows.rows
	switch {
	case len(r.Groups) == 0 && v.c.status.Snapshot == nil:
		return strings.Join(append(lines, "", st.Muted.Render("No unclaimed keys found yet.")), "\n")
	case len(r.Groups) == 0:
		return strings.Join(append(lines, "", st.Good.Render("No unclaimed keys: an entry of the config claims every key the sweep saw.")), "\n")
	case len(groups) == 0:
		return strings.Join(append(lines, "", st.Muted.Render(fmt.Sprintf("No group matches %q (esc clears the filter).", v.filter))), "\n")
	}
	t := &table{styles: v.c, cols: []column{
		{title: "PATTERN", flex: true}, {title: "KIND"}, {title: "KEYS", right: true}, {title: "MEMORY", right: true},
		{title: "CONFIDENCE"}, {title: "ENTRY"},
	}}
	first, last := v.rows.window(min(len(groups), max(3, (h-4)/3)))
	for _, g := range groups[first:last] {
		t.rows = append(t.rows, []string{discover.Printable(g.Pattern), string(g.Kind), format.Commas(g.Keys), bytesText(g.Bytes),
			string(g.Confidence), v.entryCell(g)})
	}
	t.selected = v.rows.sel - first
	lines = append(lines, t.render(w)...)
	if n := len(groups) - (last - first); n > 0 {
		lines = append(lines, st.Muted.Render(format.Count(n, "more group", "more groups")+": ↑/↓ scroll, / filters"))
	}
	return strings.Join(append(append(lines, ""), v.detail(groups[v.rows.sel], w)...), "\n")
}

// summary is the totals (keys, groups, memory), and what the memory estimate rests on.
func (v *unclaimed) summary(r discover.Result, w int) []string {
	if r.Keys == 0 && len(r.Groups) == 0 { // nothing unclaimed: no memory to speak of
		return []string{fit("0 unclaimed keys", w)}
	}
	text := fmt.Sprintf("%s in %s · memory %s", format.Count(r.Keys, "unclaimed key", "unclaimed keys"), format.Count(len(r.Groups), "group", "groups"), memoryText(r))
	if r.Sampled > 0 {
		text += " · " + format.Count(r.Sampled, "key", "keys") + " sampled"
	}
	lines := []string{fit(text, w)}
	if r.Bytes != nil && r.BytesNote != "" {
		for _, l := range strings.Split(ansi.Wordwrap("memory "+discover.Printable(r.BytesNote), w, ""), "\n") {
			lines = append(lines, v.c.styles.Muted.Render(fit(l, w)))
		}
	}
	return lines
}

// memoryText is the estimated memory of the unclaimed keys, or "unknown" and why.
func memoryText(r discover.Result) string {
	if r.Bytes != nil {
		return "~" + format.BytesIEC(*r.Bytes)
	}
	if r.BytesNote != "" {
		return "unknown (" + discover.Printable(r.BytesNote) + ")"
	}
	return "unknown"
}

// bytesText is a group's estimated memory, or ? when no sample's was read.
func bytesText(b *int64) string {
	if b == nil {
		return format.Unknown
	}
	return "~" + format.BytesIEC(*b)
}

// entryCell says what the group's entry is, or what became of it in this session.
func (v *unclaimed) entryCell(g discover.Group) string {
	if cl, ok := v.c.claims[g.Pattern]; ok {
		return cl.state.String()
	}
	if g.Entry == nil {
		return format.NotKept
	}
	return g.Entry.Table
}

// detail is the selected group: what it is, what a does with it, its entry, evidence and examples.
func (v *unclaimed) detail(g discover.Group, w int) []string {
	st := v.c.styles
	head := fmt.Sprintf("%s · %s · %d sampled · %s confidence", format.Count(g.Keys, "key", "keys"), bytesText(g.Bytes), g.Sampled, g.Confidence)
	lines := []string{fit(st.Title.Render(discover.Printable(g.Pattern))+"  "+st.Text.Render(string(g.Kind))+st.Muted.Render("  "+head), w), v.hint(g, w)}
	var entry []string
	if g.Entry != nil {
		entry = append(entry, st.TableHead.Render("PROPOSED ENTRY"))
		for _, l := range strings.Split(strings.TrimRight(g.Entry.TOML(), "\n"), "\n") {
			entry = append(entry, "  "+discover.Printable(l))
		}
	}
	side := w >= 120 && entry != nil
	ew := w
	if side {
		ew = w - max(lipgloss.Width(strings.Join(entry, "\n")), w/3) - 3
	}
	evidence := []string{st.TableHead.Render("EVIDENCE")}
	for _, e := range g.Evidence {
		for i, l := range strings.Split(ansi.Wordwrap(discover.Printable(e), ew-4, ""), "\n") {
			if i == 0 {
				evidence = append(evidence, "  • "+l)
			} else {
				evidence = append(evidence, "    "+l)
			}
		}
	}
	evidence = append(evidence, st.TableHead.Render("EXAMPLES")+st.Muted.Render("  (names escaped)"))
	for _, ex := range g.Examples {
		evidence = append(evidence, "  "+discover.Printable(ex))
	}
	if !side {
		return append(append(lines, entry...), evidence...)
	}
	lw := w - ew - 3
	for i := range max(len(entry), len(evidence)) {
		var l, r string
		if i < len(entry) {
			l = entry[i]
		}
		if i < len(evidence) {
			r = evidence[i]
		}
		lines = append(lines, fit(l, lw)+st.Muted.Render(" │ ")+fit(r, ew))
	}
	return lines
}

// hint says what a does with the group, or why it cannot.
func (v *unclaimed) hint(g discover.Group, w int) string {
	st := v.c.styles
	if cl, ok := v.c.claims[g.Pattern]; ok {
		switch cl.state {
		case claimAdded:
			return st.Good.Render(fit(cl.text, w))
		case claimRefused:
			return st.Bad.Render(fit("not added: "+cl.text, w))
		}
		return st.Muted.Render(fit("adding to the session…", w))
	}
	switch {
	case g.Entry == nil:
		return st.Muted.Render(fit("nothing to add: "+noEntryWhy(g.Kind), w))
	case v.c.opt.Session == nil:
		return st.Muted.Render(fit("adding and writing are off in this console", w))
	case g.Confidence == discover.Low:
		return st.Warn.Render(fit("low confidence, check the evidence: a asks first · w: write a proposal file", w))
	}
	return st.Muted.Render(fit("a: add to this session, counted from the next sweep · w: write a proposal file", w))
}

// noEntryWhy says why a group of kind has no entry.
func noEntryWhy(k discover.Kind) string {
	switch k {
	case discover.KindOther:
		return "hourglass reads no structure from these keys (caches, sessions, records)"
	case discover.KindUndecided:
		return "the evidence does not tell what these keys are"
	}
	return "no entry can read these keys as they are named (see the evidence)"
}
