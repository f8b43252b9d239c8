package scanner

import (
	"testing"
	"time"
)

// The pacer spends its budget over a sweep's short stalls: a page whose reads came back late, or
// the gap between two polls, leaves no share of the budget unspent. It saves up no more than a
// quarter second of it, so a sweep resumed after a long pause does not burst, and nothing before
// a first step.
func TestPacerSavesUpAQuarterSecond(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := NewPacer(1000, func() time.Time { return now })
	p.Spend(100) // the first step: the next may run 100 ms later
	if !p.next.Equal(now.Add(100 * time.Millisecond)) {
		t.Fatalf("after a first step of 100 keys at 1,000/s the next may run at %v, want 100 ms on", p.next.Sub(now))
	}
	now = now.Add(180 * time.Millisecond) // a stall of 80 ms
	p.Spend(100)
	if got := p.next.Sub(now); got != 20*time.Millisecond {
		t.Errorf("after a stall of 80 ms a step of 100 ms may run %v after it, want 20 ms: the stall was not made up", got)
	}
	now = now.Add(time.Hour)
	p.Spend(100)
	if got := p.next.Sub(now); got != -150*time.Millisecond {
		t.Errorf("after an hour's pause a step of 100 ms leaves the next at %v, want -150 ms: a quarter second saved up", got)
	}
	p.Spend(200)
	if p.ready() {
		t.Error("after a pause the steps ran past the quarter second saved up")
	}
}
