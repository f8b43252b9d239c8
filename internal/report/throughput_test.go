package report

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestJobsRun: the report lists what each job library counts of the jobs it ran, every queue of
// one counting per queue, "—" for a count not kept and "?" for a rate not measured, with why; and
// for a library keeping none, why.
func TestJobsRun(t *testing.T) {
	rate := 12.5
	s := snapshotWith(func(s *snapshot.Snapshot) {
		s.JobQueues = []snapshot.JobQueues{{Name: "sk", Layout: "sidekiq", Queues: []snapshot.JobQueue{},
			Throughput: []snapshot.JobThroughput{{ProcessedTotal: ptr(5_000), FailedTotal: ptr(12), ProcessedPerSec: &rate,
				RateNote: "measuring: 8s of reads so far; a rate needs 20s",
				Days:     []snapshot.JobDay{{Day: "2026-11-27", Processed: 700, Failed: 2}, {Day: "2026-11-26", Processed: 1_400, Failed: 3}}}}},
			{Name: "bq", Layout: "bullmq", Queues: []snapshot.JobQueue{}, Throughput: []snapshot.JobThroughput{
				{Queue: "mail", Note: "BullMQ's metrics are off for this queue (a Worker's metrics option turns them on)", Days: []snapshot.JobDay{}}}},
			{Name: "cel", Layout: "celery", Queues: []snapshot.JobQueue{}, Throughput: []snapshot.JobThroughput{},
				ThroughputNote: "Celery keeps no count of the tasks it ran in Redis"}}
	})
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^JOBS RUN sk +RUN/S +FAILED/S +TODAY +FAILED +TOTAL +FAILED TOTAL +DAYS \(UTC, OLDEST FIRST\)$`),
		regexp.MustCompile(`(?m)^all queues +13 +\? +700 +2 +5,000 +12 +█▅$`),
		regexp.MustCompile(`(?m)^  all queues: rate unknown: measuring: 8s of reads so far; a rate needs 20s$`),
		regexp.MustCompile(`(?m)^mail +— +— +— +— +— +—`),
		regexp.MustCompile(`(?m)^  mail: BullMQ's metrics are off for this queue`),
		regexp.MustCompile(`(?m)^  jobs run: Celery keeps no count of the tasks it ran in Redis$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the report lacks %s:\n%s", want, text)
		}
	}
}
