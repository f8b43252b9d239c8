package redistest

import (
	"testing"
	"time"
)

// TestUntil: a condition that holds at once returns at once; one that comes to hold is seen within
// a few looks of it; one that never holds gives up once its bound has passed, not before.
func TestUntil(t *testing.T) {
	looks := 0
	if !Until(time.Hour, func() bool { looks++; return true }) || looks != 1 {
		t.Errorf("a condition that holds at once was looked at %d times", looks)
	}
	looks = 0
	if !Until(time.Hour, func() bool { looks++; return looks == 3 }) || looks != 3 {
		t.Errorf("a condition true at the third look was looked at %d times", looks)
	}
	start := time.Now()
	if Until(50*time.Millisecond, func() bool { return false }) {
		t.Error("a condition that never holds was reported held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("gave up after %v, before its bound of 50ms", took)
	}
}
