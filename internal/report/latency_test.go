package report

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestQueueLatencies: the report's job and list queue tables have a LATENCY column, "?" where it
// is unknown with a line saying why, and "—" on a library's shared row.
func TestQueueLatencies(t *testing.T) {
	s := snapshotWith(func(s *snapshot.Snapshot) {
		s.JobQueues = []snapshot.JobQueues{{Name: "sk", Layout: "sidekiq",
			Queues: []snapshot.JobQueue{{Queue: "mail", Waiting: ptr(12), LatencyMS: ptr(95_000)}},
			Shared: &snapshot.JobQueue{Retry: ptr(3)}},
			{Name: "cel", Layout: "celery", Queues: []snapshot.JobQueue{
				{Queue: "celery", Waiting: ptr(4), LatencyNote: "Celery's messages carry no time they were sent"},
				{Queue: "mail", Waiting: ptr(2), LatencyNote: "Celery's messages carry no time they were sent"}}}}
		s.ListQueues = []snapshot.ListQueue{{Name: "emails", Key: "queue:emails", Length: 3, LatencyNote: "its oldest task's payload holds no time"}}
	})
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^JOBS sk \(sidekiq\) +WAITING +LATENCY +ACTIVE`),
		regexp.MustCompile(`(?m)^mail +12 +1m35s `),
		regexp.MustCompile(`(?m)^\(all queues\) +— +— `),
		regexp.MustCompile(`(?m)^celery +4 +\? `),
		regexp.MustCompile(`(?m)^  celery: latency unknown: Celery's messages carry no time they were sent \(and 1 more queue\)$`),
		regexp.MustCompile(`(?m)^emails +queue:emails +3 +\? `),
		regexp.MustCompile(`(?m)^  emails queue:emails: latency unknown: its oldest task's payload holds no time$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the report lacks %s:\n%s", want, text)
		}
	}
}
