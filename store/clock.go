package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Clock is the Redis server's clock as seen from here: the server time read with TIME, carried
// forward by the local clock's elapsed time since. Windows follow it, so every writer cuts the
// same hour even when app servers' clocks drift apart.
//
// Elapsed time is measured on the local monotonic clock (time.Now's), so a step of the local wall
// clock (an NTP correction, an operator's date -s) does not move the server time it gives.
type Clock struct {
	local   func() time.Time
	refresh time.Duration

	mu          sync.Mutex
	serverAt    time.Time // server time at the last measure
	localAt     time.Time // local time at the same instant (with its monotonic reading)
	measuredYet bool
}

// NewClock returns a clock that reads local (time.Now when nil) and wants a new measure every
// refresh (a minute when zero).
func NewClock(local func() time.Time, refresh time.Duration) *Clock {
	if local == nil {
		local = time.Now
	}
	if refresh <= 0 {
		refresh = time.Minute
	}
	return &Clock{local: local, refresh: refresh}
}

// Sync measures the server clock with one TIME call, taking the midpoint of the round trip.
func (c *Clock) Sync(ctx context.Context, rdb redis.UniversalClient) error {
	before := c.local()
	server, err := rdb.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("store: read server clock: %w", err)
	}
	after := c.local()
	c.mu.Lock()
	// The server read its clock somewhere in the round trip: take the midpoint.
	c.serverAt, c.localAt = server, before.Add(after.Sub(before)/2)
	c.measuredYet = true
	c.mu.Unlock()
	return nil
}

// SyncIfStale measures again when the last measure is older than the refresh interval. It also
// measures when the local clock reads earlier than it did then: a clock without a monotonic reading
// stepped back. So drift between the two clocks never builds up.
func (c *Clock) SyncIfStale(ctx context.Context, rdb redis.UniversalClient) error {
	c.mu.Lock()
	since := c.local().Sub(c.localAt)
	stale := !c.measuredYet || since >= c.refresh || since < 0
	c.mu.Unlock()
	if !stale {
		return nil
	}
	return c.Sync(ctx, rdb)
}

// Now returns the server's current time.
func (c *Clock) Now() time.Time {
	now := c.local()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.measuredYet {
		return now
	}
	return c.serverAt.Add(now.Sub(c.localAt))
}

// Offset returns how far the server clock is ahead of the local wall clock.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serverAt.Sub(c.localAt.Round(0))
}

// Sleep waits d, or less when ctx ends first (then its error). It is how every paced loop of
// hourglass waits for its budget: a sweep, a search, a bulk action.
func Sleep(ctx context.Context, d time.Duration) error {
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
