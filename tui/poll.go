package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// tickMsg asks for a poll; gen is the generation it was scheduled in.
type tickMsg struct{ gen int }

// pollMsg is a poll's outcome, and how long it took.
type pollMsg struct {
	gen    int
	status snapshot.Status
	err    error
	took   time.Duration
}

// redrawMsg refreshes the screen once a second while disconnected, so the countdown moves.
type redrawMsg struct{}

// maxBackoff caps the wait between reconnection attempts: short, so the console says
// "connected" within a few seconds of Redis answering again (or of a right given back).
const maxBackoff = 4 * time.Second

func tick(gen int, d time.Duration) tea.Cmd {
	if d <= 0 {
		return func() tea.Msg { return tickMsg{gen} }
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{gen} })
}

// pollCmd polls src off the UI goroutine. Its arguments are copied in; it reads nothing of the
// model when it runs.
func pollCmd(ctx context.Context, src Source, gen int, refresh time.Duration, focus string) tea.Cmd {
	// Sweep for the whole interval: the next poll starts when this one is back (see
	// handlePoll), so a sweep of a big keyspace runs at its budget, not for a share of each
	// refresh. Allow a margin for the reads the slice started.
	slice, timeout := refresh, refresh+5*time.Second
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		start := time.Now()
		st, err := src.Poll(ctx, slice, focus)
		return pollMsg{gen: gen, status: st, err: err, took: time.Since(start)}
	}
}

func (m *Model) handleTick(msg tickMsg) tea.Cmd {
	if msg.gen != m.gen || m.paused || m.polling || m.ctx.Err() != nil {
		return nil // stale, paused, or a poll is still running: its result schedules the next
	}
	m.polling = true
	return pollCmd(m.ctx, m.c.opt.Source, m.gen, m.c.opt.Refresh, m.views[m.active].family())
}

func (m *Model) handlePoll(msg pollMsg) tea.Cmd {
	m.polling = false
	m.conn = msg.status.Conn
	// The next poll is scheduled here whatever generation this one was: a tick sent while it ran
	// (a resume, say) was dropped, and only this can start polling again.
	if msg.err != nil {
		if c := m.conn.Condition; c == snapshot.Connected || c == snapshot.Late { // a source that does not say: a fault that may pass
			m.conn.Condition = snapshot.Unreachable
		}
		m.err = msg.err
		m.failures++
		m.c.stale = true
		wait := min(time.Second<<min(m.failures-1, 4), maxBackoff)
		m.retryAt = m.c.now().Add(wait)
		if m.paused {
			return nil
		}
		var cmds []tea.Cmd
		if !m.redrawing { // one chain of redraws at a time, however many polls fail
			m.redrawing = true
			cmds = append(cmds, redraw())
		}
		return tea.Batch(append(cmds, tick(m.gen, wait))...)
	}
	m.c.status, m.c.polledAt = msg.status, m.c.now()
	m.c.record()
	for _, v := range m.views { // every view's rows, so a view switched to shows this poll's
		v.sync()
	}
	m.err, m.failures, m.c.stale = nil, 0, false
	if m.paused {
		return nil
	}
	// A poll every refresh: at once when this one swept the whole interval (a big keyspace),
	// else (its sweep completed early) the rest of the interval later. The drill-down level on
	// screen reads its keys again at the console's rate.
	return tea.Batch(tick(m.gen, m.c.opt.Refresh-msg.took), m.views[m.active].refresh())
}

func redraw() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return redrawMsg{} })
}

// handleRedraw keeps redrawing once a second while disconnected, so the countdown moves.
func (m *Model) handleRedraw(redrawMsg) tea.Cmd {
	if m.err == nil {
		m.redrawing = false
		return nil
	}
	return redraw()
}
