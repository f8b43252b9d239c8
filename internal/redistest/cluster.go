package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of masters without replicas, started for one test.
type Cluster struct {
	Addrs   []string
	servers []*Server
}

// StartCluster starts masters redis-server processes with cluster mode on, joins them with
// `redis-cli --cluster create`, waits until every node reports cluster_state:ok, and stops them
// when the test ends. It skips (or under CI fails) like Start when the binaries are missing.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	bin := Binary(t)
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-cli is not installed, and CI needs it: %v", err)
		}
		t.Skip("redis-cli is not installed; install Debian's redis-tools to run this test")
	}
	c := &Cluster{}
	for range masters {
		var s *Server
		var lastErr error
		for range 5 {
			port, err := freePort()
			if err != nil {
				t.Fatalf("redistest: free port: %v", err)
			}
			if s, lastErr = start(bin, port, t.TempDir(), []string{"--cluster-enabled", "yes", "--cluster-node-timeout", "2000"}); lastErr == nil {
				break
			}
		}
		if s == nil {
			t.Fatalf("redistest: start cluster node: %v", lastErr)
		}
		t.Cleanup(s.Stop)
		c.servers = append(c.servers, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.waitOK(30 * time.Second); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return c
}

// waitOK polls every node's CLUSTER INFO until all say cluster_state:ok, or the deadline passes.
func (c *Cluster) waitOK(within time.Duration) error {
	deadline := time.Now().Add(within)
	for _, addr := range c.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			info, err := n.ClusterInfo(ctx).Result()
			cancel()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				n.Close()
				return fmt.Errorf("cluster node %s not ok after %v: %v %s", addr, within, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		n.Close()
	}
	return nil
}

// Client returns a cluster client seeded with every node, closed when the test ends.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}
