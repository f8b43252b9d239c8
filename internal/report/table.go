package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Table aligns columns of text; a header starting with ">" is right-aligned.
type Table struct {
	heads []string
	right []bool
	rows  [][]string
}

// NewTable starts a table with its column headers.
func NewTable(heads ...string) *Table {
	t := &Table{}
	for _, h := range heads {
		t.right = append(t.right, strings.HasPrefix(h, ">"))
		t.heads = append(t.heads, strings.TrimPrefix(h, ">"))
	}
	return t
}

// Row adds a row; it may have fewer cells than there are columns.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write prints the table, every line indented by indent.
func (t *Table) Write(out io.Writer, indent string) {
	widths := make([]int, len(t.heads))
	for _, r := range append([][]string{t.heads}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range append([][]string{t.heads}, t.rows...) {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.right[i] {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
}
