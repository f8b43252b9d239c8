package scanner

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// Pacer holds a sweep to a keys-per-second budget: after a step visits n keys, the next step may
// run only n/rate seconds later. Idle time is saved up to pacerSlack only: a sweep resumed after
// a pause bursts by at most that much of its budget, while the short stalls of a sweep under way
// (a page whose reads are slow to come back, the gap between two polls of a Watcher) do not
// leave a share of the budget unspent.
type Pacer struct {
	bits atomic.Uint64 // the rate in keys per second, a float64's bits; 0 is no limit
	now  func() time.Time

	mu    sync.Mutex
	next  time.Time // when the next step may run
	spent int64     // keys charged in all
}

// pacerSlack is the most idle time the pacer saves up: a quarter second of the budget.
const pacerSlack = 250 * time.Millisecond

func NewPacer(keysPerSecond int, now func() time.Time) *Pacer {
	p := &Pacer{now: now}
	p.SetRate(float64(keysPerSecond))
	return p
}

// Rate is the keys a second the pacer allows now; 0 is no limit.
func (p *Pacer) Rate() float64 { return math.Float64frombits(p.bits.Load()) }

// SetRate changes the keys a second allowed from the next step on (a Watcher holding its Redis
// time lowers it and raises it again).
func (p *Pacer) SetRate(keysPerSecond float64) { p.bits.Store(math.Float64bits(keysPerSecond)) }

// Next is when the next step may run: a step visits keys only once the clock has reached it.
func (p *Pacer) Next() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next
}

// Spent is the keys charged in all.
func (p *Pacer) Spent() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.spent
}

// ready reports whether a step may run now.
func (p *Pacer) ready() bool {
	if p.Rate() <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.now().Before(p.next)
}

// readyBy reports whether a step may run before t.
func (p *Pacer) readyBy(t time.Time) bool {
	if !p.now().Before(t) {
		return false
	}
	if p.Rate() <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next.Before(t)
}

// Spend records n keys visited (or their weight: a bitmap weighs more than its one key). A nil
// pacer keeps no budget.
func (p *Pacer) Spend(n int) {
	if p == nil || n <= 0 {
		return
	}
	rate := p.Rate()
	if rate <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spent += int64(n)
	now := p.now()
	switch floor := now.Add(-pacerSlack); {
	case p.next.IsZero(): // the first step: nothing was saved up before it
		p.next = now
	case p.next.Before(floor):
		p.next = floor
	}
	p.next = p.next.Add(time.Duration(float64(n) / rate * float64(time.Second)))
}

// Wait blocks until a step may run, or ctx ends.
func (p *Pacer) Wait(ctx context.Context) error {
	if p.Rate() <= 0 {
		return ctx.Err()
	}
	p.mu.Lock()
	d := p.next.Sub(p.now())
	p.mu.Unlock()
	return store.Sleep(ctx, d)
}
