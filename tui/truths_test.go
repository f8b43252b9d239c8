package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
)

// limitsStatus is testStatus with one python limits limiter, whose keys spell their own limit
// and window: a moving window at its limit whose hits were spread over the minute (the next hit
// is allowed in 10 s, while the key lives 55 s more), and a fixed window below its limit.
func limitsStatus(t *testing.T) snapshot.Status {
	st := testStatus(t)
	snap := *st.Snapshot
	rem0, rem3, lim3, lim5, none := int64(0), int64(3), int64(3), int64(5), int64(0)
	// Only the fixed window's key counts what it refuses; the moving window's keeps no such count.
	snap.Limiters = []snapshot.Limiter{{Name: "flask", Layout: "limits", Kind: "fixed+moving", Keys: 2, Hits: 5, AtLimit: 1,
		RefusedInWindow: &none, RefusedKeys: 1,
		Top: []snapshot.KeyCount{
			{Key: "LIMITER/moving/spread/3/1/minute", Raw: "LIMITER/moving/spread/3/1/minute", Count: 3, TTLMS: 10_000, AtLimit: true, Remaining: &rem0, Limit: &lim3},
			{Key: "LIMITER/fixed/under/5/1/minute", Raw: "LIMITER/fixed/under/5/1/minute", Count: 2, TTLMS: 55_000, Remaining: &rem3, Limit: &lim5, Refused: &none}}}}
	snap.Locks = nil
	st.Snapshot = &snap
	return st
}

// The Limiters view's drill-down into a python limits limiter: its header says the limit and
// window are each key's own, and a key at its limit says when the next hit is allowed (which is
// not its TTL), against the files under testdata/.
func TestGoldenLimitsDrillDown(t *testing.T) {
	rem := int64(0)
	detail := snapshot.LimiterKeyDetail{Limiter: "flask", Key: "LIMITER/moving/spread/3/1/minute", Hits: 3, Limit: 3, Remaining: &rem,
		TTLMS: 55_000, AtLimit: true, AllowedInMS: 10_000, BucketsNote: "the limits layout keeps one count per window", ReadAt: clock,
		Command: "redis-cli -h 10.0.0.5 -p 6379 LRANGE LIMITER/moving/spread/3/1/minute 0 -1"}
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		for name, keys := range map[string][]string{"limits_keys": {"5", "enter"}, "limits_key": {"5", "enter", "enter"}} {
			in := &fakeInspector{pages: hostilePages(), limKey: &detail}
			opt := Options{Target: "10.0.0.5:6379", Mode: "standalone", Source: &fakeSource{status: limitsStatus(t)}, Refresh: time.Second,
				Now: func() time.Time { return clock }, Location: time.UTC, ReadOnlyWhy: "read-only: start with --allow-writes", Inspector: in}
			m := New(opt, theme.New(theme.Dark))
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			poll(t, m)
			drive(m, keys...)
			golden(t, fmt.Sprintf("drill_%s_%dx%d", name, size[0], size[1]), screen(m))
		}
	}
}

// With nothing unclaimed, the Unclaimed view says so, and speaks of no memory: the Result is the
// one discover gives for no key.
func TestGoldenUnclaimedNothing(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	snap.Unclaimed = discover.New(discover.Options{Location: time.UTC}).Result()
	st.Snapshot, st.Unclaimed = &snap, snap.Unclaimed
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		opt := Options{Target: "10.0.0.5:6379", Mode: "standalone", Source: &fakeSource{status: st}, Refresh: time.Second,
			Now: func() time.Time { return clock }, Location: time.UTC}
		m := New(opt, theme.New(theme.Dark))
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		poll(t, m)
		press(m, "7")
		golden(t, fmt.Sprintf("unclaimed_nothing_%dx%d", size[0], size[1]), screen(m))
	}
}
