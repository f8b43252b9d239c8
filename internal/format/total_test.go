package format

import (
	"math"
	"testing"
)

// TestTotalsMarkTheirBound: a saturated total says which side of it the true sum lies on, and
// a rate past the int64 range is not wrapped into a negative.
func TestTotalsMarkTheirBound(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Total(1234, false), "1,234"},
		{Total(math.MaxInt64, true), "≥9,223,372,036,854,775,807"},
		{Total(math.MinInt64, true), "≤-9,223,372,036,854,775,808"},
		{Bound(math.MaxInt64), "≥9,223,372,036,854,775,807"},
		{Bound(math.MaxInt64 - 1), "9,223,372,036,854,775,806"},
		{Peak([]int64{3, math.MaxInt64, 5}), "≥9,223,372,036,854,775,807"},
		{Rate(2 * float64(math.MaxInt64)), "≥9,223,372,036,854,775,807"},
		{Rate(-2 * float64(math.MaxInt64)), "≤-9,223,372,036,854,775,808"},
		{Rate(12.4), "12"},
		{Skipped(300 << 20), "skipped: 300.0 MiB over budget"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
