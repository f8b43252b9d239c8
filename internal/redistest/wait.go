package redistest

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually looks at its condition: often enough that a test waits a few
// milliseconds past the moment it holds, seldom enough to leave the machine to the code tested.
const pollEvery = 10 * time.Millisecond

// Eventually waits until cond holds, looking at it every few milliseconds. When within passes
// first, it fails the test saying what it waited for. It is the one wait on a condition the tests
// share. A test never sleeps in the hope that something has happened; it waits for it to be seen.
// The within bound is for liveness, generous (ten times what the wait documents), never a speed
// check.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	if !Until(within, cond) {
		t.Fatalf("waited %v for %s", within, what)
	}
}

// Until waits until cond holds or within passes, looking at it every few milliseconds, and
// reports whether it held: for a test that must stop its own goroutines before it fails.
func Until(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	ticker := time.NewTicker(pollEvery)
	defer ticker.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-ticker.C
	}
	return true
}
