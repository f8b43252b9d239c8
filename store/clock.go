package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Clock is the Redis server's clock as seen from here: the local clock plus an offset measured
// with TIME. Windows follow it, so every writer cuts the same hour even when app servers' clocks
// drift apart.
type Clock struct {
	local   func() time.Time
	refresh time.Duration

	mu       sync.Mutex
	offset   time.Duration
	measured time.Time // local time of the last measure; zero before the first
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

// Sync measures the offset with one TIME call, taking the midpoint of the round trip.
func (c *Clock) Sync(ctx context.Context, rdb redis.UniversalClient) error {
	before := c.local()
	server, err := rdb.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("store: read server clock: %w", err)
	}
	after := c.local()
	mid := before.Add(after.Sub(before) / 2)
	c.mu.Lock()
	c.offset = server.Sub(mid)
	c.measured = after
	c.mu.Unlock()
	return nil
}

// SyncIfStale measures again when the last measure is older than the refresh interval, or when
// the local clock has stepped back past it (an NTP correction), which would leave the offset wrong
// until the local clock caught up.
func (c *Clock) SyncIfStale(ctx context.Context, rdb redis.UniversalClient) error {
	c.mu.Lock()
	since := c.local().Sub(c.measured)
	stale := c.measured.IsZero() || since >= c.refresh || since < 0
	c.mu.Unlock()
	if !stale {
		return nil
	}
	return c.Sync(ctx, rdb)
}

// Now returns the server's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.local().Add(off)
}

// Offset returns how far the server clock is ahead of the local one.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}
