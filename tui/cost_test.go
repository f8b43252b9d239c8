package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// The header says what watching costs: the keys swept a second and the share of Redis' time
// hourglass' commands took, marked as an estimate; on a cluster, of the busiest master; and when
// commandstats is refused, that the share is unknown and why, never a 0.
func TestHeaderSaysWhatWatchingCosts(t *testing.T) {
	for _, c := range []struct {
		cost      snapshot.Cost
		want, not string
	}{
		{snapshot.Cost{}, "sweep 0s ago  ", "keys/s"}, // a first poll: nothing measured yet
		{snapshot.Cost{Interval: time.Second, KeysPerSecond: 19812.4, Share: 0.0412, ShareKnown: true, Masters: 1},
			"sweep 0s ago, 19,812 keys/s  ·  Redis time ≈4.1%", "busiest"},
		{snapshot.Cost{Interval: time.Second, KeysPerSecond: 3300, Share: 0.0071, ShareKnown: true, Masters: 3},
			"3,300 keys/s  ·  Redis time ≈0.71% (busiest master)", ""},
		{snapshot.Cost{Interval: time.Second, KeysPerSecond: 3300, Err: "INFO commandstats refused: NOPERM User watcher has no permissions to run the 'info' command"},
			"3,300 keys/s  ·  Redis time unknown: INFO commandstats refused", "≈"},
	} {
		st := testStatus(t)
		st.Cost = c.cost
		m := newTestModel(t, &fakeSource{status: st}, nil, 160, 36)
		poll(t, m)
		header := strings.Split(screen(m), "\n")[1]
		if !strings.Contains(header, c.want) || (c.not != "" && strings.Contains(header, c.not)) {
			t.Errorf("cost %+v: the header reads\n%s\nwant %q, and no %q", c.cost, header, c.want, c.not)
		}
	}
}
