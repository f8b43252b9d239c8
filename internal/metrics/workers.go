package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

var descWorkers = prometheus.NewDesc("hourglass_job_workers",
	"A job library's processes as the library records them in Redis, by state: live, or stale (listed past the deadline by which it had to beat), or unread (listed by the library beyond the first 500, whose state was not read). Absent for a library that records none (Celery), and state=\"stale\" for one that records no beat (BullMQ).",
	[]string{"entry", "layout", "state"}, nil)

// collectJobWorkers writes each job library's live and stale processes, where it records them.
func collectJobWorkers(gauge gaugeFunc, entries []snapshot.JobQueues) {
	for _, e := range entries {
		ws := e.Workers
		if ws == nil || ws.Error != "" {
			continue
		}
		if ws.Live != nil {
			gauge(descWorkers, float64(*ws.Live), e.Name, e.Layout, "live")
		}
		if ws.Stale != nil {
			gauge(descWorkers, float64(*ws.Stale), e.Name, e.Layout, "stale")
		}
		if n := ws.More(); n > 0 {
			gauge(descWorkers, float64(n), e.Name, e.Layout, "unread")
		}
	}
}
