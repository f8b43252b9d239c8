package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The Uniques view's Bloom filters: one table of every [[bloom]] entry's filters, below the unique
// families. An entry is named on its first row. The selection runs on from the uniques into it. A
// line under it says the selected filter's intervals and notes. Enter opens the filter's level,
// with every figure in full.

// uniqRow is a unique family's row or a Bloom filter's, with the entry it belongs to.
type uniqRow struct {
	u     *snapshot.Unique
	bloom *snapshot.Bloom
	f     *snapshot.BloomFilter
}

func (r uniqRow) name() string {
	if r.u != nil {
		return "unique " + r.u.Name
	}
	return "bloom " + r.bloom.Name + " " + r.f.Key
}

// bloomRows are the Bloom filters of s the filter text keeps (by entry or key), entry by entry.
func bloomRows(s *snapshot.Snapshot, filter string) []uniqRow {
	var rows []uniqRow
	for i := range s.Blooms {
		b := &s.Blooms[i]
		for j := range b.Filters {
			if matches(filter, b.Name, b.Filters[j].Key) {
				rows = append(rows, uniqRow{bloom: b, f: &b.Filters[j]})
			}
		}
	}
	return rows
}

// bloomLines are the Bloom filters' section in h lines. They are its title, the table, what each
// entry could not read, the selected filter's detail and the hint. The table is a window of its
// rows that keeps the selection in view. The filters start at row first.
func (v *uniques) bloomLines(s *snapshot.Snapshot, first, w, h int) []string {
	st := v.c.styles
	rows, sel := v.rows.rows[first:], v.rows.sel-first
	var tail []string
	for _, b := range s.Blooms {
		if !matches(v.filter, b.Name) && !hasRowOf(rows, &b) {
			continue
		}
		if len(b.Filters) == 0 {
			tail = append(tail, st.Muted.Render(fit(b.Name+": no filter among the keys its pattern matched", w)))
		}
		if u := unreadableText(b); u != "" {
			tail = append(tail, wrapStyled(st.Warn, u, w)...)
		}
		if b.More {
			tail = append(tail, st.Warn.Render(fit(fmt.Sprintf("%s: only the first %d filters were read; its pattern matches more", b.Name, len(b.Filters)), w)))
		}
	}
	if r, ok := v.rows.selected(); ok && r.f != nil {
		tail = append(append(tail, ""), v.bloomDetail(*r.f, w)...)
	}
	head := []string{"", st.Title.Render("Bloom filters")}
	switch {
	case len(rows) == 0 && v.filter != "":
		return append(append(head, st.Muted.Render(fit(fmt.Sprintf("No Bloom filter matches %q.", v.filter), w))), tail...)
	case len(rows) == 0: // each entry's line says it found none
		return append(head, tail...)
	}
	tail = append(tail, st.Muted.Render(fit("enter opens the selected filter: every figure with its interval, and its notes", w)))
	from, to := window(len(rows), max(sel, 0), max(h-len(head)-1-len(tail), 1))
	if from > 0 || to < len(rows) {
		head[1] += st.Muted.Render(fmt.Sprintf("  %d–%d of %d", from+1, to, len(rows)))
	}
	t := v.bloomTable(rows, from, to, true)
	if !t.fits(w) { // the intervals give way to the other columns; the detail line keeps them
		t = v.bloomTable(rows, from, to, false)
	}
	if sel >= from && sel < to {
		t.selected = sel - from
	}
	return append(append(head, t.render(w)...), tail...)
}

// hasRowOf reports whether rows hold a filter of b.
func hasRowOf(rows []uniqRow, b *snapshot.Bloom) bool {
	for _, r := range rows {
		if r.bloom.Name == b.Name {
			return true
		}
	}
	return false
}

// bloomTable is the table of rows[from:to], most telling first: a narrow terminal drops the
// optional columns (memory, sub-filters, then the entry's), then columns from the right. wide puts
// the elements' interval and coverage in their cells.
func (v *uniques) bloomTable(rows []uniqRow, from, to int, wide bool) *table {
	t := &table{styles: v.c, selected: -1, cols: []column{
		{title: "BLOOM", optional: true}, {title: "FILTER", flex: true}, {title: "FALSE POS/TARGET", right: true}, {title: "FILL", right: true},
		{title: "ELEMENTS", right: true}, {title: "ADDED", right: true}, {title: "LAYOUT"},
		{title: "SUB-FILTERS", right: true, optional: true}, {title: "MEMORY", right: true, optional: true},
	}}
	for i := from; i < to; i++ {
		r, f := rows[i], rows[i].f
		entry := "" // named on its first row on screen
		if i == from || rows[i-1].bloom.Name != r.bloom.Name {
			entry = r.bloom.Name
		}
		fp := falsePosCell(*f)
		if f.OverTarget {
			fp = v.c.styles.Bad.Render(fp)
		}
		t.rows = append(t.rows, []string{entry, f.Key, fp, shareCell(f.Fill), elementsCell(f.Elements, wide),
			format.CommasOf(f.Added, format.NotKept), bloomLayout(f.Layout), subFiltersCell(f.SubFilters), bytesOf(f.MemoryBytes)})
	}
	return t
}

// bytesOf is a size in bytes, or "—" when it was not read.
func bytesOf(n *int64) string {
	if n == nil {
		return format.NotKept
	}
	return format.BytesIEC(*n)
}

// bloomDetail are the lines under the table for the selected filter: its estimates' intervals
// and the bits they rest on, why a figure is "—" (its first note), and its target passed.
func (v *uniques) bloomDetail(f snapshot.BloomFilter, w int) []string {
	st := v.c.styles
	var lines []string
	if t := intervalsText(f); t != "" {
		lines = append(lines, wrapStyled(st.Muted, t, w)...)
	}
	missing := f.Added == nil || f.Elements == nil || f.Fill == nil || f.FalsePositive == nil || f.TargetRate == nil || f.MemoryBytes == nil
	note := st.Muted
	if missing {
		note = st.Warn
	}
	switch {
	case len(f.Notes) > 1:
		lines = append(lines, wrapStyled(note, fmt.Sprintf("%s (and %s: enter)", f.Notes[0], format.Count(len(f.Notes)-1, "more note", "more notes")), w)...)
	case len(f.Notes) == 1:
		lines = append(lines, wrapStyled(note, f.Notes[0], w)...)
	case missing:
		lines = append(lines, note.Render(fit("— marks a figure the sweep did not read; it gave no reason", w)))
	}
	if f.OverTarget {
		lines = append(lines, wrapStyled(st.Bad, "past its target: "+overTargetText(f), w)...)
	}
	return lines
}

// wrapStyled is text broken into lines of at most w cells, each in style.
func wrapStyled(style lipgloss.Style, text string, w int) []string {
	lines := wrapWords(text, max(w, 8))
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

// overTargetText says how far a filter's false-positive rate is past its target.
func overTargetText(f snapshot.BloomFilter) string {
	if f.FalsePositive == nil || f.TargetRate == nil { // the scanner sets OverTarget from both
		return "its false-positive rate is past the rate it was sized for"
	}
	return fmt.Sprintf("an element never added reads as held %s of the time, against the %s it was sized for",
		shareCell(f.FalsePositive), percent(*f.TargetRate))
}

// bloomLevel is one Bloom filter of the last Snapshot with every figure in full and its notes;
// each poll brings it again, so it reads nothing itself.
type bloomLevel struct {
	c               *console
	entry, key, raw string
	f               *snapshot.BloomFilter // nil when the last Snapshot has it no more
}

func newBloomLevel(c *console, entry string, f snapshot.BloomFilter) *bloomLevel {
	l := &bloomLevel{c: c, entry: entry, key: f.Key, raw: f.Raw, f: &f}
	l.sync()
	return l
}

func (l *bloomLevel) crumb() string       { return crumbText(l.key) }
func (l *bloomLevel) bindings() []binding { return nil }
func (l *bloomLevel) setFilter(string)    {}
func (l *bloomLevel) filterText() string  { return "" }
func (l *bloomLevel) filterable() bool    { return false }
func (l *bloomLevel) refresh() tea.Cmd    { return nil } // the Snapshot's; each poll brings it

// sync finds the filter in the last Snapshot, by its entry and key.
func (l *bloomLevel) sync() {
	l.f = nil
	s := l.c.status.Snapshot
	if s == nil {
		return
	}
	if b := named(s.Blooms, l.entry, func(b snapshot.Bloom) string { return b.Name }); b != nil {
		for i, f := range b.Filters {
			if f.Key == l.key && f.Raw == l.raw {
				l.f = &b.Filters[i]
			}
		}
	}
}

func (l *bloomLevel) render(w, h int) string {
	st := l.c.styles
	lines := []string{fit(st.Title.Render(l.entry)+"  "+l.key, w)}
	f := l.f
	if f == nil {
		return strings.Join(append(lines, st.Muted.Render(fit("the last sweep has no such filter: deleted, or its pattern no longer matches it", w))), "\n")
	}
	lines = append(lines, "")
	for _, fl := range bloomFields(*f) {
		lines = append(lines, fit(field(fl[0], fl[1]), w))
	}
	if f.OverTarget {
		lines = append(lines, wrapStyled(st.Bad, "past its target: "+overTargetText(*f), w)...)
	}
	if len(f.Notes) > 0 {
		lines = append(lines, "", st.TableHead.Render("NOTES"))
		for _, n := range f.Notes {
			for i, l := range wrapWords(n, max(w-2, 8)) {
				mark := "• "
				if i > 0 {
					mark = "  "
				}
				lines = append(lines, st.Muted.Render(mark+l))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// bloomFields are a filter's labels and values, every figure in full.
func bloomFields(f snapshot.BloomFilter) [][2]string {
	layout := f.Layout
	if l, ok := bloomLayouts[f.Layout]; ok {
		layout = l.kept
	}
	unread := format.NotKept + ": not read (the notes say why)"
	expansion, capacity, subs := unread, unread, unread
	switch {
	case f.Expansion == nil:
	case *f.Expansion > 0:
		expansion = fmt.Sprintf("%d: each new sub-filter holds %d× the last one's elements", *f.Expansion, *f.Expansion)
	default:
		expansion = "0: it does not scale"
	}
	if f.Capacity != nil {
		capacity = format.Count(*f.Capacity, "element", "elements") + " in its first sub-filter"
	}
	if f.SubFilters != nil {
		subs = strconv.Itoa(*f.SubFilters)
	}
	added := format.NotKept + ": not read (the notes say why)"
	if f.Added != nil {
		added = format.Commas(*f.Added) + ", its writers' count of adds of a new element"
	}
	target := format.NotKept + ": not read (the notes say why)"
	if f.TargetRate != nil {
		target = percent(*f.TargetRate)
	}
	memory := format.NotKept + ": not read (the notes say why)"
	if f.MemoryBytes != nil {
		memory = format.BytesIEC(*f.MemoryBytes) + " (MEMORY USAGE of its keys)"
	}
	ttl := "none"
	if f.TTLMS >= 0 {
		ttl = format.Millis(f.TTLMS)
	}
	return [][2]string{
		{"layout", layout},
		{"capacity", capacity},
		{"expansion", expansion},
		{"sub-filters", subs},
		{"added", added},
		{"elements", figureText(f.Elements, whole)},
		{"fill", figureText(f.Fill, percent)},
		{"false positives now", figureText(f.FalsePositive, percent)},
		{"target", target},
		{"memory", memory},
		{"TTL", ttl},
	}
}
