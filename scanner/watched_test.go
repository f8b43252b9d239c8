package scanner

import (
	"context"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// TestChargeCountsAgainstTheBudget: keys the drill-down reads on demand are paid from the
// sweep's budget, so the sweep after them waits for them: 40 keys at 20 a second hold it 2 s,
// not 1.5. The pacer's clock is held still once the budget has come back, so the 2 s are read
// off that clock, whatever the machine's speed.
func TestChargeCountsAgainstTheBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	w := NewWatcher(rdb, families(t), Options{Location: shanghai, KeysPerSecond: 20})
	if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	p := w.sweep.pace
	p.mu.Lock()
	at := time.Now()
	if p.next.After(at) {
		at = p.next // the moment the budget of the poll's reads has come back
	}
	p.now = func() time.Time { return at }
	p.mu.Unlock()
	if !p.ready() {
		t.Fatal("the budget has not come back by the time the pacer said it would")
	}
	w.Charge(40)
	if p.readyBy(at.Add(1500 * time.Millisecond)) {
		t.Error("the keys read on demand were not charged to the sweep's budget")
	}
	if !p.readyBy(at.Add(2*time.Second + time.Millisecond)) {
		t.Error("40 keys at 20 a second held the sweep past 2 s")
	}
}

// TestPaceSharesTheSweepsBudget: work beside the sweep paced by Pace waits until the sweep's
// own budget allows it, and what it charges holds the sweep back: with the budget spent up to a
// moment a second on, a Pace whose context ends sooner returns without charging, and one that
// waits charges 40 keys the sweep then waits 2 s for, read off the pacer's clock held still.
func TestPaceSharesTheSweepsBudget(t *testing.T) {
	srv := redistest.Start(t)
	w := NewWatcher(srv.Client(t), families(t), Options{Location: shanghai, KeysPerSecond: 20})
	if _, err := w.Poll(t.Context(), 10*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	p := w.sweep.pace
	w.Charge(20) // a second of the budget spent ahead
	p.mu.Lock()
	spent, next := p.spent, p.next
	p.mu.Unlock()
	short, cancel := context.WithTimeout(t.Context(), time.Until(next)/4)
	defer cancel()
	if err := w.Pace(short, 40); err == nil {
		t.Fatal("Pace returned before the budget allowed it")
	}
	p.mu.Lock()
	charged := p.spent != spent
	p.mu.Unlock()
	if charged {
		t.Fatal("a Pace that never ran charged the budget")
	}
	if err := w.Pace(t.Context(), 40); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.spent != spent+40 || !p.next.After(next.Add(2*time.Second-time.Millisecond)) {
		t.Fatalf("after Pace: spent %d (was %d), the sweep's next step %v after the one before, want 40 keys and 2 s", p.spent, spent, p.next.Sub(next))
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
