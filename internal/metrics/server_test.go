package metrics

import (
	"testing"
)

// The server's health on a real scrape: the policy, memory, clients and persistence a series each
// with the node's address; the eviction risk with what each entry at risk holds (orders: 3 tasks
// and 1 in flight; emails: 2 queued and 1 processing; topics' two keys
// together; the locks held); no rate before a second INFO read.
func TestServerSeries(t *testing.T) {
	f := newFixture(t)
	if err := f.rdb.ConfigSet(t.Context(), "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	col := newCollector(nil)
	col.set(sweep(t, f.w), nil)
	samples := parse(t, scrapeHandler(t, col))
	node := f.rdb.Options().Addr
	one := func(name string, want float64, labels ...string) {
		t.Helper()
		got := find(samples, name, labels...)
		if len(got) != 1 || got[0].value != want {
			t.Errorf("%s %v: %+v, want one at %v", name, labels, got, want)
		}
	}
	one("hourglass_redis_role", 1, "node", node, "role", "master")
	one("hourglass_redis_replicas", 0, "node", node)
	one("hourglass_redis_maxmemory_policy", 1, "node", node, "policy", "allkeys-lru")
	one("hourglass_redis_maxmemory_bytes", 0, "node", node)
	one("hourglass_redis_rejected_connections_total", 0, "node", node)
	one("hourglass_redis_last_bgsave_ok", 1, "node", node)
	one("hourglass_redis_aof_enabled", 0, "node", node)
	one("hourglass_eviction_risk", 1)
	one("hourglass_eviction_at_risk", 4, "kind", "delay_queue", "name", "orders")
	one("hourglass_eviction_at_risk", 3, "kind", "list_queue", "name", "emails")
	one("hourglass_eviction_at_risk", 3, "kind", "delay_queue", "name", "topics") // two keys of its pattern
	one("hourglass_eviction_at_risk", 2, "kind", "lock", "name", "jobs")
	if len(find(samples, "hourglass_redis_connected_clients", "node", node)) != 1 || len(find(samples, "hourglass_redis_node_used_memory_bytes", "node", node)) != 1 {
		t.Error("no clients or memory series")
	}
	for _, name := range []string{"hourglass_redis_evicted_keys_per_second", "hourglass_redis_expired_keys_per_second", "hourglass_redis_aof_last_write_ok"} {
		if got := find(samples, name); len(got) != 0 {
			t.Errorf("%s before it is known: %+v", name, got)
		}
	}
}
