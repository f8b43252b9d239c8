package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestLongestWait: the Overview's longest wait is the longest of every queue's latency and every
// lag, naming the queue; a queue whose latency is unknown adds "+?", and with no wait known at
// all it is "?"; the Queues view shows each queue's latency, "?" for an unknown one, and
// the selected queue's note says why.
func TestLongestWait(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	jobs := snap.JobQueues[0]
	jobs.Queues = append([]snapshot.JobQueue(nil), jobs.Queues...)
	jobs.Queues[1].LatencyMS = ptr(300_000) // default: five minutes, longer than the orders' lag
	snap.JobQueues = []snapshot.JobQueues{jobs}
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, nil, 140, 40)
	poll(t, m)
	if s := screen(m); !regexp.MustCompile(`longest wait +5m00s \(jobs default\)\+\?`).MatchString(s) {
		t.Errorf("the longest wait is not the default queue's five minutes, with the emails queue unknown:\n%s", s)
	}
	press(m, "4")
	if s := screen(m); !regexp.MustCompile(`default +1,040 +5m00s`).MatchString(s) || !regexp.MustCompile(`emails +queue:emails +42 +\?`).MatchString(s) {
		t.Errorf("the Queues view's latencies:\n%s", s)
	}
	press(m, "down", "down") // past the two delay queues to the emails list queue: its note says why
	if s := screen(m); !strings.Contains(s, "emails queue:emails: latency unknown: its oldest task's payload holds no time") {
		t.Errorf("the selected list queue's unknown latency has no note:\n%s", s)
	}

	// Only unknown latencies, and no lag: the longest wait is unknown, not 0 or "—".
	none := *st.Snapshot
	none.DelayQueues, none.JobQueues = nil, nil
	st.Snapshot = &none
	m = newTestModel(t, &fakeSource{status: st}, nil, 140, 40)
	poll(t, m)
	if s := screen(m); !regexp.MustCompile(`longest wait +\? `).MatchString(s) {
		t.Errorf("with every latency unknown the longest wait is not ?:\n%s", s)
	}
}
