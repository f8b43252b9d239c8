package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

var (
	descJobsProcessed = prometheus.NewDesc("hourglass_job_processed_total", "Jobs a job library has run, failed or not, by its own running count (queue=\"_all\" where it counts all queues together; RQ: its live workers' counts, which restart with them); absent where the library keeps no count (Celery; BullMQ with metrics off). rate() gives jobs run a second.", []string{"entry", "layout", "queue"}, nil)
	descJobsFailed    = prometheus.NewDesc("hourglass_job_failed_total", "Jobs a job library has run that failed, by its own running count (queue=\"_all\" where it counts all queues together).", []string{"entry", "layout", "queue"}, nil)
)

// collectThroughput writes each job library's running counts of the jobs it ran, as counters.
func collectThroughput(counter gaugeFunc, entries []snapshot.JobQueues) {
	for _, e := range entries {
		for _, t := range e.Throughput {
			queue := t.Queue
			if queue == "" {
				queue = "_all"
			}
			if t.ProcessedTotal != nil {
				counter(descJobsProcessed, float64(*t.ProcessedTotal), e.Name, e.Layout, queue)
			}
			if t.FailedTotal != nil {
				counter(descJobsFailed, float64(*t.FailedTotal), e.Name, e.Layout, queue)
			}
		}
	}
}
