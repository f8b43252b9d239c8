package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster started for one test.
type Cluster struct {
	Addrs   []string
	servers []*Server
}

// StartCluster starts masters redis-server processes with cluster mode on, joins them with
// `redis-cli --cluster create`, waits until every node reports cluster_state:ok, and stops them
// when the test ends. It skips (or under CI fails) like Start when the binaries are missing.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	return StartClusterReplicas(t, masters, 0)
}

// StartClusterReplicas is StartCluster with replicas replicas of each master.
func StartClusterReplicas(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	Binary(t)
	if _, err := exec.LookPath("redis-cli"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-cli is not installed, and CI needs it: %v", err)
		}
		t.Skip("redis-cli is not installed; install Debian's redis-tools to run this test")
	}
	c, err := LaunchCluster(t.TempDir(), masters, replicas)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// LaunchCluster starts a cluster as StartClusterReplicas does, for a program rather than a test:
// each node's files go in a directory of its own under dir, and the caller stops it.
func LaunchCluster(dir string, masters, replicas int) (*Cluster, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("no redis-server on PATH (Debian: apt-get install redis-server): %w", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("no redis-cli on PATH (Debian: apt-get install redis-tools): %w", err)
	}
	c := &Cluster{}
	for i := range masters * (1 + replicas) {
		nodeDir := filepath.Join(dir, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(nodeDir, 0o700); err != nil {
			c.Stop()
			return nil, err
		}
		s, err := launch(bin, nodeDir, func() ([]string, error) {
			return []string{"--cluster-enabled", "yes", "--cluster-node-timeout", "2000"}, nil
		})
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("start cluster node: %w", err)
		}
		c.servers = append(c.servers, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", fmt.Sprint(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.waitOK(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, s := range c.servers {
		s.Stop()
	}
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

// Failover promotes a replica with CLUSTER FAILOVER, a coordinated, manual failover: its master
// hands its slots over. It waits until the replica reports itself a master and the cluster is ok.
// It returns the promoted node's address, or "" after reporting an error. (It may run on a
// goroutine of its own, so it does not stop the test.)
func (c *Cluster) Failover(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	for _, addr := range c.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		role, err := n.Do(ctx, "ROLE").Slice()
		if err != nil || len(role) == 0 || role[0] != "slave" {
			n.Close()
			continue
		}
		// A manual failover that times out (the replica did not catch up in time) is simply
		// dropped by Redis: ask again until the replica reports itself a master.
		deadline := time.Now().Add(60 * time.Second)
		var asked time.Time
		for {
			role, err := n.Do(ctx, "ROLE").Slice()
			if err == nil && len(role) > 0 && role[0] == "master" {
				break
			}
			if time.Now().After(deadline) {
				n.Close()
				t.Errorf("redistest: %s did not become a master: %v %v", addr, role, err)
				return ""
			}
			if time.Since(asked) > 5*time.Second {
				if err := n.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
					n.Close()
					t.Errorf("redistest: CLUSTER FAILOVER on %s: %v", addr, err)
					return ""
				}
				asked = time.Now()
			}
			time.Sleep(20 * time.Millisecond)
		}
		n.Close()
		if err := c.waitOK(30 * time.Second); err != nil {
			t.Errorf("redistest: after failover: %v", err)
			return ""
		}
		return addr
	}
	t.Fatal("redistest: no replica to promote")
	return ""
}
