package store

import (
	"testing"

	"hourglass/internal/redistest"
)

// TestBulkKillAllDoesWhatKillAllDoes: on two identical copies, hourglass's kill all of the retry
// set and Sidekiq's own RetrySet#kill_all leave the same jobs, unchanged, in the dead set and
// none in the retry set; undone, hourglass's copy is byte for byte what it was.
func TestBulkKillAllDoesWhatKillAllDoes(t *testing.T) {
	ours, theirs := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	fillSidekiqFailures(t, ours, 150, 20)
	copyKeys(t, ours, theirs)
	before := dumpKeys(t, ours)
	q := JobSource{Layout: Sidekiq}.SharedQueue()
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
