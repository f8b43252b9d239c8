package target

import (
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Embedded is the in-process Redis the program runs on when no address is given: miniredis on a
// loopback port, used exactly as a real target is, over the network.
type Embedded struct {
	m    *miniredis.Miniredis
	stop chan struct{}
	done chan struct{}
}

// ttlTick is how often the embedded Redis's TTLs are moved on by the wall clock.
const ttlTick = 250 * time.Millisecond

// StartEmbedded starts miniredis on a free loopback port and drives its TTLs from the wall clock,
// so keys expire as they would in Redis (miniredis on its own only expires keys when told to).
// The clock is moved on a tick rather than with miniredis's ClockTTL, which walks every key with
// a TTL on every command and so slows to a crawl once there are a few hundred thousand keys.
func StartEmbedded() (*Embedded, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start embedded Redis: %w", err)
	}
	e := &Embedded{m: m, stop: make(chan struct{}), done: make(chan struct{})}
	go e.driveClock()
	return e, nil
}

func (e *Embedded) driveClock() {
	defer close(e.done)
	t := time.NewTicker(ttlTick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			e.m.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Addr is the loopback host:port the embedded Redis listens on.
func (e *Embedded) Addr() string { return e.m.Addr() }

// Port is the port, for `redis-cli -p PORT`.
func (e *Embedded) Port() string { return e.m.Port() }

// Close stops the server; its data is gone.
func (e *Embedded) Close() {
	close(e.stop)
	<-e.done
	e.m.Close()
}
