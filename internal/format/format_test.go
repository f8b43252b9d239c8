package format

import (
	"testing"
	"time"
)

func TestCommas(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45678: "-45,678"} {
		if got := Commas(n); got != want {
			t.Errorf("Commas(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDurations covers the one set of duration formats the console and the report share.
func TestDurations(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:                     "45s",
		4*time.Minute + 10*time.Second:       "4m10s",
		2*time.Hour + 5*time.Minute:          "2h05m",
		75*time.Hour + 30*time.Minute:        "3d03h",
		-(3*time.Minute + 2*time.Second):     "-3m02s",
		47*time.Hour + 59*time.Minute + 59e9: "47h59m",
	} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
	for ms, want := range map[int64]string{-1: "-", -2: "-", 0: "0ms", 999: "999ms", 1000: "1s", 90_500: "1m30s"} {
		if got := Millis(ms); got != want {
			t.Errorf("Millis(%d) = %q, want %q", ms, got, want)
		}
	}
	for secs, want := range map[float64]string{0.44: "400ms", 0.45: "500ms", 9.94: "9.9s", 12.4: "12s", 20: "20s", 60: "1m0s", 89.6: "1m30s"} {
		if got := Span(secs); got != want {
			t.Errorf("Span(%v) = %q, want %q", secs, got, want)
		}
	}
}
