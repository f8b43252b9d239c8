package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/journal"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// dumpAll is every key's DUMP and PTTL.
func dumpAll(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	it := rdb.Scan(t.Context(), 0, "*", 1000).Iterator()
	for it.Next(t.Context()) {
		k := it.Val()
		out[k] = rdb.Dump(t.Context(), k).Val() + "|" + strconv.FormatBool(rdb.PTTL(t.Context(), k).Val() < 0)
	}
	return out
}

// TestUndoRestoresTheLastBulkAction: a bulk delete of Sidekiq's retry set, recorded in the journal
// as the console records it, is undone by `hourglass undo` byte for byte (DUMP before = DUMP
// after); a read-only undo is refused before anything is written; an undo with nothing left to
// undo says so and fails.
func TestUndoRestoresTheLastBulkAction(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var filled struct{ Retry int }
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "../../store/jobs/testdata/sidekiq", &filled,
		"bulk.rb", "fill", "redis://"+srv.Addr+"/0", "250", "0")
	before := dumpAll(t, rdb)

	j, err := journal.Open("", 0)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := j.Begin(journal.Action{Target: srv.Addr, Queue: "sidekiq (shared)", Section: "retry", Action: "delete"})
	if err != nil {
		t.Fatal(err)
	}
	q := jobs.Source{Layout: jobs.Sidekiq}.SharedQueue()
	res, err := jobs.RunBulk(t.Context(), rdb, q, jobs.SectionRetry, jobs.ActionDelete, rdb.Time(t.Context()).Val(),
		jobs.BulkOptions{Record: entry.Record})
	if err != nil || res.Done != 250 || rdb.Exists(t.Context(), "retry").Val() != 0 {
		t.Fatalf("bulk delete: %+v, %v", res, err)
	}
	_ = entry.End(res)

	if code, _, stderr := hg(t, "undo", "--addr", srv.Addr); code != exitUsage || !strings.Contains(stderr, "--allow-writes") {
		t.Fatalf("read-only undo: exit %d, %s", code, stderr)
	}
	if rdb.Exists(t.Context(), "retry").Val() != 0 {
		t.Fatal("a read-only undo wrote")
	}
	code, stdout, stderr := hg(t, "undo", "--addr", srv.Addr, "--allow-writes")
	if code != exitOK || !strings.Contains(stdout, "of 250 retry tasks of sidekiq (shared) (") || !strings.Contains(stdout, "250 tasks restored") {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	after := dumpAll(t, rdb)
	if len(after) != len(before) {
		t.Fatalf("%d keys before, %d after undo", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("undo left %q different from before", k)
		}
	}
	if code, _, stderr := hg(t, "undo", "--addr", srv.Addr, "--allow-writes"); code != exitRuntime || !strings.Contains(stderr, "no bulk action") {
		t.Fatalf("a second undo: exit %d, %s", code, stderr)
	}
}
