package tui

import (
	"context"
	"fmt"
	"sort"

	tea "charm.land/bubbletea/v2"
)

// trafficMsg is the steady test traffic's news, from Actions.TrafficNews.
type trafficMsg struct{ news []TrafficNews }

// listenTraffic waits, off the UI goroutine, for the test traffic's next news.
func listenTraffic(ctx context.Context, act Actions) tea.Cmd {
	return func() tea.Msg {
		news := act.TrafficNews(ctx)
		if news == nil {
			return nil // the console is closing
		}
		return trafficMsg{news: news}
	}
}

// handleTraffic keeps each failing traffic's fault for the status line, says when one passes or
// a traffic ends by itself, and listens again.
func (m *Model) handleTraffic(msg trafficMsg) tea.Cmd {
	for _, n := range msg.news {
		if !m.traffic[n.Family] {
			continue // stopped meanwhile: its news is old
		}
		switch {
		case n.Ended:
			delete(m.trafficFaults, n.Family)
			m.traffic[n.Family] = false
			text := "test traffic into " + n.Family + " stopped"
			if n.Err != nil {
				text += ": " + oneLine(n.Err.Error())
			}
			m.flashf(text)
		case n.Err != nil:
			m.trafficFaults[n.Family] = n
		default:
			delete(m.trafficFaults, n.Family)
			m.flashf(fmt.Sprintf("traffic into %s: writes go through again, after %s of errors", n.Family, ago(m.c.now().Sub(n.Since))))
		}
	}
	if m.ctx.Err() != nil {
		return nil
	}
	return listenTraffic(m.ctx, m.c.opt.Actions)
}

// trafficFault is the status line's word on a failing test traffic ("" when none fails), and
// when that fault began. How long it has failed comes before the error, which a narrow screen
// cuts.
func (m *Model) trafficFault() (string, TrafficNews) {
	var fams []string
	for f := range m.trafficFaults {
		fams = append(fams, f)
	}
	if len(fams) == 0 {
		return "", TrafficNews{}
	}
	sort.Strings(fams)
	n := m.trafficFaults[fams[0]]
	text := fmt.Sprintf("traffic into %s (retrying, failing for %s): %s", n.Family, ago(m.c.now().Sub(n.Since)), oneLine(n.Err.Error()))
	if len(fams) > 1 {
		text += fmt.Sprintf("; %d more failing", len(fams)-1)
	}
	return text, n
}
