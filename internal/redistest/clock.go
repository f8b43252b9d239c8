package redistest

import (
	"testing"
	"time"
)

// ClearOfHourEnd returns the time once at least need is left before the hour ends, waiting into
// the next hour when it is closer than that, so a test that reads "the current hour" (or day: a
// day ends on an hour) on the wall clock reads one window throughout.
func ClearOfHourEnd(t testing.TB, need time.Duration) time.Time {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(time.Hour).Add(time.Hour).Sub(now); left < need {
		t.Logf("redistest: waiting %v for the next hour", left)
		// Past the hour's first second: a figure averaged over the hour so far has none before it.
		time.Sleep(left + 1500*time.Millisecond)
		now = time.Now()
	}
	return now
}
