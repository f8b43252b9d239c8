package tui

import (
	"fmt"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// panel is the Server panel of the Overview, w cells wide and at most h lines high (its border
// included): the eviction risk first, then each node, then why a "?" is one. Lines give way from
// the end on a short screen; under three lines it is one line with no border.
func (h *health) panel(w, height int) []string {
	st := h.c.styles
	lines := h.riskLines()
	switch {
	case h.info.Err != "":
		lines = append(lines, st.Warn.Render(h.info.Err))
	case h.info.ReadAt.IsZero():
		lines = append(lines, st.Muted.Render("reading INFO…"))
	case len(h.info.Nodes) == 1:
		lines = append(lines, h.nodeLines(&h.info.Nodes[0])...)
	default:
		for _, n := range byTrouble(h.info.Nodes) {
			lines = append(lines, h.masterLine(&n))
		}
	}
	if len(h.unknown) > 0 {
		lines = append(lines, st.Muted.Render(format.Unknown+": "+strings.Join(h.unknown, "; ")))
	}
	title := st.PanelTitle.Render("Server")
	if height < 3 {
		return []string{fit(title+"  "+lines[0], w)}
	}
	body := append([]string{title}, lines...)
	if len(body) > height-2 {
		body = append(body[:max(height-3, 1)], st.Muted.Render("… (a taller terminal shows the rest)"))
	}
	for i, l := range body {
		body[i] = fit(l, w-4)
	}
	return strings.Split(st.Panel.Width(w).Render(strings.Join(body, "\n")), "\n")
}

// riskLines say what a policy that can evict puts at risk, and what each library asks.
func (h *health) riskLines() []string {
	r := h.info.Eviction
	if r == nil {
		return nil
	}
	st := h.c.styles
	var keys []string
	for _, k := range r.AtRisk {
		keys = append(keys, fmt.Sprintf("%s (%s %s)", format.Escape(k.Name), format.Commas(k.Count), k.Unit))
	}
	var line string
	switch {
	case r.Policy == "":
		line = "maxmemory-policy " + format.Unknown + ": Redis may evict " + strings.Join(keys, ", ")
	case r.NoLimit:
		line = r.Policy + " evicts " + r.Scope + " once maxmemory is set (none now): " + strings.Join(keys, ", ")
	default:
		line = r.Policy + " can evict " + r.Scope + ": " + strings.Join(keys, ", ")
	}
	if len(h.info.Nodes) > 1 {
		line += fmt.Sprintf(" (%d of %d masters)", len(r.Nodes), len(h.info.Nodes))
	}
	style := st.Bad
	if r.NoLimit || r.Policy == "" {
		style = st.Warn
	}
	var needs []string
	for _, q := range r.Requirements {
		needs = append(needs, q.Brief)
	}
	return []string{style.Render(line), style.Render(strings.Join(needs, " · "))}
}

// nodeLines are a standalone server's lines.
func (h *health) nodeLines(n *snapshot.NodeHealth) []string {
	return []string{
		n.Addr + " " + n.Role + " · " + h.replicasText(n, true),
		"memory " + h.memoryText(n) + " · maxmemory-policy " + h.styledPolicy(n) + " · fragmentation " + h.fragText(n),
		"evicted " + h.rateText(n, "evicted_per_sec", n.EvictedPerSec) + " · expired " + h.rateText(n, "expired_per_sec", n.ExpiredPerSec) +
			" · clients " + h.int64Text(n, "connected_clients", n.Clients) + ", " + h.int64Text(n, "rejected_connections", n.Rejected) + " rejected",
		"persistence: " + h.persistenceText(n),
	}
}

// masterLine is one cluster master's line.
func (h *health) masterLine(n *snapshot.NodeHealth) string {
	return strings.Join([]string{n.Addr, h.replicasText(n, false), "mem " + h.memoryText(n), h.styledPolicy(n),
		"evicted " + h.rateText(n, "evicted_per_sec", n.EvictedPerSec), h.persistenceText(n)}, " · ")
}

// styledPolicy is the policy, green only when it is noeviction, red when it puts keys at risk.
func (h *health) styledPolicy(n *snapshot.NodeHealth) string {
	st, text := h.c.styles, h.policyText(n)
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
	worst := byTrouble(info.Nodes)[0]
	roles := worst.Role + h.headerReplicas(&worst)
	mem := "mem " + h.headerMemory(&worst)
	if len(info.Nodes) > 1 { // the worst master, with the count
		roles = fmt.Sprintf("%d masters, worst %s%s", len(info.Nodes), worst.Addr, h.headerReplicas(&worst))
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

// headerReplicas is ", 1 replica lag 0s" (the largest lag), ", 1 of 2 replicas down", or ", no
// replicas", for the header.
func (h *health) headerReplicas(n *snapshot.NodeHealth) string {
	switch {
	case n.Role == "replica":
		return " of " + n.Primary + ", link " + n.PrimaryLink
	case len(n.Replicas) == 0:
		return ", no replicas"
	case offline(n) > 0:
		return fmt.Sprintf(", %d of %s not online", offline(n), format.Count(len(n.Replicas), "replica", "replicas"))
	}
	lag := int64(-1)
	for _, r := range n.Replicas {
		if r.LagSeconds != nil {
			lag = max(lag, *r.LagSeconds)
		}
	}
	text := ", " + format.Count(len(n.Replicas), "replica", "replicas")
	if lag >= 0 {
		text += fmt.Sprintf(" lag %ds", lag)
	}
	return text
}

// headerMemory is "1.0 GiB/4.0 GiB", "1.0 GiB/no limit", or with "?".
func (h *health) headerMemory(n *snapshot.NodeHealth) string {
	used := h.value(n, "used_memory", n.UsedMemory != nil, func() string { return format.BytesIEC(*n.UsedMemory) })
	limit := h.value(n, "maxmemory", n.MaxMemory != nil, func() string {
		if *n.MaxMemory == 0 {
			return "no limit"
		}
		return format.BytesIEC(*n.MaxMemory)
	})
	return used + "/" + limit
}
