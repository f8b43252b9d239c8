package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// The server's health as the header and the Overview's Server panel show it. A figure INFO did
// not give is "?", and the panel's last line says why; a rate before a second read is
// "measuring". On a cluster the panel has one line a master, the worst first, and the header
// speaks of the worst with the count.

// health is the text of a ServerInfo for the console: what each part shows, and the reasons of
// its "?".
type health struct {
	c       *console
	info    snapshot.ServerInfo
	unknown []string // the reasons of the "?" shown, each once
}

func newHealth(c *console) *health { return &health{c: c, info: c.status.Server} }

// value is a figure's text, or "?" (its reason kept for the last line) or "measuring".
func (h *health) value(n *snapshot.NodeHealth, field string, known bool, text func() string) string {
	if known {
		return text()
	}
	why := n.Why(field)
	if strings.HasPrefix(why, format.Pending) {
		return format.Pending
	}
	if why != "" && !slices.Contains(h.unknown, why) {
		h.unknown = append(h.unknown, why)
	}
	return format.Unknown
}

// replicasText is a master's replicas: "no replicas", "1 replica 127.0.0.1:6380 online, lag 0s,
// 0 B behind", or on a line a master, their count and the largest lag.
func (h *health) replicasText(n *snapshot.NodeHealth, long bool) string {
	if n.Role == "replica" {
		return "replica of " + n.Primary + ", link " + n.PrimaryLink
	}
	if len(n.Replicas) == 0 {
		return "no replicas"
	}
	if long && len(n.Replicas) == 1 {
		r := n.Replicas[0]
		return "replica " + r.Addr + " " + r.State + ", " + lagText(r)
	}
	worst := n.Replicas[0]
	for _, r := range n.Replicas[1:] {
		if r.LagSeconds != nil && (worst.LagSeconds == nil || *r.LagSeconds > *worst.LagSeconds) {
			worst = r
		}
	}
	text := format.Count(len(n.Replicas), "replica", "replicas") + ", " + lagText(worst)
	if off := offline(n); off > 0 {
		text += fmt.Sprintf(", %d not online", off)
	}
	return text
}

// lagText is a replica's lag: "lag 0s, 120 B behind", "?" where INFO does not say.
func lagText(r snapshot.Replica) string {
	lag, behind := format.Unknown, format.Unknown
	if r.LagSeconds != nil {
		lag = fmt.Sprintf("%ds", *r.LagSeconds)
	}
	if r.BehindBytes != nil {
		behind = format.BytesIEC(*r.BehindBytes)
	}
	return "lag " + lag + ", " + behind + " behind"
}

// offline counts a master's replicas not online.
func offline(n *snapshot.NodeHealth) int {
	k := 0
	for _, r := range n.Replicas {
		if r.State != "online" {
			k++
		}
	}
	return k
}

// memoryText is "1.2 MiB of 64 MiB (2%)", "1.2 MiB, no maxmemory", or with "?".
func (h *health) memoryText(n *snapshot.NodeHealth) string {
	used := h.value(n, "used_memory", n.UsedMemory != nil, func() string { return format.BytesIEC(*n.UsedMemory) })
	switch {
	case n.MaxMemory == nil:
		return used + " of " + h.value(n, "maxmemory", false, nil)
	case *n.MaxMemory == 0:
		return used + ", no maxmemory"
	case n.UsedMemory != nil:
		return fmt.Sprintf("%s of %s (%.0f%%)", used, format.BytesIEC(*n.MaxMemory), 100*float64(*n.UsedMemory)/float64(*n.MaxMemory))
	}
	return used + " of " + format.BytesIEC(*n.MaxMemory)
}

// policyText is the node's maxmemory-policy, or "?".
func (h *health) policyText(n *snapshot.NodeHealth) string {
	return h.value(n, "maxmemory_policy", n.Policy != "", func() string { return n.Policy })
}

// rateText is a node's evicted or expired keys a second.
func (h *health) rateText(n *snapshot.NodeHealth, field string, r *float64) string {
	return h.value(n, field, r != nil, func() string { return format.Rate(*r) + "/s" })
}

// int64Text is a count of INFO's, or "?".
func (h *health) int64Text(n *snapshot.NodeHealth, field string, p *int64) string {
	return h.value(n, field, p != nil, func() string { return format.Commas(*p) })
}

// persistenceText is "last save ok · AOF off", or "AOF on, last write ok".
func (h *health) persistenceText(n *snapshot.NodeHealth) string {
	save := "last save " + h.value(n, "rdb_last_bgsave_status", n.LastSave != "", func() string { return n.LastSave })
	aof := "AOF " + h.value(n, "aof_enabled", n.AOF != nil, func() string {
		if *n.AOF {
			return "on, last write " + h.value(n, "aof_last_write_status", n.AOFLastWrite != "", func() string { return n.AOFLastWrite })
		}
		return "off"
	})
	return save + " · " + aof
}

// fragText is the fragmentation ratio.
func (h *health) fragText(n *snapshot.NodeHealth) string {
	return h.value(n, "mem_fragmentation_ratio", n.Fragmentation != nil, func() string { return fmt.Sprintf("%.2f", *n.Fragmentation) })
}

// trouble ranks a node for "the worst first": a policy that can evict, a save or an AOF write
// failed, a replica not online, then the memory used of maxmemory.
func trouble(n *snapshot.NodeHealth) float64 {
	t := 0.0
	if snapshot.Evicts(n.Policy) || n.Policy == "" {
		t += 8
	}
	if n.LastSave == "err" || n.AOFLastWrite == "err" {
		t += 4
	}
	if offline(n) > 0 || n.PrimaryLink == "down" {
		t += 2
	}
	if n.UsedMemory != nil && n.MaxMemory != nil && *n.MaxMemory > 0 {
		t += min(float64(*n.UsedMemory)/float64(*n.MaxMemory), 1)
	}
	return t
}

// byTrouble is the nodes, the worst first.
func byTrouble(nodes []snapshot.NodeHealth) []snapshot.NodeHealth {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b snapshot.NodeHealth) int {
		ta, tb := trouble(&a), trouble(&b)
		switch {
		case ta > tb:
			return -1
		case ta < tb:
			return 1
		}
		return 0
	})
	return out
}
