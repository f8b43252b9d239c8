package cells

import (
	"fmt"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// Refused is a limiter's refused attempts counted in its keys' current windows. It is "—" when none
// of its keys counts them (hourglass's own, limits' moving window, redis_rate). When only some do
// (limits' fixed-window keys beside moving-window ones), it says how many keys the sum covers.
func Refused(l snapshot.Limiter) string {
	if l.RefusedInWindow == nil {
		return format.NotKept
	}
	n := format.Total(*l.RefusedInWindow, l.RefusedSaturated)
	if l.RefusedKeys < l.Keys {
		return fmt.Sprintf("%s in %s of %s keys", n, format.Commas(l.RefusedKeys), format.Commas(l.Keys))
	}
	return n
}

// Over is a limiter's keys past their limit: "—" for a library's, whose keys count what they
// refuse and are never over.
func Over(l snapshot.Limiter) string { return format.CommasOf(l.OverLimit, format.NotKept) }

// LimiterKind is what the console and the report name a limiter's keys by: hourglass's own by
// their kind (sliding, fixed), a library's by the library and how its keys count.
func LimiterKind(l snapshot.Limiter) string {
	if l.KeepsDecisions() {
		return l.Kind
	}
	return l.Layout + " " + l.Kind
}
