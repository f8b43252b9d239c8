package cells

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// Server is the text of a ServerInfo's figures, which the console's header and Server panel and
// the text report show alike. A figure INFO did not give is "?" (format.Unknown) and Unknown
// collects the reasons of those shown, each once, for a line of their own; a rate before a second
// read is "measuring" (format.Pending). Make one for each screen or report drawn.
type Server struct {
	Unknown []string
}

// value is a figure's text, or "?" (its reason kept for the last line) or "measuring".
func (s *Server) value(n *snapshot.NodeHealth, field string, known bool, text func() string) string {
	if known {
		return text()
	}
	why := n.Why(field)
	if strings.HasPrefix(why, format.Pending) {
		return format.Pending
	}
	if why != "" && !slices.Contains(s.Unknown, why) {
		s.Unknown = append(s.Unknown, why)
	}
	return format.Unknown
}

// Replicas is a master's replicas: "no replicas", "1 replica 127.0.0.1:6380 online, lag 0s,
// 0 B behind", or on a line a master, their count and the largest lag.
func (s *Server) Replicas(n *snapshot.NodeHealth, long bool) string {
	if n.Role == "replica" {
		return "replica of " + n.Primary + ", link " + n.PrimaryLink
	}
	if len(n.Replicas) == 0 {
		return "no replicas"
	}
	if long && len(n.Replicas) == 1 {
		r := n.Replicas[0]
		return "replica " + r.Addr + " " + r.State + ", " + Lag(r)
	}
	worst := n.Replicas[0]
	for _, r := range n.Replicas[1:] {
		if r.LagSeconds != nil && (worst.LagSeconds == nil || *r.LagSeconds > *worst.LagSeconds) {
			worst = r
		}
	}
	text := format.Count(len(n.Replicas), "replica", "replicas") + ", " + Lag(worst)
	if off := Offline(n); off > 0 {
		text += fmt.Sprintf(", %d not online", off)
	}
	return text
}

// Lag is a replica's lag: "lag 0s, 120 B behind", "?" where INFO does not say.
func Lag(r snapshot.Replica) string {
	lag, behind := format.Unknown, format.Unknown
	if r.LagSeconds != nil {
		lag = fmt.Sprintf("%ds", *r.LagSeconds)
	}
	if r.BehindBytes != nil {
		behind = format.BytesIEC(*r.BehindBytes)
	}
	return "lag " + lag + ", " + behind + " behind"
}

// Offline counts a master's replicas not online.
func Offline(n *snapshot.NodeHealth) int {
	k := 0
	for _, r := range n.Replicas {
		if r.State != "online" {
			k++
		}
	}
	return k
}

// Memory is "1.2 MiB of 64 MiB (2%)", "1.2 MiB, no maxmemory", or with "?".
func (s *Server) Memory(n *snapshot.NodeHealth) string {
	used := s.value(n, "used_memory", n.UsedMemory != nil, func() string { return format.BytesIEC(*n.UsedMemory) })
	switch {
	case n.MaxMemory == nil:
		return used + " of " + s.value(n, "maxmemory", false, nil)
	case *n.MaxMemory == 0:
		return used + ", no maxmemory"
	case n.UsedMemory != nil:
		return fmt.Sprintf("%s of %s (%.0f%%)", used, format.BytesIEC(*n.MaxMemory), 100*float64(*n.UsedMemory)/float64(*n.MaxMemory))
	}
	return used + " of " + format.BytesIEC(*n.MaxMemory)
}

// Policy is the node's maxmemory-policy, or "?".
func (s *Server) Policy(n *snapshot.NodeHealth) string {
	return s.value(n, "maxmemory_policy", n.Policy != "", func() string { return n.Policy })
}

// Rate is a node's evicted or expired keys a second.
func (s *Server) Rate(n *snapshot.NodeHealth, field string, r *float64) string {
	return s.value(n, field, r != nil, func() string { return format.Rate(*r) + "/s" })
}

// Count is a count of INFO's, or "?".
func (s *Server) Count(n *snapshot.NodeHealth, field string, p *int64) string {
	return s.value(n, field, p != nil, func() string { return format.Commas(*p) })
}

// Persistence is "last save ok · AOF off", or "AOF on, last write ok".
func (s *Server) Persistence(n *snapshot.NodeHealth) string {
	save := "last save " + s.value(n, "rdb_last_bgsave_status", n.LastSave != "", func() string { return n.LastSave })
	aof := "AOF " + s.value(n, "aof_enabled", n.AOF != nil, func() string {
		if *n.AOF {
			return "on, last write " + s.value(n, "aof_last_write_status", n.AOFLastWrite != "", func() string { return n.AOFLastWrite })
		}
		return "off"
	})
	return save + " · " + aof
}

// Fragmentation is the fragmentation ratio.
func (s *Server) Fragmentation(n *snapshot.NodeHealth) string {
	return s.value(n, "mem_fragmentation_ratio", n.Fragmentation != nil, func() string { return fmt.Sprintf("%.2f", *n.Fragmentation) })
}

// Trouble ranks a node for "the worst first": a policy that can evict, a save or an AOF write
// failed, a replica not online, then the memory used of maxmemory.
func Trouble(n *snapshot.NodeHealth) float64 {
	t := 0.0
	if snapshot.Evicts(n.Policy) || n.Policy == "" {
		t += 8
	}
	if n.LastSave == "err" || n.AOFLastWrite == "err" {
		t += 4
	}
	if Offline(n) > 0 || n.PrimaryLink == "down" {
		t += 2
	}
	if n.UsedMemory != nil && n.MaxMemory != nil && *n.MaxMemory > 0 {
		t += min(float64(*n.UsedMemory)/float64(*n.MaxMemory), 1)
	}
	return t
}

// ByTrouble is the nodes, the worst first.
func ByTrouble(nodes []snapshot.NodeHealth) []snapshot.NodeHealth {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b snapshot.NodeHealth) int {
		ta, tb := Trouble(&a), Trouble(&b)
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

// HeaderReplicas is ", 1 replica lag 0s" (the largest lag), ", 1 of 2 replicas down", or ", no
// replicas", for the header.
func (s *Server) HeaderReplicas(n *snapshot.NodeHealth) string {
	switch {
	case n.Role == "replica":
		return " of " + n.Primary + ", link " + n.PrimaryLink
	case len(n.Replicas) == 0:
		return ", no replicas"
	case Offline(n) > 0:
		return fmt.Sprintf(", %d of %s not online", Offline(n), format.Count(len(n.Replicas), "replica", "replicas"))
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

// HeaderMemory is "1.0 GiB/4.0 GiB", "1.0 GiB/no limit", or with "?".
func (s *Server) HeaderMemory(n *snapshot.NodeHealth) string {
	used := s.value(n, "used_memory", n.UsedMemory != nil, func() string { return format.BytesIEC(*n.UsedMemory) })
	limit := s.value(n, "maxmemory", n.MaxMemory != nil, func() string {
		if *n.MaxMemory == 0 {
			return "no limit"
		}
		return format.BytesIEC(*n.MaxMemory)
	})
	return used + "/" + limit
}

// NodeLines are a standalone server's lines; policy is its policy as the front end marks it.
func (s *Server) NodeLines(n *snapshot.NodeHealth, policy string) []string {
	return []string{
		n.Addr + " " + n.Role + " · " + s.Replicas(n, true),
		"memory " + s.Memory(n) + " · maxmemory-policy " + policy + " · fragmentation " + s.Fragmentation(n),
		"evicted " + s.Rate(n, "evicted_per_sec", n.EvictedPerSec) + " · expired " + s.Rate(n, "expired_per_sec", n.ExpiredPerSec) +
			" · clients " + s.Count(n, "connected_clients", n.Clients) + ", " + s.Count(n, "rejected_connections", n.Rejected) + " rejected",
		"persistence: " + s.Persistence(n),
	}
}

// MasterLine is one cluster master's line; policy as in NodeLines.
func (s *Server) MasterLine(n *snapshot.NodeHealth, policy string) string {
	return strings.Join([]string{n.Addr, s.Replicas(n, false), "mem " + s.Memory(n), policy,
		"evicted " + s.Rate(n, "evicted_per_sec", n.EvictedPerSec), s.Persistence(n)}, " · ")
}

// Risk says what a policy that can evict puts at risk, over masters nodes, and what each
// library asks: two lines.
func Risk(r *snapshot.EvictionRisk, masters int) (line, needs string) {
	var keys []string
	for _, k := range r.AtRisk {
		keys = append(keys, fmt.Sprintf("%s (%s %s)", format.Escape(k.Name), format.Commas(k.Count), k.Unit))
	}
	switch {
	case r.Policy == "":
		line = "maxmemory-policy " + format.Unknown + ": Redis may evict " + strings.Join(keys, ", ")
	case r.NoLimit:
		line = r.Policy + " evicts " + r.Scope + " once maxmemory is set (none now): " + strings.Join(keys, ", ")
	default:
		line = r.Policy + " can evict " + r.Scope + ": " + strings.Join(keys, ", ")
	}
	if masters > 1 {
		line += fmt.Sprintf(" (%d of %d masters)", len(r.Nodes), masters)
	}
	var briefs []string
	for _, q := range r.Requirements {
		briefs = append(briefs, q.Brief)
	}
	return line, strings.Join(briefs, " · ")
}
