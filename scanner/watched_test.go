package scanner

import (
	"testing"
	"time"

	"hourglass/internal/redistest"
	"hourglass/store"
)

// TestChargeCountsAgainstTheBudget: keys the drill-down reads on demand are paid from the
// sweep's budget, so the sweep after them waits for them: 40 keys at 20 a second hold it 2 s,
// not 1.5.
func TestChargeCountsAgainstTheBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	w := NewWatcher(rdb, families(t), Options{Location: shanghai, KeysPerSecond: 20})
	if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !w.sweep.pace.ready(); {
		if time.Now().After(deadline) {
			t.Fatal("the budget never came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Charge(40)
	if w.sweep.pace.readyBy(time.Now().Add(1500 * time.Millisecond)) {
		t.Error("the keys read on demand were not charged to the sweep's budget")
	}
}

// TestWatchedDoesNotWaitForAPoll: the console's drill-down asks for the watched entries, the
// budget and the clock in its Update and while a Poll may be under way (holding the watcher for
// its slice, or for seconds against a Redis slow to answer); none of them waits for that Poll.
func TestWatchedDoesNotWaitForAPoll(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	w := NewWatcher(rdb, nil, Options{KeysPerSecond: 1000, Structures: Structures{
		DelayQueues: []DelayQueueSpec{{Name: "orders", Key: "dq:orders", Unit: store.Milliseconds}},
	}})
	if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil { // a sweep begun: its budget is charged
		t.Fatal(err)
	}

	w.mu.Lock() // a Poll under way
	done := make(chan string, 1)
	go func() {
		w.Charge(2)
		_, err := w.ServerTime(ctx)
		switch {
		case len(w.Watched().Structures.DelayQueues) != 1 || w.KeysPerSecond() != 1000 || w.Client() == nil || w.Now().IsZero():
			done <- "the watched entries, budget, client or clock were not what the watcher holds"
		case err != nil:
			done <- err.Error()
		default:
			done <- ""
		}
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
		t.Fatal("the drill-down's accessors waited for the Poll under way to end")
	}
}
