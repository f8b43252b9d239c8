package watch

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// infoInt is one field of a server's INFO, read by the test itself.
func infoInt(t *testing.T, c *redis.Client, field string) int64 {
	t.Helper()
	text, err := c.Info(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(store.InfoFields(text)[field], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %v", field, err)
	}
	return n
}

// The health line of a primary with a replica: its role and replica (online, with its lag), its
// memory against maxmemory and policy as the server was started with, its clients and
// persistence; and the evicted and expired keys a second, "measuring" at the first read and then
// within the bounds that the two reads' times put on the growth the test saw.
func TestServerHealthOfPrimaryWithReplica(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	_, port, _ := strings.Cut(srv.Addr, ":")
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", port)
	admin := srv.Client(t)
	ctx := t.Context()
	redistest.Eventually(t, "the replica is online", 10*time.Second, func() bool {
		text, _ := admin.Info(ctx, "replication").Result()
		return strings.Contains(text, "port="+strings.TrimPrefix(replica.Addr, "127.0.0.1:")+",state=online")
	})
	rdb := srv.Client(t)
	w := New(rdb, nil, scanner.Options{Count: 100, Location: shanghai})
	w.server.every, w.server.minSpan = 0, 0 // every Poll reads INFO, and measures from the last

	// Each total is read just before and just after each Poll: what the Poll's own read found
	// lies between.
	totals := func() [2]int64 { return [2]int64{infoInt(t, admin, "evicted_keys"), infoInt(t, admin, "expired_keys")} }
	b1, before1 := totals(), time.Now()
	st, err := w.Poll(ctx, 50*time.Millisecond, "")
	after1, a1 := time.Now(), totals()
	expired0 := a1[1]
	if err != nil || len(st.Server.Nodes) != 1 {
		t.Fatalf("first poll: %v, %+v", err, st.Server)
	}
	n := st.Server.Nodes[0]
	if n.Addr != srv.Addr || n.Role != "master" || len(n.Replicas) != 1 || n.Replicas[0].Addr != replica.Addr || n.Replicas[0].State != "online" {
		t.Fatalf("role and replicas: %+v", n)
	}
	if r := n.Replicas[0]; r.LagSeconds == nil || *r.LagSeconds > 5 || r.BehindBytes == nil {
		t.Errorf("the replica's lag: %+v", r)
	}
	if n.MaxMemory == nil || *n.MaxMemory != 64<<20 || n.Policy != "allkeys-lru" || n.UsedMemory == nil || *n.UsedMemory <= 0 {
		t.Errorf("memory: used %v, max %v, policy %q", n.UsedMemory, n.MaxMemory, n.Policy)
	}
	if n.Clients == nil || *n.Clients < 2 || n.Rejected == nil || *n.Rejected != 0 || n.Fragmentation == nil {
		t.Errorf("clients %v, rejected %v, fragmentation %v", n.Clients, n.Rejected, n.Fragmentation)
	}
	if n.LastSave != "ok" || n.AOF == nil || *n.AOF || n.AOFLastWrite != "ok" { // redistest starts with --appendonly no
		t.Errorf("persistence: save %q, AOF %v, its last write %q", n.LastSave, n.AOF, n.AOFLastWrite)
	}
	if n.EvictedPerSec != nil || n.ExpiredPerSec != nil || n.Why("evicted_per_sec") != measuring || n.Why("expired_per_sec") != measuring {
		t.Fatalf("the first read's rates: %v %v, %v", n.EvictedPerSec, n.ExpiredPerSec, n.Unknown)
	}

	// Keys that expire, and keys the policy evicts: a limit just above what is used now.
	for i := range 200 {
		admin.Set(ctx, "gone:"+strconv.Itoa(i), "x", time.Millisecond)
	}
	redistest.Eventually(t, "the keys expire", 10*time.Second, func() bool { return infoInt(t, admin, "expired_keys")-expired0 >= 200 })
	used := infoInt(t, admin, "used_memory")
	admin.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+(2<<20), 10))
	for i := range 400 {
		admin.Set(ctx, "big:"+strconv.Itoa(i), strings.Repeat("v", 16<<10), 0)
	}
	b2, before2 := totals(), time.Now()
	st, err = w.Poll(ctx, 50*time.Millisecond, "")
	after2, a2 := time.Now(), totals()
	if b2[0] == a1[0] {
		t.Fatal("nothing was evicted")
	}
	if err != nil {
		t.Fatal(err)
	}
	n = st.Server.Nodes[0]
	for i, c := range []struct {
		what string
		rate *float64
	}{{"evicted", n.EvictedPerSec}, {"expired", n.ExpiredPerSec}} {
		lo := float64(b2[i]-a1[i]) / after2.Sub(before1).Seconds()
		hi := float64(a2[i]-b1[i]) / before2.Sub(after1).Seconds()
		if c.rate == nil || *c.rate < lo || *c.rate > hi {
			t.Errorf("%s a second: %v, want between %.1f and %.1f", c.what, ptrText(c.rate), lo, hi)
		}
	}
}

// A Watcher reads INFO once every ServerEvery, not at every Poll: Polls in between show the last
// read's figures, read at the same time. Three Polls within the interval send three fewer INFO
// calls than three Polls that each read it (the others read INFO commandstats, the cost).
func TestServerReadAtMostEveryFewSeconds(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	w := New(srv.Client(t), nil, scanner.Options{Count: 100, Location: shanghai})
	w.server.every = time.Hour
	ctx := t.Context()
	first, err := w.Poll(ctx, 10*time.Millisecond, "")
	if err != nil || first.Server.ReadAt.IsZero() {
		t.Fatalf("first poll: %v, read at %v", err, first.Server.ReadAt)
	}
	infoCalls := func() int64 {
		stats, err := admin.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(store.InfoFields(stats)["cmdstat_info"], "calls="), ",")
		n, _ := strconv.ParseInt(calls, 10, 64)
		return n
	}
	threePolls := func() int64 {
		before := infoCalls()
		for range 3 {
			if _, err := w.Poll(ctx, 10*time.Millisecond, ""); err != nil {
				t.Fatal(err)
			}
		}
		return infoCalls() - before
	}
	within := threePolls()
	st, _ := w.Poll(ctx, 10*time.Millisecond, "")
	if !st.Server.ReadAt.Equal(first.Server.ReadAt) || len(st.Server.Nodes) != 1 {
		t.Fatalf("a poll within the interval read INFO again: read at %v, first %v", st.Server.ReadAt, first.Server.ReadAt)
	}
	w.server.every = 0
	each := threePolls()
	if each-within != 3 {
		t.Errorf("INFO calls of three polls: %d within the interval, %d reading each time; want 3 apart", within, each)
	}
}

// A field the server's INFO leaves out (a managed Redis's) is unknown with the reason, never 0.
func TestServerFieldsWithheld(t *testing.T) {
	text := "# Server\r\nredis_version:7.2.4\r\n# Memory\r\nused_memory:1048576\r\n# Stats\r\nexpired_keys:12\r\n"
	n := nodeHealth("cache.example:6379", store.InfoFields(text))
	if n.UsedMemory == nil || *n.UsedMemory != 1<<20 || n.ExpiredKeys == nil || *n.ExpiredKeys != 12 {
		t.Fatalf("the fields given: %+v", n)
	}
	for _, f := range []string{"role", "maxmemory", "maxmemory_policy", "evicted_keys", "mem_fragmentation_ratio", "connected_clients", "rejected_connections", "rdb_last_bgsave_status", "aof_enabled", "aof_last_write_status"} {
		if n.Why(f) != withheld {
			t.Errorf("%s: %q, want %q", f, n.Why(f), withheld)
		}
	}
	if n.MaxMemory != nil || n.Policy != "" || n.Clients != nil || n.AOF != nil {
		t.Errorf("a withheld field has a value: %+v", n)
	}
	r := NewServerReader()
	r.rates(&n, time.Now())
	if n.EvictedPerSec != nil || n.Why("evicted_per_sec") != withheld || n.Why("expired_per_sec") != measuring {
		t.Errorf("rates: %v, %v", n.EvictedPerSec, n.Unknown)
	}
}

// A cluster's health has one node a master, each with its replica.
func TestServerHealthOfCluster(t *testing.T) {
	cl := redistest.StartClusterReplicas(t, 3, 1)
	w := New(cl.Client(t), nil, scanner.Options{Count: 100, Location: shanghai})
	var st snapshot.Status
	redistest.Eventually(t, "every master lists its replica online", 20*time.Second, func() bool {
		w.server.every = 0
		var err error
		st, err = w.Poll(context.Background(), 10*time.Millisecond, "")
		if err != nil || len(st.Server.Nodes) != 3 {
			return false
		}
		for _, n := range st.Server.Nodes {
			if n.Role != "master" || len(n.Replicas) != 1 || n.Replicas[0].State != "online" {
				return false
			}
		}
		return true
	})
	if st.Server.Masters != 3 || st.Server.Nodes[0].Addr >= st.Server.Nodes[1].Addr {
		t.Errorf("masters %d, nodes in address order: %+v", st.Server.Masters, st.Server.Nodes)
	}
}

func ptrText(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}

// Two reads under a second apart give no rate: one key would read as hundreds a second. A read a
// second after the first measures from it.
func TestServerRatesNeedASecond(t *testing.T) {
	srv := redistest.Start(t)
	r := NewServerReader()
	ctx := t.Context()
	first, err := r.Read(ctx, srv.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	soon, err := r.Read(ctx, srv.Client(t))
	if err != nil || soon.Nodes[0].ExpiredPerSec != nil || soon.Nodes[0].Why("expired_per_sec") != tooSoon {
		t.Fatalf("a read right after: %v, %+v", err, soon.Nodes[0])
	}
	var later snapshot.ServerInfo
	redistest.Eventually(t, "a second passes", 10*time.Second, func() bool { return time.Since(first.ReadAt) > time.Second })
	if later, err = r.Read(ctx, srv.Client(t)); err != nil || later.Nodes[0].ExpiredPerSec == nil || *later.Nodes[0].ExpiredPerSec != 0 {
		t.Errorf("a read a second later: %v, %+v", err, later.Nodes[0])
	}
}
