package tui

import (
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// While the first sweep is under way the views show its Snapshot so far (console.snapshot). Its
// queues, the limiters' busiest keys and decisions and the locks listed are read live every Poll,
// so they are as exact as after a sweep. The counts of keys it found so far (a limiter's keys,
// the locks held) are lower bounds, and say so with ≥.

// soFar reports whether what the views show is the first sweep's, still under way.
func (c *console) soFar() bool { return c.status.Snapshot == nil && c.status.Partial != nil }

// countCell is a count of keys the sweep found: a lower bound while the first sweep is under way.
func (c *console) countCell(n int64) string { return c.bound(format.Commas(n)) }

// bound marks a figure the sweep is still adding to as a lower bound; a cell that is no figure
// (unknown, not kept) is left as it is.
func (c *console) bound(cell string) string {
	if !c.soFar() || cell == "" || strings.HasPrefix(cell, "≥") || (cell[0] < '0' || cell[0] > '9') {
		return cell
	}
	return "≥" + cell
}
