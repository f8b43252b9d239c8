package redistest

import (
	"testing"
	"time"
)

// ClearOfHourEnd returns the time once at least need is left before the hour ends. When the hour's
// end is closer than that, it waits into the next hour. So a test that reads "the current hour" on
// the wall clock reads one window throughout. (The same goes for the day, since a day ends on an
// hour.)
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
