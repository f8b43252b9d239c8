package redistest

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartReplica starts a replica of primary on loopback and waits until its link is up and it
// holds what primary held when it began. It stops when the test ends.
func StartReplica(t testing.TB, primary *Server) *Server {
	t.Helper()
	host, port, _ := net.SplitHostPort(primary.Addr)
	// The primary's full sync would wait 5 s for more replicas by default.
	p := redis.NewClient(&redis.Options{Addr: primary.Addr})
	defer p.Close()
	if err := p.ConfigSet(context.Background(), "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	r := Start(t, "--replicaof", host, port)
	WaitLink(t, r)
	return r
}

// WaitLink waits until the replica r reports its link to the primary up.
func WaitLink(t testing.TB, r *Server) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer c.Close()
	Eventually(t, "replica "+r.Addr+" in sync", 30*time.Second, func() bool {
		info, err := c.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
}

// WaitCaughtUp waits until the replica r has every byte of its primary's stream: its offset
// equals the primary's.
func WaitCaughtUp(t testing.TB, primary, r *Server) {
	t.Helper()
	p := redis.NewClient(&redis.Options{Addr: primary.Addr})
	defer p.Close()
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer c.Close()
	field := func(c *redis.Client, name string) string {
		info, _ := c.Info(context.Background(), "replication").Result()
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
				return v
			}
		}
		return ""
	}
	Eventually(t, "replica "+r.Addr+" caught up", 30*time.Second, func() bool {
		want := field(p, "master_repl_offset")
		return want != "" && field(c, "slave_repl_offset") == want
	})
}
