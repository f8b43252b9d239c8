package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"hourglass/store"
)

// target is the Redis a command runs against, connected and with the store on it.
type target struct {
	mode     string // "embedded", "standalone" or "cluster"
	label    string // what the operator is told they are looking at
	name     string // [redis] name, when given
	writable bool
	rdb      redis.UniversalClient
	store    *store.Store
	emb      *embedded // nil for a real Redis
}

// openTarget starts the embedded Redis when the config has no address, or connects to the one
// it names (as a cluster when a single address turns out to be a cluster node); then it measures
// the server clock, which only reads. A real Redis is writable only when the config (or
// --allow-writes) says so.
func openTarget(ctx context.Context, cfg *Config) (*target, error) {
	t := &target{}
	initCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if len(cfg.Redis.Addrs) == 0 {
		emb, err := startEmbedded()
		if err != nil {
			return nil, err
		}
		t.mode, t.label, t.writable, t.emb = "embedded", "embedded Redis on "+emb.Addr(), true, emb
		t.rdb = redis.NewClient(&redis.Options{Addr: emb.Addr()})
	} else {
		tg, err := cfg.Redis.target()
		if err != nil {
			return nil, err
		}
		t.label, t.writable = strings.Join(tg.Addrs, ","), cfg.Redis.AllowWrites
		if tg.TLS != nil {
			t.label = "tls:" + t.label
		}
		if n := cfg.Redis.Name; n != "" {
			t.name, t.label = n, n+" ("+t.label+")"
		}
		t.rdb = tg.NewClient()
		if !tg.Cluster() && clusterNode(initCtx, t.rdb) {
			// One address of a cluster: talk to the whole cluster through it.
			_ = t.rdb.Close()
			tg.ClusterMode = true
			t.rdb = tg.NewClient()
			if err := cfg.checkCluster(); err != nil {
				_ = t.rdb.Close()
				return nil, usageError{err}
			}
		}
		t.mode = tg.Mode()
	}
	t.store = store.New(t.rdb, store.Options{Location: cfg.UI.Timezone})
	if err := t.store.Init(initCtx); err != nil {
		t.Close()
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, fmt.Errorf("cannot use Redis at %s: %w", t.label, err)
	}
	return t, nil
}

// clusterNode reports whether the server rdb talks to runs in cluster mode. A server that will
// not say (INFO refused to the user, or unreachable: the clock read that follows reports that)
// is taken as standalone.
func clusterNode(ctx context.Context, rdb redis.UniversalClient) bool {
	info, err := rdb.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}

// requireWrites refuses a write command on a read-only target, before anything connects.
func requireWrites(cfg *Config, what string) error {
	if len(cfg.Redis.Addrs) == 0 || cfg.Redis.AllowWrites {
		return nil
	}
	return usagef("refusing to %s on %s: a real Redis is read-only unless --allow-writes (or allow_writes = true under [redis])",
		what, redactAddrs(cfg.Redis.Addrs))
}

// Close disconnects and stops the embedded Redis, if any.
func (t *target) Close() {
	_ = t.rdb.Close()
	if t.emb != nil {
		t.emb.Close()
	}
}

// redactAddrs lists addresses for a message, with any URL password hidden.
func redactAddrs(addrs []string) string {
	shown := make([]string, len(addrs))
	for i, a := range addrs {
		shown[i] = store.RedactAddr(a)
	}
	return strings.Join(shown, ",")
}

// target is the Redis the [redis] table names: its addresses, user, password and TLS settings.
// A mistake in them is a usage error.
func (r RedisConfig) target() (store.Target, error) {
	password, err := r.Password()
	if err != nil {
		return store.Target{}, usageError{err}
	}
	tg, err := store.ParseTarget(r.Addrs, r.Username, password)
	if err != nil {
		return store.Target{}, usageError{err}
	}
	if r.TLS.Any() {
		if err := tg.UseTLS(r.TLS); err != nil {
			return store.Target{}, usageError{err}
		}
	}
	return tg, nil
}
