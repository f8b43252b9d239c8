package target

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// Replicas are the nodes the sweeps may read from when read_from = "replica": the addresses
// given for a standalone primary, or, through Sentinel, the replicas the Sentinels list up. The
// watcher asks for them again whenever the one it reads from fails its checks.
type Replicas struct {
	tg     store.Target
	static []string // a standalone primary's replica_addrs; nil through Sentinel
}

// Candidates are the replicas to try, best first.
func (r *Replicas) Candidates(ctx context.Context) ([]string, error) {
	if r.tg.Sentinel == nil {
		return r.static, nil
	}
	return store.SentinelReplicas(ctx, r.tg)
}

// Client is a read-only client of the replica at addr.
func (r *Replicas) Client(addr string) redis.UniversalClient { return r.tg.ReplicaClient(addr) }

// openReplicas checks that the sweeps can read from a replica as the config asks, and returns
// where to find them; nil when the sweeps read from the primary. No replica known (none given,
// none the Sentinels list, or every one given answers as a primary) is a usage error.
func openReplicas(ctx context.Context, cfg *config.Config, tg store.Target, mode string) (*Replicas, error) {
	rc := cfg.Redis
	if !rc.ReadFrom.Replica() {
		return nil, nil
	}
	if err := rc.ReplicaProblem(mode == "cluster"); err != nil {
		return nil, err
	}
	r := &Replicas{tg: tg}
	if tg.Sentinel != nil {
		// Replicas listed but none up now may come up: the watcher reads the primary meanwhile.
		if _, err := r.Candidates(ctx); errors.Is(err, store.ErrNoReplica) {
			return nil, config.Usagef("reading from a replica: %v", err)
		}
		return r, nil
	}
	r.static = rc.ReadFrom.Replicas
	var primaries []string
	for _, addr := range r.static {
		c := r.Client(addr)
		st, err := store.ReadReplicaState(ctx, c)
		_ = c.Close()
		if err != nil || st.Role != "master" {
			return r, nil // a replica, or one down now: the watcher checks it at every poll
		}
		primaries = append(primaries, addr)
	}
	return nil, config.Usagef("reading from a replica: no replica: %s answers as a primary, not a replica", strings.Join(primaries, ", "))
}
