package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// The server's health, a series per node INFO was read from (label node: its address). A figure
// INFO did not give, or a rate before a second read, has no series: never 0 for unknown.
var (
	descRole        = prometheus.NewDesc("hourglass_redis_role", "1 for the node's role from INFO (master or replica).", []string{"node", "role"}, nil)
	descReplicas    = prometheus.NewDesc("hourglass_redis_replicas", "Replicas a master lists in INFO replication.", []string{"node"}, nil)
	descReplicaUp   = prometheus.NewDesc("hourglass_redis_replica_online", "1 when the master lists the replica online, else 0.", []string{"node", "replica"}, nil)
	descReplicaLag  = prometheus.NewDesc("hourglass_redis_replica_lag_seconds", "Seconds since the replica last acknowledged, as its master lists it.", []string{"node", "replica"}, nil)
	descReplicaBack = prometheus.NewDesc("hourglass_redis_replica_behind_bytes", "Bytes the replica's offset is behind its master's.", []string{"node", "replica"}, nil)
	descNodeMem     = prometheus.NewDesc("hourglass_redis_node_used_memory_bytes", "used_memory from the node's INFO.", []string{"node"}, nil)
	descMaxMem      = prometheus.NewDesc("hourglass_redis_maxmemory_bytes", "maxmemory from the node's INFO (0: no limit).", []string{"node"}, nil)
	descPolicy      = prometheus.NewDesc("hourglass_redis_maxmemory_policy", "1 for the node's maxmemory_policy from INFO.", []string{"node", "policy"}, nil)
	descEvictedRate = prometheus.NewDesc("hourglass_redis_evicted_keys_per_second", "Keys evicted a second between the last two INFO reads.", []string{"node"}, nil)
	descExpiredRate = prometheus.NewDesc("hourglass_redis_expired_keys_per_second", "Keys expired a second between the last two INFO reads.", []string{"node"}, nil)
	descEvicted     = prometheus.NewDesc("hourglass_redis_evicted_keys_total", "evicted_keys from INFO: keys evicted since the node started.", []string{"node"}, nil)
	descExpired     = prometheus.NewDesc("hourglass_redis_expired_keys_total", "expired_keys from INFO: keys expired since the node started.", []string{"node"}, nil)
	descFrag        = prometheus.NewDesc("hourglass_redis_mem_fragmentation_ratio", "mem_fragmentation_ratio from INFO.", []string{"node"}, nil)
	descClients     = prometheus.NewDesc("hourglass_redis_connected_clients", "connected_clients from INFO.", []string{"node"}, nil)
	descRejected    = prometheus.NewDesc("hourglass_redis_rejected_connections_total", "rejected_connections from INFO: connections refused since the node started.", []string{"node"}, nil)
	descSaveOK      = prometheus.NewDesc("hourglass_redis_last_bgsave_ok", "1 when rdb_last_bgsave_status is ok, else 0.", []string{"node"}, nil)
	descAOF         = prometheus.NewDesc("hourglass_redis_aof_enabled", "1 when the append-only file is on, else 0.", []string{"node"}, nil)
	descAOFOK       = prometheus.NewDesc("hourglass_redis_aof_last_write_ok", "1 when aof_last_write_status is ok, else 0 (present while the AOF is on).", []string{"node"}, nil)
	descRisk        = prometheus.NewDesc("hourglass_eviction_risk", "1 when a node's maxmemory-policy can evict (or is not known) while job libraries' queues, our queues or locks hold keys, else 0 (absent until a sweep has completed).", nil, nil)
	descAtRisk      = prometheus.NewDesc("hourglass_eviction_at_risk", "What an entry at risk of eviction holds: jobs, tasks or locks held.", []string{"kind", "name"}, nil)
)

// emit writes one metric.
type emit func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string)

// serverSeries writes the server's health: each node's, and the eviction risk once a Snapshot
// says what is at risk.
func serverSeries(put emit, info snapshot.ServerInfo, swept bool) {
	for i := range info.Nodes {
		nodeSeries(put, &info.Nodes[i])
	}
	if !swept || len(info.Nodes) == 0 {
		return
	}
	if r := info.Eviction; r != nil {
		put(descRisk, prometheus.GaugeValue, 1)
		for _, k := range r.AtRisk {
			put(descAtRisk, prometheus.GaugeValue, float64(k.Count), k.Kind, k.Name)
		}
		return
	}
	put(descRisk, prometheus.GaugeValue, 0)
}

// nodeSeries writes one node's health.
func nodeSeries(put emit, n *snapshot.NodeHealth) {
	g, c := prometheus.GaugeValue, prometheus.CounterValue
	if n.Role != "" {
		put(descRole, g, 1, n.Addr, n.Role)
	}
	if n.Role == "master" {
		put(descReplicas, g, float64(len(n.Replicas)), n.Addr)
	}
	for _, r := range n.Replicas {
		put(descReplicaUp, g, bit(r.State == "online"), n.Addr, r.Addr)
		intSeries(put, descReplicaLag, g, r.LagSeconds, n.Addr, r.Addr)
		intSeries(put, descReplicaBack, g, r.BehindBytes, n.Addr, r.Addr)
	}
	intSeries(put, descNodeMem, g, n.UsedMemory, n.Addr)
	intSeries(put, descMaxMem, g, n.MaxMemory, n.Addr)
	if n.Policy != "" {
		put(descPolicy, g, 1, n.Addr, n.Policy)
	}
	floatSeries(put, descEvictedRate, n.EvictedPerSec, n.Addr)
	floatSeries(put, descExpiredRate, n.ExpiredPerSec, n.Addr)
	intSeries(put, descEvicted, c, n.EvictedKeys, n.Addr)
	intSeries(put, descExpired, c, n.ExpiredKeys, n.Addr)
	floatSeries(put, descFrag, n.Fragmentation, n.Addr)
	intSeries(put, descClients, g, n.Clients, n.Addr)
	intSeries(put, descRejected, c, n.Rejected, n.Addr)
	if n.LastSave != "" {
		put(descSaveOK, g, bit(n.LastSave == "ok"), n.Addr)
	}
	if n.AOF != nil {
		put(descAOF, g, bit(*n.AOF), n.Addr)
		if *n.AOF && n.AOFLastWrite != "" {
			put(descAOFOK, g, bit(n.AOFLastWrite == "ok"), n.Addr)
		}
	}
}

func intSeries(put emit, d *prometheus.Desc, t prometheus.ValueType, p *int64, labels ...string) {
	if p != nil {
		put(d, t, float64(*p), labels...)
	}
}

func floatSeries(put emit, d *prometheus.Desc, p *float64, labels ...string) {
	if p != nil {
		put(d, prometheus.GaugeValue, *p, labels...)
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
