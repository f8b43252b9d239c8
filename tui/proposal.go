package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
)

// The Unclaimed view's session changes: a adds the selected group's entry to the running session
// (Session.Claim), w writes the proposal to a file the operator names (Session.WriteProposal).
// Both run in tea.Cmds; the overlay (prompt) asks before a low-confidence entry is added, and for
// the file's path.

// claim is what became of a group's entry in this session.
type claim struct {
	state claimState
	text  string // what the session now counts, or why it refused
}

type claimState int

const (
	claimPending claimState = iota
	claimAdded
	claimRefused
)

func (s claimState) String() string {
	return [...]string{"adding…", "added", "refused"}[s]
}

// claimMsg is Session.Claim's answer for the group of pattern.
type claimMsg struct {
	pattern string
	text    string
	err     error
}

// proposalMsg is Session.WriteProposal's answer.
type proposalMsg struct {
	path string
	text string
	err  error
}

// prompt is the Unclaimed view's overlay: a low-confidence entry to confirm, or the path of the
// file to write the proposal to.
type prompt struct {
	write    bool           // the path prompt; else the confirmation of group's entry
	group    discover.Group // the group to add
	proposal Proposal       // what to write, as on screen when w was pressed
	typed    string         // the path typed so far
	busy     bool           // the write is under way
	err      string         // why the last path was refused: the operator names another
}

// unclaimedKey serves a (add the selected group) and w (propose: write the proposal), which act
// on the Unclaimed view's groups.
func (m *Model) unclaimedKey(propose bool) tea.Cmd {
	v, ok := m.views[m.active].(*unclaimed)
	if !ok && propose && m.c.status.Inferred != nil {
		// With the entries inferred, w writes them from any view: the header says so.
		v, ok = m.unclaimedView()
	}
	if !ok {
		m.flashf(fmt.Sprintf("%s and %s act on the Unclaimed view (%d)", m.c.keys.Claim.Help().Key, m.c.keys.Propose.Help().Key, len(viewNames)))
		return nil
	}
	if m.c.opt.Session == nil {
		m.flashf("adding to the session and writing a proposal are off in this console")
		return nil
	}
	if propose {
		m.prompt = &prompt{write: true, proposal: v.proposal()}
		return nil
	}
	g := v.selected()
	switch {
	case g == nil:
		m.flashf("no group selected")
	case g.Entry == nil:
		m.flashf("nothing to add for " + discover.Printable(g.Pattern) + ": " + noEntryWhy(g.Kind))
	case m.claimed(g.Pattern):
		m.flashf(discover.Printable(g.Pattern) + ": " + m.c.claims[g.Pattern].state.String() + " already")
	case g.Confidence == discover.Low:
		m.prompt = &prompt{group: *g}
	default:
		return m.claim(*g)
	}
	return nil
}

// unclaimedView is the console's Unclaimed view.
func (m *Model) unclaimedView() (*unclaimed, bool) {
	for _, v := range m.views {
		if u, ok := v.(*unclaimed); ok {
			return u, true
		}
	}
	return nil, false
}

// claimed reports whether the group of pattern has been added, or is being added; a refused one
// may be tried again.
func (m *Model) claimed(pattern string) bool {
	cl, ok := m.c.claims[pattern]
	return ok && cl.state != claimRefused
}

// claim adds g's entry to the session in a Cmd.
func (m *Model) claim(g discover.Group) tea.Cmd {
	sess, ctx, entry, pattern := m.c.opt.Session, m.ctx, *g.Entry, g.Pattern
	m.c.claims[pattern] = claim{state: claimPending}
	m.flashf(fmt.Sprintf("adding [[%s]] %s to the session…", entry.Table, entry.Name))
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		text, err := sess.Claim(ctx, entry)
		return claimMsg{pattern: pattern, text: text, err: err}
	}
}

func (m *Model) handleClaim(msg claimMsg) tea.Cmd {
	if msg.err != nil {
		m.c.claims[msg.pattern] = claim{state: claimRefused, text: oneLine(msg.err.Error())}
		m.flashf("not added: " + oneLine(msg.err.Error()))
		return nil
	}
	m.c.claims[msg.pattern] = claim{state: claimAdded, text: msg.text}
	m.flashf(msg.text)
	return nil
}

// promptKey serves the overlay: esc closes it; y adds a low-confidence entry; the path prompt
// takes text, backspace, and enter to write.
func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	p, k := m.prompt, m.c.keys
	switch {
	case key.Matches(msg, k.Back):
		m.prompt = nil
	case !p.write:
		if key.Matches(msg, k.Confirm) {
			m.prompt = nil
			return m.claim(p.group)
		}
	case p.busy: // the write is under way: its answer closes the prompt or says why not
	case key.Matches(msg, k.Enter):
		if strings.TrimSpace(p.typed) == "" {
			p.err = "type the path of a new file"
			return nil
		}
		p.busy, p.err = true, ""
		return m.writeProposal(p.typed, p.proposal)
	case key.Matches(msg, k.Erase):
		if r := []rune(p.typed); len(r) > 0 {
			p.typed = string(r[:len(r)-1])
		}
	default:
		p.typed += msg.Text
	}
	return nil
}

// writeProposal writes the proposal to path in a Cmd.
func (m *Model) writeProposal(path string, p Proposal) tea.Cmd {
	sess, ctx := m.c.opt.Session, m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		text, err := sess.WriteProposal(ctx, path, p)
		return proposalMsg{path: path, text: text, err: err}
	}
}

// handleProposal closes the path prompt when the file was written; when it was refused (a file
// that exists) the prompt stays, saying why, for another path.
func (m *Model) handleProposal(msg proposalMsg) tea.Cmd {
	p := m.prompt
	if msg.err != nil {
		if p != nil && p.write && p.busy {
			p.busy, p.err = false, oneLine(msg.err.Error())
			return nil
		}
		m.flashf("writing " + msg.path + " failed: " + oneLine(msg.err.Error()))
		return nil
	}
	if p != nil && p.write {
		m.prompt = nil
	}
	m.flashf(msg.text)
	return nil
}

// promptText is the overlay's body.
func (m *Model) promptText() []string {
	p, st := m.prompt, m.c.styles
	if !p.write {
		g := p.group
		lines := []string{st.Title.Render("Add a low-confidence entry?"), "",
			fmt.Sprintf("%s: %s, %s. The evidence does not settle it:", discover.Printable(g.Pattern), g.Kind, format.Count(g.Keys, "key", "keys"))}
		width := max(m.c.width-12, 20) // the overlay's border and padding, and a margin
		for _, e := range g.Evidence {
			lines = append(lines, "  • "+strings.ReplaceAll(ansi.Wordwrap(discover.Printable(e), width-4, ""), "\n", "\n    "))
		}
		lines = append(lines, "", "The session would count its keys under:")
		for _, l := range strings.Split(strings.TrimRight(g.Entry.TOML(), "\n"), "\n") {
			lines = append(lines, "  "+discover.Printable(l))
		}
		return append(lines, "", "y adds it to this session (no file is written); esc cancels.")
	}
	lines := []string{st.Title.Render("Write the proposal to a new file"), "",
		"Your config's text, then an entry for every group that has one",
		"(low-confidence ones commented out). An existing file is never overwritten.", "",
		"> " + discover.Printable(p.typed) + "▏"}
	switch {
	case p.busy:
		lines = append(lines, st.Muted.Render("writing…"))
	case p.err != "":
		lines = append(lines, st.Bad.Render(p.err))
	}
	return append(lines, "", st.Muted.Render("enter writes · esc cancels"))
}
