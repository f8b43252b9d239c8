package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// snapshot --json carries the server's health: with allkeys-lru and our delay queue holding
// tasks, the risk names the policy, the queue and our own requirement; its rates are
// measured over the sweep (two reads), or say why not; under noeviction there is no risk.
func TestSnapshotJSONHasServerHealth(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	c := srv.Client(t)
	for i, m := range []string{"a", "b", "c"} {
		c.ZAdd(t.Context(), "delay:orders", redis.Z{Score: float64(1_700_000_000 + i), Member: m})
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	cfg := "[redis]\naddrs = [\"" + srv.Addr + "\"]\n\n[[delay_queue]]\nname = \"orders\"\nkey = \"delay:orders\"\nscore_unit = \"s\"\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() *snapshot.ServerInfo {
		code, out, errOut := hg(t, "snapshot", "--json", "--config", path)
		if code != 0 {
			t.Fatalf("snapshot: exit %d: %s", code, errOut)
		}
		var snap snapshot.Snapshot
		if err := json.Unmarshal([]byte(out), &snap); err != nil || snap.Server == nil || len(snap.Server.Nodes) != 1 {
			t.Fatalf("snapshot JSON: %v, server %+v", err, snap.Server)
		}
		return snap.Server
	}
	info := read()
	n, r := info.Nodes[0], info.Eviction
	if n.Addr != srv.Addr || n.Policy != "allkeys-lru" || n.MaxMemory == nil || *n.MaxMemory != 64<<20 || (n.ExpiredPerSec == nil && n.Why("expired_per_sec") == "") {
		t.Errorf("the node: %+v", n)
	}
	if r == nil || r.Policy != "allkeys-lru" || len(r.AtRisk) != 1 || r.AtRisk[0].Name != "orders" || r.AtRisk[0].Count != 3 ||
		len(r.Requirements) != 1 || r.Requirements[0].Who != "hourglass" {
		t.Errorf("the risk: %+v", r)
	}
	if err := c.ConfigSet(t.Context(), "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if info = read(); info.Eviction != nil || info.Nodes[0].Policy != "noeviction" {
		t.Errorf("under noeviction: %+v", info)
	}
}
