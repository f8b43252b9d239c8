package inspect

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/journal"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TestBulkDeleteOfACeleryQueueThroughTheDrillDown: the console offers delete all on a Celery
// queue's waiting messages, plans them over its priority lists, deletes those of the plan alone
// (the messages Celery sends after the dry run stay), and z (UndoLast), from what the journal
// holds, puts every list back as it was before the run.
func TestBulkDeleteOfACeleryQueueThroughTheDrillDown(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	py := redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis")
	send := func(n, first string) {
		redistest.RunFixture(t, py, "../../store/jobs/testdata/celery", nil,
			"purge.py", "redis://"+srv.Addr+"/0", "app1:", "send", "bulk", n, first)
	}
	send("40", "0")
	w := watching(rdb, nil, scanner.Options{KeysPerSecond: 100_000, Structures: scanner.Structures{
		JobQueues: []scanner.JobQueueSpec{{Name: "ck", Source: jobs.Source{Layout: jobs.Celery, Prefix: "app1:"}}},
	}})
	j, err := journal.Open(filepath.Join(t.TempDir(), journal.FileName), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.SetJournal(j, srv.Addr)
	ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "ck", Queue: "bulk"})
	if err := w.BulkCheck(ref, snapshot.SectionWaiting, snapshot.ActionDelete); err != nil {
		t.Fatalf("delete all of a Celery queue: %v", err)
	}
	plan, err := w.PlanBulk(t.Context(), ref, snapshot.SectionWaiting, snapshot.ActionDelete)
	if err != nil || plan.Tasks != 40 || len(plan.Lists) != 4 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	send("10", "40")
	before, lists := dumps(t, rdb), map[string][]string{}
	for _, p := range plan.Lists {
		lists[p.Key] = rdb.LRange(t.Context(), p.Key, 0, -1).Val()
	}
	line, err := w.Bulk(t.Context(), ref, snapshot.SectionWaiting, snapshot.ActionDelete, plan, nil)
	if err != nil || !strings.HasPrefix(line, "40 of 40 waiting tasks") {
		t.Fatalf("bulk: %q, %v", line, err)
	}
	st, err := jobs.Source{Layout: jobs.Celery, Prefix: "app1:"}.Stats(t.Context(), rdb, "bulk", rdb.Time(t.Context()).Val())
	if err != nil || st.Waiting != 10 {
		t.Fatalf("after delete all: %d waiting (%v), want the 10 sent after the dry run", st.Waiting, err)
	}
	for _, p := range plan.Lists { // each list keeps its head, the messages sent after the dry run
		was := lists[p.Key]
		if left := rdb.LRange(t.Context(), p.Key, 0, -1).Val(); !slices.Equal(left, was[:len(was)-int(p.Tasks)]) {
			t.Fatalf("%q keeps %d messages, not the %d sent after the dry run", p.Key, len(left), len(was)-int(p.Tasks))
		}
	}
	if line, err = w.UndoLast(t.Context(), nil); err != nil || !strings.Contains(line, "40 tasks restored") {
		t.Fatalf("undo: %q, %v", line, err)
	}
	after := dumps(t, rdb)
	for k, d := range before {
		if after[k] != d && lists[k] == nil {
			t.Fatalf("undo: %q differs", k)
		}
	}
	for k, els := range lists { // a list's DUMP records how it was pushed: its elements in order
		if got := rdb.LRange(t.Context(), k, 0, -1).Val(); !slices.Equal(got, els) {
			t.Fatalf("undo: %q holds %d messages, not the %d before the run in their order", k, len(got), len(els))
		}
	}
	if len(after) != len(before) {
		t.Fatalf("undo: %d keys, %d before the run", len(after), len(before))
	}
}
