package tui

// Cell layout for the console: fitting styled text to columns, and the bar chart. Numbers and
// durations are rendered by internal/format, which the text report shares.

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// ago is Age for what cannot be negative but may read so across clocks: it shows 0s instead.
func ago(d time.Duration) string { return format.Age(max(d, 0)) }

// barChart draws v as vertical bars height rows tall, one column per value, scaled to the
// largest; rows are returned top first.
func barChart(v []int64, height int) []string {
	blocks := []rune(" ▁▂▃▄▅▆▇█")
	var m int64
	for _, x := range v {
		m = max(m, x)
	}
	rows := make([]string, height)
	for r := range height {
		var b strings.Builder
		for _, x := range v {
			eighths := 0
			if m > 0 && x > 0 {
				eighths = max(1, int(float64(x)/float64(m)*float64(height*8)+0.5))
			}
			level := eighths - (height-1-r)*8 // eighths filling this row
			b.WriteRune(blocks[min(max(level, 0), 8)])
		}
		rows[r] = b.String()
	}
	return rows
}

// fit pads or cuts s (which may hold styles) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := lipgloss.Width(s)
	if sw == w {
		return s
	}
	if sw < w {
		return s + strings.Repeat(" ", w-sw)
	}
	return truncate(s, w)
}

// truncate cuts plain or styled s to w cells, ending with an ellipsis when it cut.
func truncate(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if w <= 1 {
		return strings.Repeat("…", max(w, 0))
	}
	return ansiTruncate(s, w-1) + "…"
}

// right pads s on the left to w cells.
func right(s string, w int) string {
	sw := lipgloss.Width(s)
	if sw >= w {
		return truncate(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// ansiTruncate cuts s to w cells, keeping its styles well formed.
func ansiTruncate(s string, w int) string { return ansi.Truncate(s, w, "") }

// stripStyles removes every escape sequence from s (for greying stale data).
func stripStyles(s string) string { return ansi.Strip(s) }
