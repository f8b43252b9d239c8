package snapshot

import "time"

// ServerInfo is what INFO says of the watched Redis: the figures summed over a cluster's masters
// that the header shows, and each node's health (server.go's NodeHealth). The Watcher reads it
// at most every few seconds, not at every Poll; ReadAt says when.
type ServerInfo struct {
	Version   string `json:"version"`
	OpsPerSec int64  `json:"ops_per_sec"`
	// UsedMemory is used_memory summed over the masters that report it.
	UsedMemory int64 `json:"used_memory"`
	Masters    int   `json:"masters"`
	// ReadAt is when INFO was last read; zero before the first read.
	ReadAt time.Time `json:"read_at"`
	// Nodes holds one entry a node read: a standalone server's, or each cluster master's.
	// Its shape leaves room for several nodes a shard (a master and its replicas).
	Nodes []NodeHealth `json:"nodes"`
	// Eviction is set when a node's maxmemory-policy can evict, or is not known, while job
	// libraries' queues, our queues or locks hold keys; nil when nothing is at risk.
	Eviction *EvictionRisk `json:"eviction_risk"`
	// Err says why INFO could not be read (a user without the permission): the console shows
	// the rest and says so in that panel.
	Err string `json:"error,omitempty"`
}

// NodeHealth is one node's health as its INFO says. A figure INFO did not give is null (or "")
// and Unknown says why under the field's JSON name: a managed Redis may withhold fields, and a
// rate needs two reads. Nothing unknown is ever 0.
type NodeHealth struct {
	Addr string `json:"addr"`
	// Role is "master" or "replica" (INFO's role:slave).
	Role string `json:"role"`
	// Primary and PrimaryLink are a replica's primary and its link to it ("up" or "down").
	Primary     string `json:"primary,omitempty"`
	PrimaryLink string `json:"primary_link,omitempty"`
	// Replicas are a master's replicas as its INFO replication lists them.
	Replicas []Replica `json:"replicas"`
	// UsedMemory and MaxMemory are bytes; MaxMemory 0 means no limit.
	UsedMemory *int64 `json:"used_memory"`
	MaxMemory  *int64 `json:"maxmemory"`
	Policy     string `json:"maxmemory_policy"`
	// EvictedKeys and ExpiredKeys are INFO's totals since the server started; the rates are
	// their growth between the last two reads ("measuring" in Unknown before a second).
	EvictedKeys   *int64   `json:"evicted_keys"`
	ExpiredKeys   *int64   `json:"expired_keys"`
	EvictedPerSec *float64 `json:"evicted_per_sec"`
	ExpiredPerSec *float64 `json:"expired_per_sec"`
	Fragmentation *float64 `json:"mem_fragmentation_ratio"`
	Clients       *int64   `json:"connected_clients"`
	// Rejected is rejected_connections: connections refused (maxclients) since the start.
	Rejected *int64 `json:"rejected_connections"`
	// LastSave is rdb_last_bgsave_status ("ok" or "err"); AOF whether the append-only file is
	// on, and AOFLastWrite its aof_last_write_status.
	LastSave     string `json:"rdb_last_bgsave_status"`
	AOF          *bool  `json:"aof_enabled"`
	AOFLastWrite string `json:"aof_last_write_status"`
	// Unknown says, by the JSON name of each field above left null or "", why it is not known.
	Unknown map[string]string `json:"unknown,omitempty"`
}

// Replica is one replica a master lists.
type Replica struct {
	Addr  string `json:"addr"`
	State string `json:"state"` // online, wait_bgsave, send_bulk: as INFO says
	// LagSeconds is the seconds since the replica last acknowledged; BehindBytes how far its
	// offset is behind the master's. Null when INFO does not give them.
	LagSeconds  *int64 `json:"lag_seconds"`
	BehindBytes *int64 `json:"behind_bytes"`
}

// Why says why the field named by its JSON name is not known, "" when it is.
func (n *NodeHealth) Why(field string) string { return n.Unknown[field] }

// Evicts reports whether policy can evict keys: every policy but noeviction.
func Evicts(policy string) bool { return policy != "" && policy != "noeviction" }
