package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestBulkKillAllDoesWhatKillAllDoes: on two identical copies, hourglass's kill all of the retry
// set and Sidekiq's own RetrySet#kill_all leave the same jobs, unchanged, in the dead set and
// none in the retry set; undone, hourglass's copy is byte for byte what it was.
func TestBulkKillAllDoesWhatKillAllDoes(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	fillSidekiqFailures(t, ours, 150, 20)
	copyKeys(t, ours, theirs)
	before := dumpKeys(t, ours)
	q := Source{Layout: Sidekiq}.SharedQueue()
	res, undo := runBulk(t.Context(), t, ours, q, SectionRetry, ActionArchive, nil)
	var killed struct{ Moved int64 }
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "testdata/sidekiq", &killed,
		"bulk.rb", "kill_all", "redis://"+theirs.Options().Addr+"/0")
	if res.Done != 150 || res.Done != killed.Moved || res.Gone+res.Left != 0 || res.Chunks < 2 {
		t.Fatalf("kill all: %+v; Sidekiq's kill_all moved %d", res, killed.Moved)
	}
	for _, key := range []string{"retry", "dead"} {
		got, want := ours.ZRange(t.Context(), key, 0, -1).Val(), theirs.ZRange(t.Context(), key, 0, -1).Val()
		if !sameSet(got, want) {
			t.Fatalf("%s after kill all: %d jobs, Sidekiq's kill_all %d", key, len(got), len(want))
		}
	}
	if n := ours.ZCard(t.Context(), "dead").Val(); n != 170 {
		t.Fatalf("dead holds %d, want 170", n)
	}
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored != 150 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, ours, before, "kill all then undo")
}

// TestBulkKillAllKeepsTheAppsDeadBound: with the app's dead_max_jobs below what the dead set will
// hold, hourglass's kill all (told the bound) trims the dead set to the same jobs as Sidekiq's own
// kill_all under that option (the trim takes the oldest dead, more than a page of them, and none
// of the jobs killed); the dry run says so; undone, the trimmed jobs come back and every key is
// byte for byte what it was.
func TestBulkKillAllKeepsTheAppsDeadBound(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	fillSidekiqFailures(t, ours, 120, 400)
	copyKeys(t, ours, theirs)
	before := dumpKeys(t, ours)
	q := Source{Layout: Sidekiq, DeadMax: 300}.SharedQueue()
	plan, err := PlanBulk(t.Context(), ours, q, SectionRetry, ActionArchive, 0, time.Now())
	if err != nil || !strings.Contains(plan.Note, "newest 300 jobs of the last 180 days (dead_max_jobs from the entry, Sidekiq's default dead_timeout: set them") {
		t.Fatalf("plan %+v, %v: the note does not say the app's bound", plan, err)
	}
	if p, _ := PlanBulk(t.Context(), ours, Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionArchive, 0, time.Now()); !strings.Contains(p.Note, "10000 jobs") ||
		!strings.Contains(p.Note, "(Sidekiq's default dead_max_jobs, Sidekiq's default dead_timeout: set them") {
		t.Fatalf("the default bound's note: %q", p.Note)
	}
	// One chunk of all 120: its trim could take 221 of the dead, more than a page.
	res, undo := runBulkChunk(t.Context(), t, ours, q, SectionRetry, ActionArchive, 300, nil)
	var killed struct{ Moved int64 }
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "testdata/sidekiq", &killed,
		"bulk.rb", "kill_all", "redis://"+theirs.Options().Addr+"/0", "300")
	if res.Done != 120 || killed.Moved != 120 {
		t.Fatalf("kill all: %+v; Sidekiq's kill_all moved %d", res, killed.Moved)
	}
	got, want := ours.ZRange(t.Context(), "dead", 0, -1).Val(), theirs.ZRange(t.Context(), "dead", 0, -1).Val()
	if len(got) != 299 || !sameSet(got, want) {
		t.Fatalf("dead after kill all: %d jobs, Sidekiq's kill_all under dead_max_jobs 300 left %d, not the same", len(got), len(want))
	}
	if ur, err := Undo(t.Context(), ours, undo, 100, nil); err != nil || ur.Restored < 120 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, ours, before, "kill all under the app's bound, then undo")
}
