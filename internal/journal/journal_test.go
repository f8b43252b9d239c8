package journal

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/store/jobs"
)

func open(t *testing.T, limit int64) *Journal {
	t.Helper()
	j, err := Open(filepath.Join(t.TempDir(), "state", FileName), limit)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestLastGivesBackTheBytesRecorded: the newest action on a target comes back with every chunk's
// undo data byte for byte (members that are not UTF-8, NULs, a DUMP), another target's action
// and an undone one are not offered, and a line cut short by a crash is skipped.
func TestLastGivesBackTheBytesRecorded(t *testing.T) {
	j := open(t, 0)
	tasks := []jobs.UndoTask{
		{Kind: jobs.UndoMember, Key: "retry", Member: "\xff\x00{\"jid\":1}", Score: 1732670000.1234567},
		{Kind: jobs.UndoMove, Key: "dead", Member: "m", Score: -0.5, List: "queue:a", Pushed: "p\n"},
		{Kind: jobs.UndoKey, Key: "job:1", Dump: "\x00\x01\xfe", ExpireAt: 1_900_000_000_000},
		{Kind: jobs.UndoScore, Key: "dq", Member: "t", Score: 1.7e12 + 0.25, NewScore: 1764205200123},
		{Kind: jobs.UndoToSet, Key: "asynq:{q}:retry", Member: "id", Score: 2, List: "asynq:{q}:archived", Hash: "asynq:{q}:t:id", State: "retry", NewState: "archived"},
		{Kind: jobs.UndoQueued, Key: "rq:failed:q", Member: "id", Score: 3, List: "rq:queue:q", Keys: []jobs.UndoTask{
			{Kind: jobs.UndoKey, Key: "rq:job:id", Dump: "\x00\xff", ExpireAt: 5}, {Kind: jobs.UndoKey, Key: "rq:job:id:dependents"}}},
		{Kind: jobs.UndoCleaned, Key: "bull:q:wait", Member: "7", Score: 4, List: "bull:q:wait", Keys: []jobs.UndoTask{
			{Kind: jobs.UndoKey, Key: "bull:q:7", Dump: "\x10\x00"}, {Kind: jobs.UndoKey, Key: "bull:q:7:logs", Dump: "\x0e"}}},
	}
	e, err := j.Begin(Action{Target: "a:1", Queue: "sidekiq", Section: "retry", Action: "delete", Planned: 3})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := j.Begin(Action{Target: "b:1"})
	if err := e.Record(tasks[:2]); err != nil {
		t.Fatal(err)
	}
	_ = other.Record(tasks[2:3])
	if err := e.Record(tasks[2:]); err != nil {
		t.Fatal(err)
	}
	_ = e.End(jobs.BulkResult{Done: 3})
	f, _ := os.OpenFile(j.Path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"t":"chunk","id":"` + e.id + `","tasks":[{"k":"z"`) // cut short
	f.Close()
	a, got, err := j.Last("a:1")
	if err != nil || a.Queue != "sidekiq" || a.Planned != 3 || a.Result == nil || a.Result.Done != 3 || !reflect.DeepEqual(got, tasks) {
		t.Fatalf("Last: %+v %+v %v\nwant %+v", a, got, err, tasks)
	}
	if err := j.UndoProgress(a.ID, 2); err != nil { // an undo stopped after the last two records
		t.Fatal(err)
	}
	if a, got, err := j.Last("a:1"); err != nil || a.Resumed != 2 || !reflect.DeepEqual(got, tasks[:len(tasks)-2]) {
		t.Fatalf("Last after an undo stopped part way: resumed %d, %d records, %v; want the first %d", a.Resumed, len(got), err, len(tasks)-2)
	}
	if err := j.Undone(a.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Last("a:1"); !errors.Is(err, ErrNothing) {
		t.Fatalf("after Undone: %v, want ErrNothing", err)
	}
	if _, got, err := j.Last("b:1"); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tasks[2]) {
		t.Fatalf("the other target's action: %v %v", got, err)
	}
}

// TestLastGoesBackOneActionAtATime: with the newest action undone, Last offers the one before
// it with its own chunks, and nothing once every action is undone.
func TestLastGoesBackOneActionAtATime(t *testing.T) {
	j := open(t, 0)
	var ids []string
	for i, key := range []string{"first", "second"} {
		e, err := j.Begin(Action{Target: "t", Queue: key, Planned: int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Record([]jobs.UndoTask{{Kind: jobs.UndoMember, Key: key, Member: key}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.id)
	}
	for i := len(ids) - 1; i >= 0; i-- {
		a, got, err := j.Last("t")
		if err != nil || a.ID != ids[i] || len(got) != 1 || got[0].Key != a.Queue {
			t.Fatalf("Last with %d undone: %+v %+v %v, want action %s with its one task", len(ids)-1-i, a, got, err, ids[i])
		}
		if err := j.Undone(a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := j.Last("t"); !errors.Is(err, ErrNothing) {
		t.Fatalf("every action undone: %v, want ErrNothing", err)
	}
}

// TestBounded: a chunk that would pass the bound is refused (ErrFull) and not written; a new
// action drops the oldest whole actions until the file holds less than half the bound, and the
// newest stays undoable.
func TestBounded(t *testing.T) {
	const limit = 64 << 10
	j := open(t, limit)
	big := []jobs.UndoTask{{Kind: jobs.UndoMember, Key: "k", Member: strings.Repeat("x", 4000)}}
	var full bool
	for i := 0; i < 40 && !full; i++ {
		e, err := j.Begin(Action{Target: "t", Queue: "q" + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 3; c++ {
			if err := e.Record(big); errors.Is(err, ErrFull) {
				full = true
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if st, _ := os.Stat(j.Path); st.Size() > limit {
			t.Fatalf("journal holds %d bytes, bound %d", st.Size(), limit)
		}
	}
	if full {
		t.Fatal("a chunk was refused though each new action makes room")
	}
	a, got, err := j.Last("t")
	if err != nil || a.Queue != "q"+string(rune('a'+39)) || len(got) != 3 {
		t.Fatalf("newest action after compactions: %+v, %d tasks, %v", a, len(got), err)
	}
	e, _ := j.Begin(Action{Target: "t"})
	huge := []jobs.UndoTask{{Kind: jobs.UndoMember, Key: "k", Member: strings.Repeat("y", limit)}}
	before, _ := os.Stat(j.Path)
	if err := e.Record(huge); !errors.Is(err, ErrFull) {
		t.Fatalf("a chunk past the bound: %v, want ErrFull", err)
	}
	if after, _ := os.Stat(j.Path); after.Size() != before.Size() {
		t.Fatalf("a refused chunk wrote %d bytes", after.Size()-before.Size())
	}
}

// TestDefaultPath: $XDG_STATE_HOME when set to an absolute path, else ~/.local/state.
func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/s")
	if p, _ := DefaultPath(); p != "/s/hourglass/"+FileName {
		t.Fatalf("with XDG_STATE_HOME: %s", p)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/h")
	if p, _ := DefaultPath(); p != "/h/.local/state/hourglass/"+FileName {
		t.Fatalf("without: %s", p)
	}
}
