package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// keyConfirm is the overlay that asks before a drill-down's write on one task or key. It says what
// will be done. It is confirmed as the repair overlay is: the target's name typed on a real Redis,
// y on the embedded one.
type keyConfirm struct {
	title   string
	lines   []string
	confirm string // the text that confirms: the target's name on a real Redis; "" for y
	typed   string
	wrong   bool
	after   level // read again once the write answered
	run     func(ctx context.Context, a KeyActions) (string, error)
	start   func() tea.Cmd // set instead of run: a bulk action, which runs until done or stopped
}

// askMsg opens a keyConfirm.
type askMsg struct{ kc *keyConfirm }

// keyActionMsg is a drill-down write's outcome.
type keyActionMsg struct {
	text  string
	err   error
	after level
}

// ask opens the confirmation of a write, or says why writes are off.
func (c *console) ask(title string, lines []string, after level, run func(context.Context, KeyActions) (string, error)) tea.Cmd {
	if c.opt.KeyActions == nil {
		why := c.opt.ReadOnlyWhy
		if why == "" {
			why = "this console writes nothing"
		}
		c.flash(title + " is off: " + why)
		return nil
	}
	kc := &keyConfirm{title: title, lines: lines, after: after, run: run}
	if c.opt.Mode != "embedded" {
		kc.confirm = c.opt.Target
		if c.opt.Name != "" {
			kc.confirm = c.opt.Name
		}
	}
	return func() tea.Msg { return askMsg{kc} }
}

// stamp is an instant as the drill-down shows it, to the second, in the console's zone.
func (c *console) stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(c.opt.Location).Format("2006-01-02 15:04:05")
}

// keyConfirmKey serves the overlay: esc cancels; y (or the typed name and enter) runs it.
func (m *Model) keyConfirmKey(msg tea.KeyPressMsg) tea.Cmd {
	kc, k := m.keyConfirm, m.c.keys
	if key.Matches(msg, k.Back) {
		m.keyConfirm = nil
		m.flashf(kc.title + ": cancelled, nothing written")
		return nil
	}
	if kc.confirm != "" {
		switch {
		case key.Matches(msg, k.Enter):
			if kc.typed != kc.confirm {
				kc.typed, kc.wrong = "", true
				return nil
			}
		case key.Matches(msg, k.Erase):
			if r := []rune(kc.typed); len(r) > 0 {
				kc.typed = string(r[:len(r)-1])
			}
			return nil
		default:
			kc.typed += msg.Text
			return nil
		}
	} else if !key.Matches(msg, k.Confirm) {
		return nil
	}
	m.keyConfirm = nil
	if kc.start != nil {
		return kc.start()
	}
	act, ctx := m.c.opt.KeyActions, m.ctx
	m.flashf(kc.title + "…")
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		text, err := kc.run(ctx, act)
		return keyActionMsg{text: text, err: err, after: kc.after}
	}
}

// handleKeyAction says what the write did, and reads the level again to show it.
func (m *Model) handleKeyAction(msg keyActionMsg) tea.Cmd {
	if msg.err != nil {
		m.flashf(oneLine(msg.err.Error()))
	} else {
		m.flashf(msg.text)
	}
	if msg.after != nil {
		return msg.after.refresh()
	}
	return nil
}

// keyConfirmText is the overlay's body.
func (m *Model) keyConfirmText() []string {
	kc, st := m.keyConfirm, m.c.styles
	w := max(m.c.width-8, 20)
	lines := []string{st.Title.Render(kc.title), ""}
	for _, l := range kc.lines {
		lines = append(lines, wrapWords(l, w)...)
	}
	lines = append(lines, "")
	if kc.confirm == "" {
		return append(lines, "y does it, esc cancels.")
	}
	lines = append(lines, wrapWords("Type the target's name ("+kc.confirm+") and enter to do it; esc cancels.", w)...)
	lines = append(lines, "> "+kc.typed+"▏")
	if kc.wrong {
		lines = append(lines, st.Bad.Render("That is not the target's name; nothing was written."))
	}
	return lines
}
