package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// injectBurst is how many events `i` writes.
const injectBurst = 1000

// actionMsg is a write action's outcome, for the footer. repair is the overlay id of the repair
// it reports, 0 for other actions.
type actionMsg struct {
	text   string
	err    error
	repair int
}

// repairPreviewMsg is a dry run's count, for the repair overlay.
type repairPreviewMsg struct {
	id     int
	counts snapshot.RepairCounts
	err    error
}

// modal is the repair overlay: a dry run first, then a confirmation.
type modal struct {
	id      int
	stage   modalStage
	counts  snapshot.RepairCounts
	err     error
	typed   string // what the operator typed, when the target's name is asked for
	wrong   bool   // the last name typed was not the target's
	confirm string // the text that confirms: the target's name on a real Redis
}

type modalStage int

const (
	modalPreviewing modalStage = iota // the dry run is sweeping
	modalConfirm                      // the counts are shown; waiting for the operator
	modalRepairing                    // the repair is sweeping
)

// writable reports whether writes are on, flashing why not when they are off.
func (m *Model) writable(what string) bool {
	if m.c.opt.Actions != nil {
		return true
	}
	m.flashf(fmt.Sprintf("%s is off: %s", what, m.c.opt.ReadOnlyWhy))
	return false
}

// inject writes a burst into the selected family (the first, when none is selected).
func (m *Model) inject() tea.Cmd {
	if !m.writable("inject") {
		return nil
	}
	fam := m.targetFamily()
	if fam == "" {
		m.flashf("inject: the config has no counter family")
		return nil
	}
	act, ctx := m.c.opt.Actions, m.ctx
	m.flashf(fmt.Sprintf("injecting %s events into %s…", format.Commas(injectBurst), fam))
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		text, err := act.Inject(ctx, fam, injectBurst)
		return actionMsg{text: text, err: err}
	}
}

// toggleTraffic starts or stops steady test traffic into the selected family.
func (m *Model) toggleTraffic() tea.Cmd {
	if !m.writable("test traffic") {
		return nil
	}
	fam := m.targetFamily()
	if fam == "" {
		m.flashf("test traffic: the config has no counter family")
		return nil
	}
	on := !m.traffic[fam]
	text, err := m.c.opt.Actions.SetTraffic(fam, on)
	if err != nil {
		m.flashf("test traffic: " + oneLine(err.Error()))
		return nil
	}
	m.traffic[fam] = on
	delete(m.trafficFaults, fam)
	m.flashf(text)
	return nil
}

func (m *Model) targetFamily() string {
	if f := m.views[m.active].family(); f != "" {
		return f
	}
	if len(m.c.opt.Families) > 0 {
		return m.c.opt.Families[0].Name
	}
	return ""
}

// repair opens the overlay and runs the dry run.
func (m *Model) repair() tea.Cmd {
	if !m.writable("repair") {
		return nil
	}
	// Every overlay gets a number of its own, so a cancelled one's late answer finds no overlay.
	m.repairs++
	id := m.repairs
	m.modal = &modal{id: id, stage: modalPreviewing}
	if m.c.opt.Mode != "embedded" {
		m.modal.confirm = m.c.opt.Target
		if m.c.opt.Name != "" {
			m.modal.confirm = m.c.opt.Name
		}
	}
	act := m.c.opt.Actions
	ctx := m.repairContext()
	return func() tea.Msg {
		n, err := act.Repair(ctx, true)
		return repairPreviewMsg{id: id, counts: n, err: err}
	}
}

// repairContext is the context of the overlay's sweep: esc ends it, and so does the next one.
func (m *Model) repairContext() context.Context {
	if m.cancelRepair != nil {
		m.cancelRepair()
	}
	ctx, cancel := context.WithTimeout(m.ctx, 10*time.Minute)
	m.cancelRepair = cancel
	return ctx
}

// closeModal closes the overlay and stops its sweep.
func (m *Model) closeModal() {
	m.modal = nil
	if m.cancelRepair != nil {
		m.cancelRepair()
		m.cancelRepair = nil
	}
}

func (m *Model) handleRepairPreview(msg repairPreviewMsg) tea.Cmd {
	if m.modal == nil || m.modal.id != msg.id || m.modal.stage != modalPreviewing {
		return nil // cancelled meanwhile
	}
	m.modal.stage, m.modal.counts, m.modal.err = modalConfirm, msg.counts, msg.err
	return nil
}

// modalKey serves the overlay: esc cancels; y (or the typed target name and enter) confirms.
func (m *Model) modalKey(msg tea.KeyPressMsg) tea.Cmd {
	md, k := m.modal, m.c.keys
	if key.Matches(msg, k.Back) {
		m.closeModal()
		return nil
	}
	if md.stage != modalConfirm || md.err != nil || md.counts.Expired == 0 {
		return nil
	}
	if md.confirm != "" { // type the target's name, as a guard against the wrong screen
		switch {
		case key.Matches(msg, k.Enter):
			if md.typed != md.confirm {
				md.typed, md.wrong = "", true
				return nil
			}
		case key.Matches(msg, k.Erase):
			if r := []rune(md.typed); len(r) > 0 {
				md.typed = string(r[:len(r)-1])
			}
			return nil
		default:
			md.typed += msg.Text
			return nil
		}
	} else if !key.Matches(msg, k.Confirm) {
		return nil
	}
	md.stage = modalRepairing
	act, id := m.c.opt.Actions, md.id
	ctx := m.repairContext()
	return func() tea.Msg {
		n, err := act.Repair(ctx, false)
		if err != nil {
			return actionMsg{repair: id, text: fmt.Sprintf("repair (%s given their expiry before it stopped)", format.Count(n.Expired, "key", "keys")), err: err}
		}
		return actionMsg{repair: id, text: fmt.Sprintf("repair: %s given their expiry, %s gone meanwhile, %s past expiry left",
			format.Count(n.Expired, "key", "keys"), format.Commas(n.Gone), format.Commas(n.SkippedPastExpiry))}
	}
}

func (m *Model) handleAction(msg actionMsg) tea.Cmd {
	if msg.repair != 0 && m.modal != nil && m.modal.id == msg.repair {
		m.closeModal()
	}
	if msg.err != nil {
		m.flashf(strings.TrimSpace(msg.text + " failed: " + oneLine(msg.err.Error())))
		return nil
	}
	m.flashf(msg.text)
	return nil
}

// oneLine keeps the first line of an error.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// modalText is the overlay's body.
func (m *Model) modalText() []string {
	md, st := m.modal, m.c.styles
	lines := []string{st.Title.Render("Repair keys without a TTL"), ""}
	switch {
	case md.stage == modalPreviewing:
		lines = append(lines, "Dry run: sweeping the keyspace at the scan budget…", "", st.Muted.Render("esc cancels"))
	case md.stage == modalRepairing:
		lines = append(lines, "Repairing: sweeping and setting expiries…")
	case md.err != nil:
		lines = append(lines, st.Bad.Render("The dry run failed: "+oneLine(md.err.Error())), "", st.Muted.Render("esc closes"))
	case md.counts.Expired == 0:
		lines = append(lines, format.Count(md.counts.KeysSeen, "key", "keys")+" seen; none needs an expiry.")
		if n := md.counts.SkippedPastExpiry; n > 0 {
			lines = append(lines, format.Count(n, "key is past its", "keys are past their")+" expiry: `hourglass repair --delete-expired` deletes "+
				format.Plural(n, "it.", "them."))
		}
		lines = append(lines, "", st.Muted.Render("esc closes"))
	default:
		c := md.counts
		lines = append(lines,
			fmt.Sprintf("%s seen, %s without a TTL:", format.Count(c.KeysSeen, "key", "keys"), format.Commas(c.NoTTL)),
			fmt.Sprintf("  %s will get EXPIREAT their window's end plus retention", format.Commas(c.Expired)),
			fmt.Sprintf("  %s are past that and stay (the repair command's --delete-expired deletes them)", format.Commas(c.SkippedPastExpiry)),
			fmt.Sprintf("  %s are not strings and stay", format.Commas(c.SkippedWrongType)), "")
		if md.confirm != "" {
			lines = append(lines, fmt.Sprintf("Type the target's name (%s) and enter to repair; esc cancels.", md.confirm),
				"> "+md.typed+"▏")
			if md.wrong {
				lines = append(lines, st.Bad.Render("That is not the target's name; nothing was written."))
			}
		} else {
			lines = append(lines, "y repairs, esc cancels.")
		}
	}
	return lines
}
