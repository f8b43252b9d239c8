package cells

import (
	"slices"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

func ptr(n int64) *int64 { return &n }

// TestJobQueue: a count the library does not keep reads "—", one it keeps reads as a number, and
// the due, lag and next-in cells are "—" where the library keeps no scheduled set for the queue
// but "?" where it keeps one whose due times could not be read; a latency unknown with why is "?",
// one of no queue of its own "—".
func TestJobQueue(t *testing.T) {
	nk, unk := format.NotKept, format.Unknown
	cases := []struct {
		name string
		q    snapshot.JobQueue
		want []string
	}{
		{"no scheduled set", snapshot.JobQueue{Queue: "mail", Waiting: ptr(1234), LatencyMS: ptr(2500), Active: ptr(0)},
			[]string{"mail", "1,234", format.Millis(2500), "0", nk, nk, nk, nk, nk, nk, nk}},
		{"scheduled, due times unread", snapshot.JobQueue{Queue: "mail", Scheduled: ptr(5), Paused: true},
			[]string{"mail (paused)", nk, nk, nk, "5", unk, unk, unk, nk, nk, nk}},
		{"latency unknown", snapshot.JobQueue{Queue: "c", Waiting: ptr(3), LatencyNote: "no time"},
			[]string{"c", "3", unk, nk, nk, nk, nk, nk, nk, nk, nk}},
		{"every count", snapshot.JobQueue{Queue: "q", Waiting: ptr(1), LatencyMS: ptr(0), Active: ptr(2), Scheduled: ptr(3), Due: ptr(4),
			OldestDueAgeMS: ptr(1500), NextDueInMS: ptr(60000), Retry: ptr(5), Dead: ptr(6), Completed: ptr(7)},
			[]string{"q", "1", format.Millis(0), "2", "3", "4", format.Millis(1500), format.Millis(60000), "5", "6", "7"}},
	}
	for _, c := range cases {
		if got := JobQueue(c.q); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestUnion: a count, a union the budget skipped (in the caller's words), one that failed, and
// one the family does not keep each read differently.
func TestUnion(t *testing.T) {
	skipped := func(s *snapshot.UnionSkip) string { return "skipped " + format.Commas(s.Bytes) }
	for _, c := range []struct {
		n      *int64
		skip   *snapshot.UnionSkip
		failed string
		want   string
	}{
		{ptr(12345), nil, "", "12,345"},
		{nil, &snapshot.UnionSkip{Bytes: 2048}, "", "skipped 2,048"},
		{nil, nil, "NOPERM", format.Unknown},
		{nil, nil, "", format.NotKept},
	} {
		if got := Union(c.n, c.skip, c.failed, skipped); got != c.want {
			t.Errorf("Union(%v, %v, %q) = %q, want %q", c.n, c.skip, c.failed, got, c.want)
		}
	}
}

// TestSchedule: a bucket's count, or "?" when the queue's scores could not be read as due times.
func TestSchedule(t *testing.T) {
	q := snapshot.DelayQueue{Due: ptr(3), Schedule: map[string]int64{"1m": 1500}}
	if got := Schedule(q, "1m"); got != "1,500" {
		t.Errorf("Schedule 1m = %q, want 1,500", got)
	}
	q.Due = nil
	if got := Schedule(q, "1m"); got != format.Unknown {
		t.Errorf("Schedule with unreadable due times = %q, want %q", got, format.Unknown)
	}
}

// TestThroughputMeasuring: a rate a watcher is still measuring reads "measuring" and how long is
// left, not "?"; a rate nobody measures (a one-off snapshot) and a row unread stay "?".
func TestThroughputMeasuring(t *testing.T) {
	rate := 1.62
	for _, c := range []struct {
		name string
		t    snapshot.JobThroughput
		want []string // run/s and failed/s
	}{
		{"measuring", snapshot.JobThroughput{ProcessedTotal: ptr(16), FailedTotal: ptr(1),
			RateMeasuring: &snapshot.Measuring{SpanSec: 4.5, NeedSec: 20}}, []string{"measuring, 16s to go", "measuring, 16s to go"}},
		{"run known, failed measuring", snapshot.JobThroughput{ProcessedTotal: ptr(16), FailedTotal: ptr(1), ProcessedPerSec: &rate,
			RateMeasuring: &snapshot.Measuring{SpanSec: 20, NeedSec: 20}}, []string{"1.62", "measuring"}},
		{"one-off", snapshot.JobThroughput{ProcessedTotal: ptr(16), FailedTotal: ptr(1), RateNote: "a rate needs a minute of reads"},
			[]string{format.Unknown, format.Unknown}},
		{"unread", snapshot.JobThroughput{Error: "WRONGTYPE"}, []string{format.Unknown, format.Unknown}},
		{"not kept", snapshot.JobThroughput{Note: "keeps no count"}, []string{format.NotKept, format.NotKept}},
	} {
		if got := Throughput(c.t)[1:3]; !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
