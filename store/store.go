package store

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options tune a Store. The zero value is usable.
type Options struct {
	// Location is the time zone windows are cut in (time.Local when nil).
	Location *time.Location
	// LocalClock reads the local clock (time.Now when nil); tests give a skewed one.
	LocalClock func() time.Time
	// ClockRefresh is how often the server clock offset is measured again (a minute when zero).
	ClockRefresh time.Duration
}

// Store reads and writes hourglass structures in one Redis or Redis Cluster.
type Store struct {
	rdb   redis.UniversalClient
	loc   *time.Location
	clock *Clock

	scriptsLoaded atomic.Bool // set by LoadScripts; a writer loads them before its first flush
}

// New returns a Store over rdb. Call Init before writing.
func New(rdb redis.UniversalClient, opt Options) *Store {
	loc := opt.Location
	if loc == nil {
		loc = time.Local
	}
	return &Store{rdb: rdb, loc: loc, clock: NewClock(opt.LocalClock, opt.ClockRefresh)}
}

// Init measures the server clock. It only reads (TIME), so it works for a read-only user; the
// scripts are loaded when something first writes.
func (s *Store) Init(ctx context.Context) error {
	return s.clock.Sync(ctx, s.rdb)
}

// Location returns the time zone windows are cut in.
func (s *Store) Location() *time.Location { return s.loc }

// Client returns the Redis client the store uses.
func (s *Store) Client() redis.UniversalClient { return s.rdb }

// Clock returns the server clock.
func (s *Store) Clock() *Clock { return s.clock }

// Now returns the Redis server's current time.
func (s *Store) Now() time.Time { return s.clock.Now() }

// serverNow returns the server's now, measuring the clock offset again when it is due. A TIME
// that fails is not reported here: the command that follows fails the same way and says so.
func (s *Store) serverNow(ctx context.Context) time.Time {
	_ = s.clock.SyncIfStale(ctx, s.rdb)
	return s.clock.Now()
}

// eventTime is at, or the server's now when at is zero.
func (s *Store) eventTime(ctx context.Context, at time.Time) time.Time {
	if at.IsZero() {
		return s.serverNow(ctx)
	}
	return at
}
