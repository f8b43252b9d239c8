package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"hourglass/internal/discover"
	"hourglass/theme"
)

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
