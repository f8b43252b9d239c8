package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// startCluster runs masters redis-servers with cluster mode on, each in a directory of its own
// for its nodes.conf, gives each an equal range of the 16,384 slots, joins them, and waits until
// every node says cluster_state:ok. It returns the nodes' addresses, owners[slot] (the index of
// the node holding each slot), and a stop that ends them and removes their directories.
func startCluster(ctx context.Context, masters int) ([]string, []int, func(), error) {
	var addrs []string
	var stops []func()
	stop := func() { // in reverse: each node stops before its directory goes
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	for range masters {
		dir, err := os.MkdirTemp("", "hourglass-bench-cluster-")
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		addr, stopNode, err := startServerWith("--cluster-enabled", "yes", "--cluster-node-timeout", "5000", "--dir", dir)
		stops = append(stops, func() { os.RemoveAll(dir) })
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		stops = append(stops, stopNode)
		addrs = append(addrs, addr)
	}
	owners, err := joinCluster(ctx, addrs)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("bench: forming the cluster: %w", err)
	}
	return addrs, owners, stop, nil
}

// joinCluster hands out the slots, introduces the nodes to the first, and waits for the
// cluster to be ok, as redis-cli --cluster create does.
func joinCluster(ctx context.Context, addrs []string) ([]int, error) {
	const slots = 16384
	owners := make([]int, slots)
	host, port, _ := strings.Cut(addrs[0], ":")
	for i, addr := range addrs {
		lo, hi := i*slots/len(addrs), (i+1)*slots/len(addrs)-1
		for s := lo; s <= hi; s++ {
			owners[s] = i
		}
		c := redis.NewClient(&redis.Options{Addr: addr})
		err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err()
		if err == nil {
			err = c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err()
		}
		if err == nil && i > 0 {
			err = c.Do(ctx, "CLUSTER", "MEET", host, port).Err()
		}
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", addr, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d\r", len(addrs))) {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				c.Close()
				return nil, fmt.Errorf("%s not ok after 30s: %v %s", addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	return owners, nil
}
