package watch

import (
	"strconv"
	"strings"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// The INFO fields the health line reads, by section: replication (role, connected_slaves and
// slave<n>, master_repl_offset, master_host, master_port, master_link_status), memory
// (used_memory, maxmemory, maxmemory_policy, mem_fragmentation_ratio), stats (evicted_keys,
// expired_keys, rejected_connections, instantaneous_ops_per_sec), clients (connected_clients),
// persistence (rdb_last_bgsave_status, aof_enabled, aof_last_write_status). All are in INFO's
// default sections since Redis 4.0; a managed Redis may leave some out.

// withheld is the reason a field INFO did not give is not known.
const withheld = "not in this server's INFO (a managed Redis may withhold it)"

// nodeHealth reads a node's health from its INFO fields. The rates are left to the reader, which
// holds the last read.
func nodeHealth(addr string, f map[string]string) snapshot.NodeHealth {
	n := snapshot.NodeHealth{Addr: addr, Unknown: map[string]string{}}
	intField := func(name string) *int64 {
		v, ok := f[name]
		if i, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
			return &i
		}
		n.Unknown[name] = withheld
		return nil
	}
	text := func(name string) string {
		if v, ok := f[name]; ok && v != "" {
			return v
		}
		n.Unknown[name] = withheld
		return ""
	}
	n.Role = text("role")
	if n.Role == "slave" {
		n.Role = "replica"
		n.Primary = f["master_host"] + ":" + f["master_port"]
		n.PrimaryLink = f["master_link_status"]
	}
	n.Replicas = replicas(f)
	n.UsedMemory, n.MaxMemory = intField("used_memory"), intField("maxmemory")
	n.Policy = text("maxmemory_policy")
	n.EvictedKeys, n.ExpiredKeys = intField("evicted_keys"), intField("expired_keys")
	if v, err := strconv.ParseFloat(f["mem_fragmentation_ratio"], 64); err == nil {
		n.Fragmentation = &v
	} else {
		n.Unknown["mem_fragmentation_ratio"] = withheld
	}
	n.Clients, n.Rejected = intField("connected_clients"), intField("rejected_connections")
	n.LastSave = text("rdb_last_bgsave_status")
	switch f["aof_enabled"] {
	case "0", "1":
		on := f["aof_enabled"] == "1"
		n.AOF = &on
	default:
		n.Unknown["aof_enabled"] = withheld
	}
	n.AOFLastWrite = text("aof_last_write_status")
	if len(n.Unknown) == 0 {
		n.Unknown = nil
	}
	return n
}

// replicas reads a master's slave<n> lines: ip=…,port=…,state=…,offset=…,lag=….
func replicas(f map[string]string) []snapshot.Replica {
	count, _ := strconv.Atoi(f["connected_slaves"])
	master, mErr := strconv.ParseInt(f["master_repl_offset"], 10, 64)
	out := []snapshot.Replica{}
	for i := range count {
		line, ok := f["slave"+strconv.Itoa(i)]
		if !ok {
			continue
		}
		kv := map[string]string{}
		for _, part := range strings.Split(line, ",") {
			if k, v, ok := strings.Cut(part, "="); ok {
				kv[k] = v
			}
		}
		r := snapshot.Replica{Addr: kv["ip"] + ":" + kv["port"], State: kv["state"]}
		if lag, err := strconv.ParseInt(kv["lag"], 10, 64); err == nil {
			r.LagSeconds = &lag
		}
		if off, err := strconv.ParseInt(kv["offset"], 10, 64); err == nil && mErr == nil {
			behind := max(master-off, 0)
			r.BehindBytes = &behind
		}
		out = append(out, r)
	}
	return out
}
