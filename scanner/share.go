package scanner

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A cluster's masters are swept in parallel, each with its share of the budget: the keys a second
// the sweep may visit, over the masters it has not finished. A master whose keys come fast takes
// no more than its share, so a master that answers faster than the others does not take their
// budget, and each master's coverage grows at the pace of its share. Every page still counts
// against the sweep's budget as a whole too, which the drill-down's and the live reads' keys come
// out of.

// countMasters counts the masters the client sees, for the shares: 1 on a standalone server.
func (s *Sweep) countMasters(ctx context.Context) {
	n := int64(1)
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		var c atomic.Int64
		_ = cc.ForEachMaster(ctx, func(context.Context, *redis.Client) error { c.Add(1); return nil })
		n = max(c.Load(), 1)
	}
	s.mu.Lock()
	s.masters = int(n)
	s.mu.Unlock()
}

// shareOf is master addr's pacer, its rate set to its share of the sweep's budget now: the
// budget over the masters not yet swept to their end (a master not begun yet counts as one).
func (s *Sweep) shareOf(addr string) *Pacer {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.shares[addr]
	if p == nil {
		p = NewPacer(0, s.pace.now)
		s.shares[addr] = p
	}
	open := s.masters
	for _, done := range s.done {
		if done {
			open--
		}
	}
	p.SetRate(s.pace.Rate() / float64(max(open, 1)))
	return p
}
