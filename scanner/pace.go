package scanner

import (
	"context"
	"sync"
	"time"
)

// pacer holds a sweep to a keys-per-second budget: after a step visits n keys, the next step may
// run only n/rate seconds later. Idle time is saved up to pacerSlack only: a sweep resumed after
// a pause bursts by at most that much of its budget, while the short stalls of a sweep under way
// (a page whose reads are slow to come back, the gap between two polls of a Watcher) do not
// leave a share of the budget unspent.
type pacer struct {
	rate float64 // keys per second; 0 is no limit
	now  func() time.Time

	mu   sync.Mutex
	next time.Time // when the next step may run
}

// pacerSlack is the most idle time the pacer saves up: a quarter second of the budget.
const pacerSlack = 250 * time.Millisecond

func newPacer(keysPerSecond int, now func() time.Time) *pacer {
	return &pacer{rate: float64(keysPerSecond), now: now}
}

// ready reports whether a step may run now.
func (p *pacer) ready() bool {
	if p.rate <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.now().Before(p.next)
}

// readyBy reports whether a step may run before t.
func (p *pacer) readyBy(t time.Time) bool {
	if !p.now().Before(t) {
		return false
	}
	if p.rate <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next.Before(t)
}

// spend records n keys visited (or their weight: a bitmap weighs more than its one key). A nil
// pacer keeps no budget.
func (p *pacer) spend(n int) {
	if p == nil || p.rate <= 0 || n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	switch floor := now.Add(-pacerSlack); {
	case p.next.IsZero(): // the first step: nothing was saved up before it
		p.next = now
	case p.next.Before(floor):
		p.next = floor
	}
	p.next = p.next.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
}

// wait blocks until a step may run, or ctx ends.
func (p *pacer) wait(ctx context.Context) error {
	if p.rate <= 0 {
		return ctx.Err()
	}
	p.mu.Lock()
	d := p.next.Sub(p.now())
	p.mu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
