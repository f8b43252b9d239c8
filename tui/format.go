package tui

// The number and series formats here are the console's, and the text report of `hourglass
// snapshot` uses them too, so both faces of a Snapshot read alike.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Commas renders n with thousands separators: 1234567 -> "1,234,567".
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Rate renders a per-second rate: two decimals below 10, whole numbers with separators above.
func Rate(r float64) string {
	switch {
	case r == 0:
		return "0"
	case r < 10 && r > -10:
		return fmt.Sprintf("%.2f", r)
	default:
		return Commas(int64(r + 0.5))
	}
}

// BytesIEC renders a byte count: 1536 -> "1.5 KiB".
func BytesIEC(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Age renders a duration for a person: "3s", "4m10s", "2h05m", "3d04h", with a "-" in front when
// it is negative.
func Age(d time.Duration) string {
	if d < 0 {
		return "-" + Age(-d)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// ago is Age for what cannot be negative but may read so across clocks: it shows 0s instead.
func ago(d time.Duration) string { return Age(max(d, 0)) }

// Millis renders milliseconds from Redis (a lag, a TTL): "-" when negative (none), "350ms" under a
// second, else as Age.
func Millis(ms int64) string {
	switch {
	case ms < 0:
		return "-"
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	}
	return Age(time.Duration(ms) * time.Millisecond)
}

// Sparkline draws values as eighth-blocks scaled to the largest; an empty window is a dot.
func Sparkline(v []int64) string {
	bars := []rune("▁▂▃▄▅▆▇█")
	var m int64
	for _, x := range v {
		m = max(m, x)
	}
	var b strings.Builder
	for _, x := range v {
		if x <= 0 || m <= 0 {
			b.WriteRune('·')
			continue
		}
		b.WriteRune(bars[min(int(float64(x)/float64(m)*8), 7)])
	}
	return b.String()
}

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
