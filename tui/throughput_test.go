package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestJobsRunTable: under a job library's table the Queues view shows what it counts of the jobs
// it ran: a rate measured, "measuring" and how long for one not yet, "—" for a count the library does not keep (a
// queue whose BullMQ Worker keeps no metrics), today's counts and the days as a sparkline; of a
// library counting per queue, the five busiest queues and how many more there are, the queues
// whose library keeps no count on one line, not as rows of "—"; and, with the
// entry selected, why a rate or a count is missing. The Overview sums the rates, a lower bound
// while some are measuring.
func TestJobsRunTable(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	jobs := snap.JobQueues[0]
	rate := 19.5
	jobs.Throughput = []snapshot.JobThroughput{{Queue: "", ProcessedTotal: ptr(123_456), FailedTotal: ptr(78), ProcessedPerSec: &rate,
		RateNote: "measuring: 8s of reads so far; a rate needs 20s", RateMeasuring: &snapshot.Measuring{SpanSec: 8, NeedSec: 20}, Days: []snapshot.JobDay{{Day: "2026-11-27", Processed: 4_321, Failed: 9}, {Day: "2026-11-26", Processed: 9_000}}}}
	bq := snapshot.JobQueues{Name: "bq", Layout: "bullmq", Queues: []snapshot.JobQueue{}, ThroughputNote: "BullMQ counts only while a Worker's metrics option is on"}
	for i := range 7 {
		n := int64(i * 10)
		r := float64(i)
		bq.Throughput = append(bq.Throughput, snapshot.JobThroughput{Queue: fmt.Sprintf("q%d", i), ProcessedTotal: &n, FailedTotal: ptr(0),
			ProcessedPerSec: &r, FailedPerSec: new(float64), Days: []snapshot.JobDay{}})
	}
	bq.Throughput[6] = snapshot.JobThroughput{Queue: "silent", Days: []snapshot.JobDay{}, Note: "BullMQ's metrics are off for this queue"}
	bq.Throughput[2].ProcessedPerSec = nil // not measured yet: after those measured
	bq.Throughput[2].RateMeasuring = &snapshot.Measuring{SpanSec: 15, NeedSec: 20}
	snap.JobQueues = []snapshot.JobQueues{jobs, bq}
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, nil, 160, 48)
	poll(t, m)
	// The Overview sums the rates over every library, at least, while two are measured.
	if s := screen(m); !regexp.MustCompile(`jobs run / failed /s +≥33 / ≥0\b`).MatchString(s) || !strings.Contains(s, "≥: 2 rates still measuring, 12s to go") {
		t.Errorf("the Overview's jobs run:\n%s", s)
	}
	press(m, "4")
	s := screen(m)
	for _, want := range []string{
		`JOBS RUN jobs +RUN/S +FAILED/S +TODAY +FAILED +TOTAL +FAILED TOTAL +DAYS \(UTC\)`,
		`all queues +20 +measuring, 12s to go +4,321 +9 +123,456 +78 +█▄`,
		`q5 +5\.00 +0 +— +— +50 +0`,
		`q0 +0 +0 +— +— +0 +0`,
		`1 more queue's counts in the report`,
		`jobs run not kept for silent: BullMQ's metrics are off for this queue`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("the Queues view lacks %q:\n%s", want, s)
		}
	}
	if regexp.MustCompile(`silent +—`).MatchString(s) || regexp.MustCompile(`\bq2\b`).MatchString(s) {
		t.Errorf("the jobs-run table shows more than the five busiest queues:\n%s", s)
	}
	press(m, "down", "down", "down", "down", "down") // to the jobs entry's rows: its notes show
	if s := screen(m); !strings.Contains(s, "jobs all queues: rate: measuring: 8s of reads so far") {
		t.Errorf("with the entry selected, no note says how far its failed rate is measured:\n%s", s)
	}
}

// TestJobsRunMeasuring: while every rate of a live job system is still being measured (its
// totals read, 16 jobs run, but not over 20 s yet), the Overview says "measuring" and how long
// is left, never "?", which says unreadable; the Queues view's rows say the same.
func TestJobsRunMeasuring(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	jobs := snap.JobQueues[0]
	jobs.Throughput = []snapshot.JobThroughput{{Queue: "default", ProcessedTotal: ptr(16), FailedTotal: ptr(0), Days: []snapshot.JobDay{},
		RateNote: "measuring: 3.0s of reads so far; a rate needs 20s", RateMeasuring: &snapshot.Measuring{SpanSec: 3, NeedSec: 20}}}
	snap.JobQueues = []snapshot.JobQueues{jobs}
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, nil, 120, 36)
	poll(t, m)
	s := screen(m)
	if !regexp.MustCompile(`jobs run / failed /s +measuring\b`).MatchString(s) || !strings.Contains(s, "2 rates still measuring, 17s to go") || strings.Contains(s, "? / ?") {
		t.Errorf("the Overview's jobs run while measured:\n%s", s)
	}
	press(m, "4")
	if s := screen(m); !regexp.MustCompile(`default +measuring, 17s to go +measuring, 17s to go +— +— +16 +0`).MatchString(s) {
		t.Errorf("the Queues view's row while measured:\n%s", s)
	}
}

// TestJobsRunUnread: a library's counts whose read failed are "?" with the reason on the
// Overview (not "—", which says the library keeps no such count), and "?" in their row of the
// Queues view, beside another library's rates read.
func TestJobsRunUnread(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	jobs := snap.JobQueues[0]
	why := "store: rq throughput: NOPERM this user has no permissions to run the 'sscan' command"
	jobs.Throughput = []snapshot.JobThroughput{{Queue: "", Days: []snapshot.JobDay{}, Error: why, RateNote: "the counts could not be read: " + why}}
	rate := 2.5
	bq := snapshot.JobQueues{Name: "bq", Layout: "bullmq", Queues: []snapshot.JobQueue{}, Throughput: []snapshot.JobThroughput{
		{Queue: "mail", ProcessedTotal: ptr(10), FailedTotal: ptr(1), ProcessedPerSec: &rate, FailedPerSec: new(float64), Days: []snapshot.JobDay{}}}}
	snap.JobQueues = []snapshot.JobQueues{jobs, bq}
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, nil, 160, 48)
	poll(t, m)
	s := screen(m)
	if !regexp.MustCompile(`jobs run / failed /s +2\.50\+\? / 0\+\?`).MatchString(s) || !strings.Contains(s, "jobs run not read: jobs all queues: store: rq throughput: NOPERM") {
		t.Errorf("the Overview's jobs run does not say which count could not be read, and why:\n%s", s)
	}
	only := snap
	only.JobQueues = []snapshot.JobQueues{jobs}
	st.Snapshot = &only
	m = newTestModel(t, &fakeSource{status: st}, nil, 160, 48)
	poll(t, m)
	if s := screen(m); !regexp.MustCompile(`jobs run / failed /s +\? / \?`).MatchString(s) {
		t.Errorf("the Overview's jobs run, none read:\n%s", s)
	}
	press(m, "4")
	if s := screen(m); !regexp.MustCompile(`all queues +\? +\? +\? +\? +\? +\?`).MatchString(s) {
		t.Errorf("the Queues view's row of counts not read:\n%s", s)
	}
}
