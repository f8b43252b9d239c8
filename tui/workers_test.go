package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// withWorkers gives the test snapshot's Sidekiq entry a live and a stale process, and adds an RQ
// worker, a BullMQ worker connection and a Celery entry, which records none.
func withWorkers(s *snapshot.Snapshot) *snapshot.Snapshot {
	s.JobQueues[0].Workers = &snapshot.JobWorkers{Found: ptr(2), Live: ptr(1), Stale: ptr(1), Notes: []string{}, List: []snapshot.JobWorker{
		{Identity: "web-1:4242:0a1b2c3d4e5f", Host: "web-1", PID: ptr(4242), Queues: []string{"critical", "default"}, Busy: ptr(3), Concurrency: ptr(10),
			State: "running", StartedAgeMS: ptr(3_600_000), LastBeatAgeMS: ptr(2_000), ExpiresInMS: ptr(58_000)},
		{Identity: "web-2:77:ffeeddccbbaa", Host: "web-2", PID: ptr(77), Queues: []string{"default"}, Busy: ptr(1), Concurrency: ptr(5),
			State: "quiet", StartedAgeMS: ptr(7_200_000), LastBeatAgeMS: ptr(95_000), ExpiresInMS: ptr(-35_000),
			Stale: true, StaleWhy: "no heartbeat for 60 s (its hash expires then)"},
	}}
	s.JobQueues = append(s.JobQueues,
		snapshot.JobQueues{Name: "py", Layout: "rq", Queues: []snapshot.JobQueue{}, Notes: []string{}, Workers: &snapshot.JobWorkers{Found: ptr(1), Live: ptr(1),
			Notes: []string{}, List: []snapshot.JobWorker{{Identity: "box-1", Host: "box", PID: ptr(311), Queues: []string{"high", "low"},
				State: "busy", CurrentJob: "5f0c", StartedAgeMS: ptr(600_000), LastBeatAgeMS: ptr(4_000), ExpiresInMS: ptr(476_000), Done: ptr(12), Failed: ptr(1)}}}},
		snapshot.JobQueues{Name: "node", Layout: "bullmq", Queues: []snapshot.JobQueue{}, Notes: []string{}, Workers: &snapshot.JobWorkers{Found: ptr(1), Live: ptr(1),
			Notes: []string{"BullMQ records no heartbeat: a worker is listed while its connection is open (CLIENT LIST), idle since its last command."},
			List: []snapshot.JobWorker{{Identity: "bull:d29yaw==:w:box-1", Host: "10.0.0.9:51234", Queues: []string{"work"}, State: "connected",
				StartedAgeMS: ptr(120_000), IdleMS: ptr(3_000)}}}},
		snapshot.JobQueues{Name: "cel", Layout: "celery", Queues: []snapshot.JobQueue{}, Notes: []string{}, Workers: &snapshot.JobWorkers{List: []snapshot.JobWorker{},
			Notes: []string{"Celery records no workers in Redis: they answer `celery inspect` over the broadcast (pidbox) exchange, which hourglass does not send."}}})
	return s
}

// TestWorkersLevel: W on the Queues view opens the Workers level: every process of every
// library with its busy/concurrency, state, beat and expiry as the snapshot has them, the stale
// one marked STALE with why (when selected), an entry that lists none in a row of its own with
// its library's note, and esc back to the Queues view; the Queues view and its ? name W.
func TestWorkersLevel(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 40}} {
		st := testStatus(t)
		st.Snapshot = withWorkers(st.Snapshot)
		m := newTestModel(t, &fakeSource{status: st}, nil, size[0], size[1])
		poll(t, m)
		press(m, "4")
		if s := screen(m); size[1] >= 40 && !strings.Contains(s, "W the job libraries' workers") { // 24 rows cut the hint off
			t.Fatalf("the Queues view does not say W opens the workers:\n%s", s)
		}
		press(m, "?")
		if s := screen(m); !regexp.MustCompile(`W +workers`).MatchString(s) {
			t.Fatalf("? does not list W on the Queues view:\n%s", s)
		}
		press(m, "?")
		press(m, "W", "down")
		s := screen(m)
		golden(t, fmt.Sprintf("workers_%dx%d", size[0], size[1]), s)
		for _, want := range []string{"3 live, 1 stale", "STALE", "3/10", "web-2:77:ffeeddccbbaa: stale: no heartbeat for 60 s", "not recorded",
			"cel: Celery records no workers in Redis", "BullMQ records no heartbeat"} {
			if !strings.Contains(s, want) {
				t.Errorf("at %dx%d the Workers level does not show %q:\n%s", size[0], size[1], want, s)
			}
		}
		if size[0] >= 160 {
			for _, want := range []string{"busy 5f0c", "connected, idle 3s", "35s ago", "in 58s", "web-1:4242", "critical,default"} {
				if !strings.Contains(s, want) {
					t.Errorf("at %dx%d the Workers level does not show %q:\n%s", size[0], size[1], want, s)
				}
			}
		}
		press(m, "esc")
		if s := screen(m); strings.Contains(s, "LAST BEAT") || !strings.Contains(s, "critical") {
			t.Errorf("esc did not come back to the Queues view:\n%s", s)
		}
	}
}

// TestWorkersSummaryWithNoneRecorded: with only libraries that record no workers in Redis, the
// Workers level's summary says so ("—"), not "0 live, 0 stale".
func TestWorkersSummaryWithNoneRecorded(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	snap.JobQueues = []snapshot.JobQueues{{Name: "cel", Layout: "celery", Queues: []snapshot.JobQueue{}, Notes: []string{},
		Workers: &snapshot.JobWorkers{List: []snapshot.JobWorker{}, Notes: []string{"Celery records no workers in Redis"}}}}
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, nil, 160, 40)
	poll(t, m)
	press(m, "4", "W")
	if s := screen(m); !strings.Contains(s, "— live, — stale") || strings.Contains(s, "0 live") {
		t.Errorf("the summary with no workers recorded:\n%s", s)
	}
}
