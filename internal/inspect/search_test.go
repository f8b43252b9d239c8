package inspect

import (
	"fmt"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestSearchTasks: a search of a list queue a Snapshot's row opens, a step at a time, finds the
// planted tasks among 3,000, charges what it read to the sweep's budget, and refuses an empty
// query and a ref no Snapshot made.
func TestSearchTasks(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	var tasks []string
	for i := range 3000 {
		tasks = append(tasks, fmt.Sprintf(`{"user_id":%d}`, map[bool]int{true: 42, false: 1000 + i}[i%1000 == 500]))
	}
	if err := store.New(rdb, store.Options{}).ListQueue("lq:mail").Push(ctx, tasks...); err != nil {
		t.Fatal(err)
	}
	w := queueWatcher(t, rdb, 20_000)
	ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueList, Name: "mail", Key: "lq:mail"})
	c := &charged{watched: w.Inspector.w}
	in := &Inspector{w: c, rdb: w.Inspector.rdb}
	step, err := in.StartSearch(ref, in.TaskSections(ref), "user_id=42")
	if err != nil {
		t.Fatal(err)
	}
	var found []snapshot.Found
	var prog snapshot.SearchProgress
	for steps := 0; !prog.Done; steps++ {
		var f []snapshot.Found
		if f, prog, err = step(ctx); err != nil || steps > 1000 {
			t.Fatalf("step %d: %v", steps, err)
		}
		found = append(found, f...)
	}
	if len(found) != 3 || prog.Scanned != 3000 || found[0].Task.Payload != `{"user_id":42}` {
		t.Errorf("found %d over %d: %+v", len(found), prog.Scanned, found)
	}
	if c.n != prog.Keys || c.n < 3000 {
		t.Errorf("charged %d keys, the search read %d", c.n, prog.Keys)
	}
	if _, err := in.StartSearch(ref, nil, `""`); err == nil {
		t.Error("an empty query was taken")
	}
	if _, err := in.StartSearch(snapshot.QueueRef{}, nil, "x"); err == nil {
		t.Error("a ref no Snapshot made was searched")
	}
}
