package tui

import (
	"fmt"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/cells"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// panel is the Server panel of the Overview, w cells wide and at most height lines high (its border
// included): the eviction risk first, then each node, then why a "?" is one. Lines give way from
// the end on a short screen (the title beside the first); under three lines it is one line with
// no border.
func (h *health) panel(w, height int) []string {
	st := h.c.styles
	lines := h.riskLines()
	switch {
	case h.info.Err != "":
		lines = append(lines, st.Warn.Render(h.info.Err))
	case h.info.ReadAt.IsZero():
		lines = append(lines, st.Muted.Render("reading INFO…"))
	case len(h.info.Nodes) == 1:
		lines = append(lines, h.text.NodeLines(&h.info.Nodes[0], h.styledPolicy(&h.info.Nodes[0]))...)
	default:
		for _, n := range cells.ByTrouble(h.info.Nodes) {
			lines = append(lines, h.text.MasterLine(&n, h.styledPolicy(&n)))
		}
	}
	if len(h.text.Unknown) > 0 {
		lines = append(lines, st.Muted.Render(format.Unknown+": "+strings.Join(h.text.Unknown, "; ")))
	}
	title := st.PanelTitle.Render("Server")
	room := height - 2 // inside the border
	if room < 1 {
		return []string{fit(title+"  "+lines[0], w)}
	}
	body := append([]string{title}, lines...)
	if len(body) > room { // the title beside the first line, then what fits
		body = append([]string{title + "  " + lines[0]}, lines[1:]...)
	}
	if len(body) > room && room >= 3 {
		body = append(body[:room-1], st.Muted.Render("… (a taller terminal shows the rest)"))
	}
	body = body[:min(len(body), room)]
	for i, l := range body {
		body[i] = fit(l, w-4)
	}
	return strings.Split(st.Panel.Width(w).Render(strings.Join(body, "\n")), "\n")
}

// riskLines say what a policy that can evict puts at risk, and what each library asks: red, or
// yellow while no maxmemory is set or the policy is not known. Never green.
func (h *health) riskLines() []string {
	r := h.info.Eviction
	if r == nil {
		return nil
	}
	style := h.c.styles.Bad
	if r.NoLimit || r.Policy == "" {
		style = h.c.styles.Warn
	}
	line, needs := cells.Risk(r, len(h.info.Nodes))
	return []string{style.Render(line), style.Render(needs)}
}

// styledPolicy is the policy, green only when it is noeviction, red when it puts keys at risk.
func (h *health) styledPolicy(n *snapshot.NodeHealth) string {
	st, text := h.c.styles, h.text.Policy(n)
	switch {
	case n.Policy == "noeviction":
		return st.Good.Render(text)
	case h.info.Eviction != nil:
		return st.Bad.Render(text)
	}
	return text
}

// headerParts are the header's server figures, which give way first on a narrow terminal
// (memory, then the replicas, then ops/s), and the risk, which stays, shortened to the policy.
func (h *health) headerParts() (server []string, risk, short string) {
	info := h.info
	if len(info.Nodes) == 0 { // the summed figures alone
		server = []string{"ops/s " + format.Commas(info.OpsPerSec), "mem " + format.BytesIEC(info.UsedMemory)}
		if info.Masters > 1 {
			server = append(server, fmt.Sprintf("%d masters", info.Masters))
		}
		return server, "", ""
	}
	worst := cells.ByTrouble(info.Nodes)[0]
	roles := worst.Role + h.text.HeaderReplicas(&worst)
	mem := "mem " + h.text.HeaderMemory(&worst)
	if len(info.Nodes) > 1 { // the worst master, with the count
		roles = fmt.Sprintf("%d masters, worst %s%s", len(info.Nodes), worst.Addr, h.text.HeaderReplicas(&worst))
	}
	server = []string{"ops/s " + format.Commas(info.OpsPerSec), roles, mem}
	if r := info.Eviction; r != nil {
		style := h.c.styles.Bad
		if r.NoLimit || r.Policy == "" {
			style = h.c.styles.Warn
		}
		policy := r.Policy
		if policy == "" {
			policy = "maxmemory-policy " + format.Unknown
		}
		risk = style.Render(fmt.Sprintf("%s: %s at risk of eviction", policy, format.Count(len(r.AtRisk), "entry", "entries")))
		short = style.Render(policy + " evicts!")
	}
	return server, risk, short
}
