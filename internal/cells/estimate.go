package cells

import (
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// Count is the cell of a count of keys: exact with separators, or, while the sweep is under way,
// its estimate ("≈1.21M ±2.3%") or what was seen so far ("≥1,234") when it cannot be scaled.
func Count(n int64, e *snapshot.Estimate) string {
	return Total(n, false, e)
}

// Total is Count for a window's total, which may have saturated (see format.Total).
func Total(n int64, saturated bool, e *snapshot.Estimate) string {
	switch {
	case e == nil:
		return format.Total(n, saturated)
	case e.SoFar || e.High == nil:
		return format.SoFar(n)
	}
	return format.Approx(e.Estimate, e.Low, *e.High, "")
}
