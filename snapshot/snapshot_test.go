package snapshot

import (
	"testing"
	"time"
)

func TestMillisUpNeverRoundsARunToNone(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {-time.Second, 0}, {time.Microsecond, 1}, {time.Millisecond, 1}, {1001 * time.Microsecond, 2}, {3 * time.Second, 3000}} {
		if got := MillisUp(c.d); got != c.want {
			t.Errorf("MillisUp(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}
