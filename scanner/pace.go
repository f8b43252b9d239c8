package scanner

import (
	"context"
	"sync"
	"time"
)

// pacer holds a sweep to a keys-per-second budget: after a step visits n keys, the next step may
// run only n/rate seconds later. Idle time is not saved up, so a sweep resumed after a pause
// does not burst.
type pacer struct {
	rate float64 // keys per second; 0 is no limit
	now  func() time.Time

	mu    sync.Mutex
	next  time.Time // when the next step may run
	spent int64     // keys charged in all
}

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
	p.spent += int64(n)
	now := p.now()
	if p.next.Before(now) {
		p.next = now
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
