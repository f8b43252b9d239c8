package target

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/store"
)

// Target is the Redis a command runs against, connected and with the store on it.
type Target struct {
	Mode     string // "embedded", "standalone", "sentinel" or "cluster"
	Label    string // what the operator is told they are looking at
	Name     string // [redis] name, when given
	Writable bool
	RDB      redis.UniversalClient
	Store    *store.Store
	Embedded *Embedded // nil for a real Redis
	// Replicas are where the sweeps read when read_from = "replica"; nil when they read
	// from the primary. Writes never go to them.
	Replicas *Replicas
}

// ErrInterrupted is an Open stopped by ctrl+c before it had connected.
var ErrInterrupted = errors.New("interrupted")

// Open starts the embedded Redis when the config has no address, or connects to the one it names. A
// single address that turns out to be a cluster node is opened as a cluster. Then it measures the
// server clock, which only reads. A real Redis is writable only when the config (or --allow-writes)
// says so. Whether the config's entries suit a cluster is for the command to decide
// (config.ClusterProblems). One that writes refuses what one that reads only warns of.
func Open(ctx context.Context, cfg *config.Config) (*Target, error) {
	t := &Target{}
	initCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if !cfg.Redis.Real() {
		emb, err := StartEmbedded()
		if err != nil {
			return nil, err
		}
		t.Mode, t.Label, t.Writable, t.Embedded = "embedded", "embedded Redis on "+emb.Addr(), true, emb
		t.RDB = redis.NewClient(&redis.Options{Addr: emb.Addr()})
	} else {
		tg, err := cfg.Redis.Target()
		if err != nil {
			return nil, err
		}
		t.Label, t.Writable = strings.Join(tg.Addrs, ","), cfg.Redis.AllowWrites
		if tg.Sentinel != nil {
			if err := findPrimary(initCtx, tg); err != nil {
				if ctx.Err() != nil {
					return nil, ErrInterrupted
				}
				return nil, err
			}
			t.Label = "sentinel master " + tg.Sentinel.Master + " (" + t.Label + ")"
		}
		if tg.TLS != nil {
			t.Label = "tls:" + t.Label
		}
		if n := cfg.Redis.Name; n != "" {
			t.Name, t.Label = n, n+" ("+t.Label+")"
		}
		t.RDB = tg.NewClient()
		if !tg.Cluster() && store.IsClusterNode(initCtx, t.RDB) {
			// One address of a cluster: talk to the whole cluster through it.
			_ = t.RDB.Close()
			tg.ClusterMode = true
			t.RDB = tg.NewClient()
		}
		t.Mode = tg.Mode()
		if t.Replicas, err = openReplicas(initCtx, cfg, tg, t.Mode); err != nil {
			_ = t.RDB.Close()
			if ctx.Err() != nil {
				return nil, ErrInterrupted
			}
			return nil, err
		}
	}
	t.Store = store.New(t.RDB, store.Options{Location: cfg.Timezone})
	if err := t.Store.Init(initCtx); err != nil {
		t.Close()
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, fmt.Errorf("cannot use Redis at %s: %w", t.Label, err)
	}
	return t, nil
}

// findPrimary asks the Sentinels for the primary until they agree on one, or ctx ends. A
// master name no Sentinel knows is a usage error; a Sentinel that refuses our credentials
// ends it at once; Sentinels that do not answer or disagree are asked again, as a lost
// connection is tried again.
func findPrimary(ctx context.Context, tg store.Target) error {
	wait := 100 * time.Millisecond
	for {
		_, err := store.PrimaryFrom(tg.Sentinel.Master, store.AskSentinels(ctx, tg))
		switch {
		case err == nil:
			return nil
		case errors.Is(err, store.ErrUnknownMaster):
			return config.Usagef("%v", err)
		case store.ClassOf(err) == store.ClassPermanent:
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cannot find the primary of Sentinel master %q: %w", tg.Sentinel.Master, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// Close disconnects and stops the embedded Redis, if any.
func (t *Target) Close() {
	_ = t.RDB.Close()
	if t.Embedded != nil {
		t.Embedded.Close()
	}
}
