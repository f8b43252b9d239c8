package main

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// embedded is the in-process Redis the program runs on when no address is given: miniredis on a
// loopback port, used exactly as a real target is, over the network.
type embedded struct {
	m *miniredis.Miniredis
}

// startEmbedded starts miniredis on a free loopback port. Its TTLs run on the wall clock
// (ClockTTL), as a real Redis's do; by default miniredis only expires keys when told to.
func startEmbedded() (*embedded, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start embedded Redis: %w", err)
	}
	m.ClockTTL(true)
	return &embedded{m: m}, nil
}

// Addr is the loopback host:port the embedded Redis listens on.
func (e *embedded) Addr() string { return e.m.Addr() }

// Port is the port, for `redis-cli -p PORT`.
func (e *embedded) Port() string { return e.m.Port() }

// Close stops the server; its data is gone.
func (e *embedded) Close() { e.m.Close() }
