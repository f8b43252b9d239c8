package bench

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// startCluster runs a cluster of masters redis-servers, as the tests do (internal/redistest). It
// returns the nodes' addresses, owners[slot] (the index of the node holding each slot), and a
// stop that ends them and removes their directories.
func startCluster(ctx context.Context, masters int) ([]string, []int, func(), error) {
	dir, err := os.MkdirTemp("", "hourglass-bench-cluster-")
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := redistest.LaunchCluster(dir, masters, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, fmt.Errorf("bench: forming the cluster: %w", err)
	}
	stop := func() { c.Stop(); os.RemoveAll(dir) }
	owners, err := slotOwners(ctx, c.Addrs)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("bench: the cluster's slots: %w", err)
	}
	return c.Addrs, owners, stop, nil
}

// slotOwners reads CLUSTER SLOTS from the first node: owners[slot] is the index in addrs of the
// master that holds the slot.
func slotOwners(ctx context.Context, addrs []string) ([]int, error) {
	const slots = 16384
	c := redis.NewClient(&redis.Options{Addr: addrs[0]})
	defer c.Close()
	ranges, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(addrs))
	for i, a := range addrs {
		index[a] = i
	}
	owners := make([]int, slots)
	held := 0
	for _, r := range ranges {
		if len(r.Nodes) == 0 || r.Start < 0 || r.End >= slots || r.Start > r.End {
			return nil, fmt.Errorf("a slot range %d-%d with %d nodes", r.Start, r.End, len(r.Nodes))
		}
		i, ok := index[r.Nodes[0].Addr]
		if !ok {
			return nil, fmt.Errorf("slots %d-%d are held by %s, not a node started", r.Start, r.End, r.Nodes[0].Addr)
		}
		for s := r.Start; s <= r.End; s++ {
			owners[s] = i
		}
		held += int(r.End - r.Start + 1)
	}
	if held != slots {
		return nil, fmt.Errorf("%d of %d slots are held", held, slots)
	}
	return owners, nil
}
