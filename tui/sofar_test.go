package tui

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestFirstSweepViewsShowWhatIsReadLive: before the first sweep completes, the Queues and
// Limiters views show the sweep's Snapshot so far: a queue's depth as read, with a line saying
// the queues are read live; a limiter's and a lock pattern's counts of keys as lower bounds.
func TestFirstSweepViewsShowWhatIsReadLive(t *testing.T) {
	st := testStatus(t)
	part := st.Snapshot
	st.Snapshot, st.Partial = nil, part
	part.Scan.Complete = false
	part.DelayQueues = []snapshot.DelayQueue{{Name: "orders", Key: "delay:orders", Depth: 500, Due: ptr(12), InFlight: ptr(0),
		OldestDueAgeMS: ptr(1000), NextDueInMS: ptr(-1), Unit: "ms", Schedule: map[string]int64{"1m": 0, "10m": 0, "1h": 0, "later": 0}}}
	part.Limiters = []snapshot.Limiter{{Name: "api", Layout: "hourglass", Kind: "fixed", Keys: 37, AtLimit: 2, OverLimit: ptr(0), Limit: ptr(100)}}
	part.Locks = []snapshot.Lock{{Name: "jobs", Held: 4}}
	src := &fakeSource{status: st}
	m := newTestModel(t, src, nil, 120, 36)
	poll(t, m)
	press(m, "4")
	s := screen(m)
	if !strings.Contains(s, soFarQueues) || !strings.Contains(s, " 500 ") || strings.Contains(s, "Waiting for the first sweep") {
		t.Errorf("the Queues view during the first sweep:\n%s", s)
	}
	press(m, "5")
	s = screen(m)
	for _, want := range []string{"≥37", "≥2", "≥4", "first sweep under way"} {
		if !strings.Contains(s, want) {
			t.Errorf("the Limiters view during the first sweep has no %q:\n%s", want, s)
		}
	}
	part.Scan.Complete = true
	src.mu.Lock()
	src.status.Snapshot, src.status.Partial = part, nil
	src.mu.Unlock()
	poll(t, m)
	if s = screen(m); strings.Contains(s, "≥") || strings.Contains(s, "first sweep under way") {
		t.Errorf("after the sweep completes, the Limiters view still shows lower bounds:\n%s", s)
	}
}
