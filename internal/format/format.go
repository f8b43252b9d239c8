// Package format renders numbers, durations, byte counts and series for people, one way for
// every front end: the console (tui), the text report and bench all import it, so a figure reads
// the same wherever it is shown. Of hourglass's packages it imports none; it does no I/O.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
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

// Total renders a total with thousands separators, marked when it saturated (the sum passed the
// int64 range, so n is the end it passed, a bound): "≥9,223,372,036,854,775,807" (at least
// that), or at the negative end "≤-9,223,372,036,854,775,808" (at most that).
func Total(n int64, saturated bool) string {
	switch {
	case !saturated:
		return Commas(n)
	case n < 0:
		return "≤" + Commas(n)
	}
	return "≥" + Commas(n)
}

// Bound is Commas of n, marked as Total marks a saturated total when n sits at an end of the int64
// range. That is where a saturated sum stops; the mark is true even of a sum that ends there
// exactly. It is for figures such as a series' peak, whose saturation only their value tells.
func Bound(n int64) string { return Total(n, n == math.MaxInt64 || n == math.MinInt64) }

// Peak is Bound of a series' largest value.
func Peak(v []int64) string { return Bound(MaxOf(v)) }

// Skipped is the cell of a figure left unread to keep the sweep's budget: "skipped: 12.0 MiB
// over budget", with what reading it would have taken.
func Skipped(bytes int64) string { return "skipped: " + BytesIEC(bytes) + " over budget" }

// Rate renders a per-second rate: two decimals below 10, whole numbers with separators above.
func Rate(r float64) string {
	switch {
	case r == 0:
		return "0"
	case r < 10 && r > -10:
		return fmt.Sprintf("%.2f", r)
	case r >= math.MaxInt64: // float64(math.MaxInt64) is 2^63, past the range
		return Total(math.MaxInt64, true)
	case r < math.MinInt64:
		return Total(math.MinInt64, true)
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

// Span renders a span of seconds the way a rate's note says it: "0.4s", "12s", "1m0s" (tenths of
// a second under ten seconds, whole seconds from there).
func Span(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

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

// DimsText joins a key's dims in pattern order: "app1/ios/10.0.0.1".
func DimsText(names []string, dims map[string]string) string {
	vals := make([]string, 0, len(names))
	for _, n := range names {
		vals = append(vals, dims[n])
	}
	return strings.Join(vals, "/")
}

// MaxOf is the largest of v (0 for none).
func MaxOf(v []int64) int64 {
	var m int64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// OneLine keeps an error to one line however many were joined into it: the first, and how many
// more there were.
func OneLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s (and %d more)", lines[0], len(lines)-1)
}

// Unknown and NotKept fill a cell whose number is missing: Unknown when it could not be read (a
// note beside the table says why), NotKept when the writer keeps no such number there.
const (
	Unknown = "?"
	NotKept = "—"
)

// CommasOf is Commas of *n, or missing when n is nil.
func CommasOf(n *int64, missing string) string {
	if n == nil {
		return missing
	}
	return Commas(*n)
}

// MillisOf is Millis of *ms, or missing when ms is nil.
func MillisOf(ms *int64, missing string) string {
	if ms == nil {
		return missing
	}
	return Millis(*ms)
}

// Short renders a figure in three significant digits with an SI suffix: 1212345 -> "1.21M",
// 12345 -> "12.3k", 980 -> "980", for an estimate, whose last digits mean nothing.
func Short(v float64) string {
	a := math.Abs(v)
	for _, u := range []struct {
		at     float64
		suffix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= u.at*0.9995 {
			x := v / u.at
			switch {
			case math.Abs(x) >= 99.95:
				return fmt.Sprintf("%.0f%s", x, u.suffix)
			case math.Abs(x) >= 9.995:
				return fmt.Sprintf("%.1f%s", x, u.suffix)
			}
			return fmt.Sprintf("%.2f%s", x, u.suffix)
		}
	}
	return fmt.Sprintf("%.0f", v)
}

// Approx renders an estimate with its 95% interval as a share of it, the figure followed by unit
// ("" or "/s"): "≈1.21M ±2.3%", "≈9.81k/s ±3.0%" (the interval's larger side). An estimate of 0,
// or one whose interval is wider than ten times itself, reads with its interval's ends:
// "≈0 (0–12)".
func Approx(est, low, high float64, unit string) string {
	half := math.Max(high-est, est-low)
	switch {
	case est == 0 && half == 0:
		return "≈0" + unit
	case est == 0 || half >= 10*math.Abs(est):
		return fmt.Sprintf("≈%s%s (%s–%s)", Short(est), unit, Short(low), Short(high))
	}
	pct := 100 * half / math.Abs(est)
	if pct >= 9.95 {
		return fmt.Sprintf("≈%s%s ±%.0f%%", Short(est), unit, pct)
	}
	return fmt.Sprintf("≈%s%s ±%.1f%%", Short(est), unit, pct)
}

// SoFar renders a figure a sweep under way could not scale: what it has seen so far, at least.
func SoFar(n int64) string { return "≥" + Commas(n) }
