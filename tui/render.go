package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// View draws the whole screen: header, banner when disconnected, tabs, the view, footer.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "hourglass: " + m.c.opt.Target
	return v
}

// Render is View's content, exactly the terminal's size.
func (m *Model) Render() string {
	w, h := m.c.width, m.c.height
	if w < 20 || h < 6 {
		return "hourglass: the terminal is too small"
	}
	top := append(m.header(w), m.tabBar(w))
	if crumbs := m.views[m.active].crumbs(); len(crumbs) > 0 {
		top = append(top, m.breadcrumb(crumbs, w))
	}
	if m.err != nil {
		top = append([]string{m.banner(w)}, top...)
	}
	bottom := m.footer(w)
	bodyH := max(h-len(top)-1, 1)
	var body string
	switch {
	case m.showHelp:
		body = m.overlay(w, bodyH, m.helpLines(max(w-4, 16))) // the box's border and padding take 4 cells
	case m.keyConfirm != nil:
		body = m.overlay(w, bodyH, m.keyConfirmText())
	case m.modal != nil:
		body = m.overlay(w, bodyH, m.modalText())
	case m.prompt != nil:
		body = m.overlay(w, bodyH, m.promptText())
	default:
		body = m.views[m.active].render(w, bodyH)
		if m.c.stale {
			body = m.c.styles.Stale.Render(stripStyles(body))
		}
	}
	lines := append(top, blockLines(body, w, bodyH)...)
	lines = append(lines, bottom)
	return strings.Join(lines, "\n")
}

// header is two lines: who and what is on screen, then the server's numbers.
func (m *Model) header(w int) []string {
	st, o := m.c.styles, m.c.opt
	badge := st.ReadOnly.Render("READ-ONLY")
	switch {
	case o.Demo:
		badge = st.Demo.Render("DEMO") + " " + st.WritesOn.Render("WRITES ON")
	case o.Actions != nil:
		badge = st.WritesOn.Render("WRITES ON")
	}
	line1 := st.Title.Render("hourglass") + " " + badge + " " + st.Header.Render(o.Target)
	if !strings.Contains(o.Target, o.Mode) {
		line1 += " " + st.Muted.Render("("+o.Mode+")")
	}
	if r := m.readsText(); r != "" {
		line1 += " " + r
	}
	if in := m.c.status.Inferred; in != nil {
		line1 += " " + st.Warn.Render(inferredText(in))
	}
	if n := m.activeTraffic(); n != "" {
		line1 += " " + st.Warn.Render("test traffic: "+n)
	}

	now := m.c.now().In(o.Location)
	srv := m.c.status.Server
	parts := []string{now.Format("15:04:05 MST")}
	var server []string
	var risk, short string
	switch {
	case srv.Err != "":
		parts = append(parts, st.Warn.Render("INFO refused"))
	case srv.Version != "":
		// The server's own figures, which give way first when the line is too long for the
		// terminal: what watching costs and how far the sweep has come matter more here. The
		// eviction risk stays, shortened to its policy.
		server, risk, short = newHealth(m.c).headerParts()
		parts = append(parts, server...)
	}
	parts = append(parts, m.connState())
	if f := m.failoverText(); f != "" {
		parts = append(parts, st.Warn.Render(f))
	}
	if risk != "" {
		parts = append(parts, risk)
	}
	var sweep string
	if s := m.c.status.Snapshot; s != nil {
		sweep = "sweep " + ago(m.c.now().Sub(s.TakenAt)) + " ago"
	} else if p := m.c.status.Partial; p != nil && p.Scan.Coverage > 0 {
		sweep = "first sweep " + coverageText(p.Scan.Coverage)
		if p.Scan.ETASeconds != nil {
			sweep += ", ETA " + format.Age(time.Duration(*p.Scan.ETASeconds*float64(time.Second)))
		}
	} else if m.c.status.Sweep.KeysSeen > 0 {
		sweep = "first sweep: " + format.Count(m.c.status.Sweep.KeysSeen, "key", "keys")
	}
	if c := m.c.status.Cost; c.Interval > 0 && m.err == nil { // known from the second poll, and current
		sweep = strings.TrimPrefix(sweep+", ", ", ") + format.Commas(int64(c.KeysPerSecond+0.5)) + " keys/s"
	}
	if sweep != "" {
		parts = append(parts, sweep)
	}
	if redis := m.redisTime(); redis != "" {
		parts = append(parts, redis)
	}
	sep := st.Muted.Render("  ·  ")
	line2 := strings.Join(parts, sep)
	for _, drop := range slices.Backward(server) { // mem, the replicas, then ops/s
		if lipgloss.Width(line2) <= w {
			break
		}
		parts = slices.DeleteFunc(parts, func(p string) bool { return p == drop })
		line2 = strings.Join(parts, sep)
	}
	if i := slices.Index(parts, risk); risk != "" && i >= 0 && lipgloss.Width(line2) > w {
		parts[i] = short
		line2 = strings.Join(parts, sep)
	}
	return []string{fit(line1, w), fit(line2, w)}
}

// inferredText says, in the header, that the entries watched were inferred from the keys (no
// config was given), how many, and that w writes them to a file.
func inferredText(in *snapshot.Inferred) string {
	text := "no config: " + format.Count(len(in.Entries), "entry", "entries") + " inferred"
	if in.Pending > 0 {
		text += fmt.Sprintf(" (%d from the next sweep)", in.Pending)
	}
	return text + ", w saves"
}

// redisTime says what share of one core of Redis hourglass' commands took since the last poll
// (an estimate from INFO commandstats; on a cluster, of the master they cost most), or why that
// is unknown. Nothing before a second poll.
func (m *Model) redisTime() string {
	c := m.c.status.Cost
	switch {
	case c.Interval <= 0 || m.err != nil: // before a second poll, or the last poll's is stale
		return ""
	case m.c.opt.Demo: // the embedded Redis is hourglass's own, and keeps no commandstats
		return ""
	case !c.ShareKnown:
		why, _, _ := strings.Cut(c.Err, ": ")
		return m.c.styles.Warn.Render("Redis time unknown: " + why)
	}
	pct := 100 * c.Share
	text := fmt.Sprintf("Redis time ≈%.1f%%", pct)
	if pct < 1 {
		text = fmt.Sprintf("Redis time ≈%.2f%%", pct)
	}
	if c.Masters > 1 {
		text += " (busiest master)"
	}
	return text
}

// breadcrumb says where in the drill-down the screen is: the view, then each level open below
// it. A long one keeps its end, where the operator is.
func (m *Model) breadcrumb(crumbs []string, w int) string {
	st := m.c.styles
	sep := st.Muted.Render(" › ")
	parts := append([]string{viewNames[m.active]}, crumbs...)
	for len(parts) > 2 && lipgloss.Width(strings.Join(parts, sep)) > w {
		parts = append([]string{"…"}, parts[2:]...)
	}
	last := len(parts) - 1
	parts[last] = st.Title.Render(parts[last])
	return fit(strings.Join(parts, sep), w)
}

func (m *Model) activeTraffic() string {
	var on []string
	for _, f := range m.c.opt.Families {
		if m.traffic[f.Name] {
			on = append(on, f.Name)
		}
	}
	return strings.Join(on, ", ")
}

// tabBar is the tabs, their names shortened to the first word when all of them do not fit, and
// the inactive ones to their numbers when even that does not.
func (m *Model) tabBar(w int) string {
	var bar string
	for short := range 3 {
		var tabs []string
		for i, name := range viewNames {
			if short > 0 {
				name, _, _ = strings.Cut(name, " ")
			}
			label := fmt.Sprintf("%d %s", i+1, name)
			switch {
			case i == m.active:
				tabs = append(tabs, m.c.styles.ActiveTab.Render(label))
			case short == 2:
				tabs = append(tabs, m.c.styles.Tab.Render(fmt.Sprint(i+1)))
			default:
				tabs = append(tabs, m.c.styles.Tab.Render(label))
			}
		}
		if bar = strings.Join(tabs, ""); lipgloss.Width(bar) <= w {
			break
		}
	}
	return fit(bar, w)
}

// footer is the filter line while typing, a recent action's outcome, a failing test traffic's
// fault while it lasts (an outcome newer than the fault shows first), or the short help.
func (m *Model) footer(w int) string {
	st := m.c.styles
	fault, since := m.trafficFault()
	recent := m.flash != "" && m.c.now().Sub(m.flashAt) < 8*time.Second
	switch {
	case m.filtering:
		return fit(st.Title.Render("/")+" "+m.filter+"▏"+st.Muted.Render("  enter keeps · esc clears"), w)
	case recent && (fault == "" || m.flashAt.After(since.Since)):
		return fit(st.Warn.Render(m.flash), w)
	case fault != "":
		return fit(st.Bad.Render(fault), w)
	}
	if m.filter == "" {
		return fit(m.footerHelp(w), w)
	}
	prefix := st.Title.Render("filter: "+m.filter) + "  "
	return fit(prefix+m.footerHelp(w-lipgloss.Width(prefix)), w)
}

// overlay centres a boxed text in the body's area.
func (m *Model) overlay(w, h int, lines []string) string {
	// Taller than the body (a short terminal): the first lines, a mark of what is cut, and the
	// last line, which says how to close the overlay or holds what is being typed. The border
	// takes two lines.
	if most := h - 2; len(lines) > most && most >= 3 {
		last := lines[len(lines)-1]
		lines = append(append(lines[:most-2:most-2], m.c.styles.Muted.Render("… (a taller terminal shows the rest)")), last)
	}
	box := m.c.styles.Overlay.Render(strings.Join(lines, "\n"))
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}

// blockLines cuts or pads s to exactly h lines of w cells.
func blockLines(s string, w, h int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = fit(l, w)
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return lines
}
