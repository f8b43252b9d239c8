package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// connState is what the header says of the connection, from the watcher's word on the last poll:
// unreachable, a refusal, connected but the sweep late, or connected.
func (m *Model) connState() string {
	st, cs := m.c.styles, m.conn
	switch {
	case m.err != nil && cs.Condition == snapshot.Denied:
		return st.Bad.Render("● permission denied: " + cs.Refused)
	case m.err != nil && cs.Condition == snapshot.Failing:
		return st.Bad.Render("● " + oneLine(m.err.Error()))
	case m.err != nil:
		return st.Bad.Render("● unreachable")
	case m.c.polledAt.IsZero():
		return st.Muted.Render("○ connecting")
	case m.paused:
		return st.Warn.Render("‖ paused")
	case cs.Condition == snapshot.Late:
		from := cs.LastSweep
		if from.IsZero() {
			from = m.c.status.Sweep.Started
		}
		return st.Warn.Render("● connected but the sweep is late (stalled " + ago(m.c.now().Sub(from).Truncate(time.Second)) + ")")
	}
	return st.Good.Render("● connected")
}

// failoverShown is how long the header says a failover happened.
const failoverShown = time.Minute

// failoverText is the header's word on a failover the Watcher found in the last minute: the
// primary the Sentinels moved it to, and how long ago.
func (m *Model) failoverText() string {
	cs := m.conn
	if cs.FailoverAt.IsZero() || m.c.now().Sub(cs.FailoverAt) > failoverShown {
		return ""
	}
	return "failover: primary now " + cs.Primary + " (" + ago(m.c.now().Sub(cs.FailoverAt).Truncate(time.Second)) + " ago)"
}

// banner says why the last poll failed, when the next attempt runs, and how old the data is.
func (m *Model) banner(w int) string {
	what := "Redis unreachable"
	switch m.conn.Condition {
	case snapshot.Denied:
		what = "permission denied: " + m.conn.Refused
	case snapshot.Failing:
		what = "Redis refused the sweep"
	}
	wait := m.retryAt.Sub(m.c.now())
	text := fmt.Sprintf(" ✖ %s · retry in %ds (attempt %d)", what, max(int(wait.Seconds()+0.999), 0), m.failures+1)
	if !m.conn.Since.IsZero() && m.failures > 1 {
		text += " · for " + ago(m.c.now().Sub(m.conn.Since).Truncate(time.Second))
	}
	if !m.c.polledAt.IsZero() {
		text += " · data " + ago(m.c.now().Sub(m.c.polledAt)) + " old"
	}
	text += " · " + oneLine(m.err.Error())
	return m.c.styles.Banner.Render(fit(text, w))
}

// readsText is the header's word on where the sweep reads when a replica is asked for: the
// replica, how far behind it is, and the replicas left and why. Reads moved to the primary
// say so plainly: that is the load read_from = "replica" was to spare it.
func (m *Model) readsText() string {
	rs, st := m.conn.Reads, m.c.styles
	if rs == nil {
		return ""
	}
	left := strings.Join(rs.Left, ", ")
	if rs.Replica == "" {
		return st.Warn.Render(strings.TrimSuffix("PRIMARY reads: "+left, ": "))
	}
	text := "reads: replica " + rs.Replica
	if rs.Lag >= time.Second {
		text += ", " + ago(rs.Lag.Truncate(time.Second)) + " behind"
	}
	if left != "" {
		return st.Warn.Render(text + " (left " + left + ")")
	}
	return st.Muted.Render(text)
}
