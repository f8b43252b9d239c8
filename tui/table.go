package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// column is one table column: right-aligned for numbers; flex columns share the spare width.
type column struct {
	title    string
	right    bool
	flex     bool
	optional bool // dropped first when the width is short (a sparkline, a key beside a name)
}

// table lays rows of plain cells out in width cells: every column as wide as its widest cell,
// the flex ones cut when the width is short, and the selected row highlighted.
type table struct {
	cols     []column
	rows     [][]string
	selected int // -1 for none
	styles   *console
}

func (t *table) render(width int) []string {
	n := len(t.cols)
	widths := make([]int, n)
	for i, c := range t.cols {
		widths[i] = lipgloss.Width(c.title)
	}
	for _, r := range t.rows {
		for i := range min(len(r), n) {
			widths[i] = max(widths[i], lipgloss.Width(r[i]))
		}
	}
	total := 2 * (n - 1)
	for _, w := range widths {
		total += w
	}
	// Too wide: drop optional columns first, then cut flex ones (to 8 cells at least), then drop
	// columns from the right.
	dropped := make([]bool, n)
	for i := n - 1; i >= 0 && total > width; i-- {
		if t.cols[i].optional {
			dropped[i] = true
			total -= widths[i] + 2
		}
	}
	for i := range n {
		if over := total - width; over > 0 && t.cols[i].flex && widths[i] > 8 {
			cut := min(over, widths[i]-8)
			widths[i] -= cut
			total -= cut
		}
	}
	shown := n
	for shown > 1 && total > width {
		shown--
		if !dropped[shown] {
			total -= widths[shown] + 2
		}
	}
	line := func(cells []string) string {
		parts := make([]string, 0, shown)
		for i := range shown {
			if dropped[i] {
				continue
			}
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			if t.cols[i].right {
				parts = append(parts, right(cell, widths[i]))
			} else {
				parts = append(parts, fit(cell, widths[i]))
			}
		}
		return strings.Join(parts, "  ")
	}
	st := t.styles.styles
	titles := make([]string, n)
	for i, c := range t.cols {
		titles[i] = c.title
	}
	out := []string{st.TableHead.Render(line(titles))}
	for i, r := range t.rows {
		l := line(r)
		if i == t.selected {
			out = append(out, st.Selected.Render(fit(l, min(width, total))))
		} else {
			out = append(out, l)
		}
	}
	return out
}

// matches reports whether any of the texts holds filter (case-insensitive).
func matches(filter string, texts ...string) bool {
	if filter == "" {
		return true
	}
	f := strings.ToLower(filter)
	for _, t := range texts {
		if strings.Contains(strings.ToLower(t), f) {
			return true
		}
	}
	return false
}

// fits reports whether all the table's columns fit in width cells at their widest cells, none
// cut or dropped.
func (t *table) fits(width int) bool {
	total, n := 0, 0
	for i, c := range t.cols {
		w := lipgloss.Width(c.title)
		for _, r := range t.rows {
			if i < len(r) {
				w = max(w, lipgloss.Width(r[i]))
			}
		}
		total, n = total+w, n+1
	}
	return total+2*(n-1) <= width
}
