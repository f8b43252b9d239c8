package scanner

import (
	"fmt"
	"testing"
	"time"

	"hourglass/internal/redistest"
	"hourglass/store"
)

// TestDrillDownDoesNotWaitForAPoll: the console asks for a queue's sections in its Update and
// reads a page while a Poll may be under way (holding the watcher for its slice, or for seconds
// against a Redis slow to answer); neither waits for that Poll to end.
func TestDrillDownDoesNotWaitForAPoll(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	s := store.New(rdb, store.Options{})
	if err := s.DelayQueue("dq:orders", store.Milliseconds).Enqueue(ctx, s.Now().Add(-time.Minute), "a", "b"); err != nil {
		t.Fatal(err)
	}
	w := queueWatcher(t, rdb, 1000)
	if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil { // a sweep begun: its budget is charged
		t.Fatal(err)
	}
	ref := QueueRef{Kind: QueueDelay, Name: "orders", Key: "dq:orders"}

	w.mu.Lock() // a Poll under way
	done := make(chan string, 1)
	go func() {
		secs := w.TaskSections(ref)
		p, err := w.Tasks(ctx, ref, SectionDue, 0, 10)
		if err != nil || len(secs) != 3 || len(p.Tasks) != 2 {
			done <- fmt.Sprintf("sections %v, a page of %d tasks, %v", secs, len(p.Tasks), err)
			return
		}
		done <- ""
	}()
	select {
	case bad := <-done:
		w.mu.Unlock()
		if bad != "" {
			t.Fatal(bad)
		}
	case <-time.After(5 * time.Second):
		w.mu.Unlock()
		<-done
		t.Fatal("the sections and a page waited for the Poll under way to end")
	}
}
