package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestEveryQueueRowNamesItsKey: the queues a [[delay_queue]] pattern finds share the entry's
// name; each row names its own key, at 80 columns too (escaped, as the sweep gave it).
func TestEveryQueueRowNamesItsKey(t *testing.T) {
	st := testStatus(t)
	keys := []string{"delay:topic:alpha", "delay:topic:beta", format.Escape("delay:topic:\x1b[2J")}
	for i, k := range keys {
		st.Snapshot.DelayQueues = append(st.Snapshot.DelayQueues, snapshot.DelayQueue{Name: "topics", Key: k, Pattern: "delay:topic:<topic>",
			Depth: int64(10 - i), Due: ptr(1), InFlight: ptr(0), OldestDueAgeMS: ptr(1000), NextDueInMS: ptr(-1), Unit: "s",
			Schedule: map[string]int64{"1m": 0, "10m": 0, "1h": 0, "later": 0}})
	}
	for _, w := range []int{80, 120} {
		m := newTestModel(t, &fakeSource{status: st}, nil, w, 40)
		poll(t, m)
		press(m, "4")
		s := screen(m)
		rows := 0
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "topics ") {
				rows++
			}
		}
		if rows != len(keys) {
			t.Errorf("at %d columns %d topics rows, want %d:\n%s", w, rows, len(keys), s)
		}
		for _, k := range keys {
			if !strings.Contains(s, fmt.Sprintf("topics       %s", k)) && !strings.Contains(s, "topics  "+k) {
				t.Errorf("at %d columns no row names %s:\n%s", w, k, s)
			}
		}
		if strings.Contains(s, "\x1b[2J") {
			t.Errorf("at %d columns a key reached the screen unescaped", w)
		}
	}
}
