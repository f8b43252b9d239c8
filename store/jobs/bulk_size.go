package jobs

import "time"

// BulkMaxCall is the longest one chunk of a bulk action (or of its undo) should take, timed on
// the client, when the caller says nothing (BulkOptions.MaxCall): half a millisecond, so a chunk
// holds Redis well under one even when Redis waits for a core now and then.
const BulkMaxCall = 500 * time.Microsecond

// chunkSizer sizes a bulk run's chunks to a longest call, as a sweep's SCAN COUNT adapts to
// [scan] max_call. A task's cost differs by layout and payload, so no fixed size fits all. Each
// chunk's round trip is timed on the client, an upper bound of Redis' own time. The next chunk
// aims at 80% of the bound from the least time a task took over the last 4 chunks. It shrinks at
// once, grows by at most half, and stays between 10 and BulkChunkMax.
type chunkSizer struct {
	maxCall time.Duration // 0 or less: the chunk stays as it is
	size    int
	least   int
	perTask []time.Duration
}

func newChunkSizer(first int, maxCall time.Duration) *chunkSizer {
	first = min(max(first, 1), BulkChunkMax)
	return &chunkSizer{maxCall: maxCall, size: first, least: min(first, 10)}
}

// took records that a chunk of n tasks took rtt, and sizes the next.
func (c *chunkSizer) took(n int, rtt time.Duration) {
	if c.maxCall <= 0 || n <= 0 {
		return
	}
	c.perTask = append(c.perTask, max(rtt/time.Duration(n), time.Nanosecond))
	if len(c.perTask) > 4 {
		c.perTask = c.perTask[1:]
	}
	least := c.perTask[0]
	for _, d := range c.perTask[1:] {
		least = min(least, d)
	}
	want := int(float64(c.maxCall) * 0.8 / float64(least))
	c.size = max(min(want, c.size+c.size/2, BulkChunkMax), c.least)
}

// chunk is the first chunk and the longest call o asks for, the defaults filled in.
func (o BulkOptions) chunk() (int, time.Duration) {
	first, maxCall := o.Chunk, o.MaxCall
	if first <= 0 {
		first = BulkChunkDefault
	}
	if maxCall == 0 {
		maxCall = BulkMaxCall
	}
	return first, maxCall
}
