package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	limitSliding = luaScript("limit_sliding")
	limitFixed   = luaScript("limit_fixed")
)

// LimiterKind says how a limiter counts.
type LimiterKind int

const (
	// Sliding counts hits in the window ending now: a sorted set of hit times per key.
	Sliding LimiterKind = iota
	// Fixed counts hits in fixed windows aligned to the clock: an integer per key that expires
	// at the window's end.
	Fixed
)

func (k LimiterKind) String() string {
	if k == Fixed {
		return "fixed"
	}
	return "sliding"
}

// LimiterSpec describes a rate limiter as a config file gives it.
type LimiterSpec struct {
	Name    string
	Pattern string // e.g. "rl:api:<user>", no <window>
	Kind    LimiterKind
	Window  time.Duration
	Limit   int64
}

// Limiter allows at most Limit hits per Window for each key of its pattern. Every decision is
// one atomic script; a check-then-add (ZCARD, then ZADD) lets concurrent clients through past
// the limit, this does not. Allowed and rejected hits are also counted per hour, in the
// counter family LimiterStats returns, so rates can be watched; those counts are batched and
// written by Flush.
type Limiter struct {
	s       *Store
	spec    LimiterSpec
	pattern *Pattern
	stats   *Family
	id      string
	seq     atomic.Uint64

	mu               sync.Mutex
	allowed, refused int64 // not yet flushed
	w                *Writer
}

// Decision is a limiter's answer for one hit.
type Decision struct {
	Allowed    bool
	Remaining  int64         // hits left in the window
	RetryAfter time.Duration // when refused: until a hit would be allowed
}

// NewLimiter validates spec and returns its limiter.
func (s *Store) NewLimiter(spec LimiterSpec) (*Limiter, error) {
	if spec.Name == "" {
		return nil, &SpecError{"name", "a limiter needs a name"}
	}
	p, err := ParseKeyPattern(spec.Pattern)
	if err != nil {
		return nil, &SpecError{"pattern", err.Error()}
	}
	if spec.Window < time.Millisecond {
		return nil, &SpecError{"window", "must be at least 1ms"}
	}
	if spec.Limit < 1 {
		return nil, &SpecError{"limit", "must be at least 1"}
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	return &Limiter{s: s, spec: spec, pattern: p, stats: LimiterStats(spec.Name), id: hex.EncodeToString(id[:]),
		w: s.NewWriter(WriterOptions{})}, nil
}

// LimiterStats is the counter family of a limiter's allowed and rejected hits: dims "limiter" and
// "outcome" (allowed or rejected), hour windows kept 48 hours. Its keys start with hourglass:, so
// sweeps leave them out; the snapshot reads them directly.
func LimiterStats(name string) *Family {
	f, err := NewFamily(FamilySpec{Name: "limiter:" + name, Pattern: limitKeyPattern,
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		panic(err) // a constant spec
	}
	return f
}

// Spec returns the limiter's spec.
func (l *Limiter) Spec() LimiterSpec { return l.spec }

// Key returns the limiter's key for dims.
func (l *Limiter) Key(dims ...string) (string, error) { return l.pattern.Key(dims, "") }

// Allow decides one hit for the key of dims.
func (l *Limiter) Allow(ctx context.Context, dims ...string) (Decision, error) {
	key, err := l.Key(dims...)
	if err != nil {
		return Decision{}, fmt.Errorf("store: limiter %s: %w", l.spec.Name, err)
	}
	var res []int64
	if l.spec.Kind == Fixed {
		res, err = limitFixed.Run(ctx, l.s.rdb, []string{key}, l.spec.Limit, l.spec.Window.Milliseconds()).Int64Slice()
	} else {
		member := fmt.Sprintf("%s-%d", l.id, l.seq.Add(1)) // unique per hit; the score is the server's time
		res, err = limitSliding.Run(ctx, l.s.rdb, []string{key}, l.spec.Window.Milliseconds(), l.spec.Limit, member).Int64Slice()
	}
	if err != nil {
		return Decision{}, fmt.Errorf("store: limiter %s: %w", l.spec.Name, err)
	}
	if len(res) != 3 {
		return Decision{}, fmt.Errorf("store: limiter %s: script answered %d values, want 3", l.spec.Name, len(res))
	}
	d := Decision{Allowed: res[0] == 1, Remaining: res[1], RetryAfter: time.Duration(res[2]) * time.Millisecond}
	l.mu.Lock()
	if d.Allowed {
		l.allowed++
	} else {
		l.refused++
	}
	l.mu.Unlock()
	return d, nil
}

// Flush writes the allowed and rejected hits counted since the last Flush into the hour windows
// of LimiterStats, exactly once, and keeps what it could not write for the next Flush.
func (l *Limiter) Flush(ctx context.Context) error {
	l.mu.Lock()
	a, r := l.allowed, l.refused
	l.allowed, l.refused = 0, 0
	if a > 0 {
		_ = l.w.Add(l.stats, []string{l.spec.Name, "allowed"}, a, time.Time{})
	}
	if r > 0 {
		_ = l.w.Add(l.stats, []string{l.spec.Name, "rejected"}, r, time.Time{})
	}
	l.mu.Unlock()
	_, err := l.w.Flush(ctx)
	return err
}
