package cells

import (
	"slices"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestWorker: a process's cells say busy of concurrency, the state with RQ's job or BullMQ's
// idle time, ages, an expiry ahead or past, and "—" for what the library does not record.
func TestWorker(t *testing.T) {
	for _, c := range []struct {
		w    snapshot.JobWorker
		want []string
	}{
		{snapshot.JobWorker{Identity: "web:1:ab", Host: "web", PID: ptr(1), Queues: []string{"a", "b"}, Busy: ptr(2), Concurrency: ptr(10),
			State: "running", LastBeatAgeMS: ptr(3_000), ExpiresInMS: ptr(57_000), StartedAgeMS: ptr(90_000)},
			[]string{"web:1:ab", "live", "2/10", "running", "3s", "in 57s", "web:1", "a,b", "1m30s"}},
		{snapshot.JobWorker{Identity: "box-1", Host: "box", PID: ptr(7), Queues: []string{"low"}, State: "busy", CurrentJob: "j1",
			LastBeatAgeMS: ptr(500_000), ExpiresInMS: ptr(-20_000), Stale: true},
			[]string{"box-1", Stale, "—", "busy j1", "8m20s", "20s ago", "box:7", "low", "—"}},
		{snapshot.JobWorker{Identity: "bull:d29yaw==", Host: "10.0.0.1:5000", Queues: []string{"work"}, State: "connected", IdleMS: ptr(4_000)},
			[]string{"bull:d29yaw==", "live", "—", "connected, idle 4s", "—", "—", "10.0.0.1:5000", "work", "—"}},
	} {
		if got := Worker(c.w); !slices.Equal(got, c.want) || len(got) != len(WorkerColumns) {
			t.Errorf("Worker(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}
