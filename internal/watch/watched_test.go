package watch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
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
	w := New(rdb, families(t), scanner.Options{Location: shanghai, KeysPerSecond: 20})
	var still atomic.Pointer[time.Time] // the pacer's clock, once held still
	w.clock = func() time.Time {
		if at := still.Load(); at != nil {
			return *at
		}
		return time.Now()
	}
	if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	p := w.sweep.Pacer()
	at := time.Now()
	if next := p.Next(); next.After(at) {
		at = next // the moment the budget of the poll's reads has come back
	}
	still.Store(&at)
	if at.Before(p.Next()) { // no step may run yet
		t.Fatal("the budget has not come back by the time the pacer said it would")
	}
	w.Charge(40)
	if p.Next().Before(at.Add(1500 * time.Millisecond)) { // a step may run before then
		t.Error("the keys read on demand were not charged to the sweep's budget")
	}
	if !p.Next().Before(at.Add(2*time.Second + time.Millisecond)) {
		t.Error("40 keys at 20 a second held the sweep past 2 s")
	}
}

// TestPaceSharesTheSweepsBudget: work beside the sweep paced by Pace waits until the sweep's
// own budget allows it, and what it charges holds the sweep back: with the budget spent up to a
// moment a second on, a Pace whose context ends sooner returns without charging, and one that
// waits charges 40 keys the sweep then waits 2 s for, read off the pacer's clock held still.
func TestPaceSharesTheSweepsBudget(t *testing.T) {
	srv := redistest.Start(t)
	w := New(srv.Client(t), families(t), scanner.Options{Location: shanghai, KeysPerSecond: 20})
	if _, err := w.Poll(t.Context(), 10*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	p := w.sweep.Pacer()
	w.Charge(20) // a second of the budget spent ahead
	spent, next := p.Spent(), p.Next()
	short, cancel := context.WithTimeout(t.Context(), time.Until(next)/4)
	defer cancel()
	if err := w.Pace(short, 40); err == nil {
		t.Fatal("Pace returned before the budget allowed it")
	}
	if p.Spent() != spent {
		t.Fatal("a Pace that never ran charged the budget")
	}
	if err := w.Pace(t.Context(), 40); err != nil {
		t.Fatal(err)
	}
	if p.Spent() != spent+40 || !p.Next().After(next.Add(2*time.Second-time.Millisecond)) {
		t.Fatalf("after Pace: spent %d (was %d), the sweep's next step %v after the one before, want 40 keys and 2 s", p.Spent(), spent, p.Next().Sub(next))
	}
}

// TestWatchedDoesNotWaitForAPoll: the console's drill-down asks for the watched entries, the
// budget and the clock in its Update and while a Poll may be under way (holding the watcher for
// its slice, or for seconds against a Redis slow to answer); none of them waits for that Poll.
func TestWatchedDoesNotWaitForAPoll(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	w := New(rdb, nil, scanner.Options{KeysPerSecond: 1000, Structures: scanner.Structures{
		DelayQueues: []scanner.DelayQueueSpec{{Name: "orders", Key: "dq:orders", Unit: store.Milliseconds}},
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
