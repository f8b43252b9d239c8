package report

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestJobWorkers: each job library's entry is followed by its processes: busy/concurrency, the
// library's state, the last beat's age and the expiry, "—" where the library records none, the
// stale one marked STALE with why, the live and stale counts, and a library that records none
// says so in a note rather than listing a made-up process.
func TestJobWorkers(t *testing.T) {
	s := snapshotWith(func(s *snapshot.Snapshot) {
		s.JobQueues = []snapshot.JobQueues{{Name: "sk", Layout: "sidekiq", Queues: []snapshot.JobQueue{}, Workers: &snapshot.JobWorkers{
			Found: ptr(2), Live: ptr(1), Stale: ptr(1), List: []snapshot.JobWorker{
				{Identity: "web-1:42:0a1b2c3d4e5f", Host: "web-1", PID: ptr(42), Queues: []string{"default", "mail"}, Busy: ptr(3), Concurrency: ptr(10),
					State: "running", LastBeatAgeMS: ptr(2_000), ExpiresInMS: ptr(58_000), StartedAgeMS: ptr(3_600_000)},
				{Identity: "web-2:7:ffeeddccbbaa", Host: "web-2", PID: ptr(7), Queues: []string{"default"}, Busy: ptr(0), Concurrency: ptr(5),
					State: "quiet", LastBeatAgeMS: ptr(95_000), ExpiresInMS: ptr(-35_000), StartedAgeMS: ptr(7_200_000),
					Stale: true, StaleWhy: "no heartbeat for 60 s (its hash expires then)"}}}},
			{Name: "aq", Layout: "asynq", Queues: []snapshot.JobQueue{}, Workers: &snapshot.JobWorkers{Found: ptr(1), Live: ptr(1),
				Notes: []string{"asynq records when a server's beat expires, not when it beat: the last beat is not known."},
				List: []snapshot.JobWorker{{Identity: "box:9:abc", Host: "box", PID: ptr(9), Queues: []string{"work"}, Busy: ptr(0), Concurrency: ptr(2),
					State: "active", ExpiresInMS: ptr(8_000), StartedAgeMS: ptr(60_000)}}}},
			{Name: "cel", Layout: "celery", Queues: []snapshot.JobQueue{}, Workers: &snapshot.JobWorkers{List: []snapshot.JobWorker{},
				Notes: []string{"Celery records no workers in Redis."}}}}
	})
	var out bytes.Buffer
	Snapshot(&out, s, nil)
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^WORKERS sk \(sidekiq\) +HEALTH +BUSY +STATE +LAST BEAT +EXPIRES +HOST:PID +QUEUES +STARTED$`),
		regexp.MustCompile(`(?m)^web-1:42:0a1b2c3d4e5f +live +3/10 +running +2s +in 58s +web-1:42 +default,mail +1h00m$`),
		regexp.MustCompile(`(?m)^web-2:7:ffeeddccbbaa +STALE +0/5 +quiet +1m35s +35s ago +web-2:7 +default +2h00m$`),
		regexp.MustCompile(`(?m)^  1 live, 1 stale$`),
		regexp.MustCompile(`(?m)^  web-2:7:ffeeddccbbaa: stale: no heartbeat for 60 s \(its hash expires then\)$`),
		regexp.MustCompile(`(?m)^box:9:abc +live +0/2 +active +— +in 8s +box:9 +work +1m00s$`),
		regexp.MustCompile(`(?m)^  note: asynq records when a server's beat expires`),
		regexp.MustCompile(`(?m)^WORKERS cel \(celery\)[^\n]*\n\(not recorded in Redis: see the note\)$`),
		regexp.MustCompile(`(?m)^  note: Celery records no workers in Redis.$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the report lacks %s:\n%s", want, text)
		}
	}
}
