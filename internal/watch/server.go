package watch

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// ServerEvery is the least time between two reads of the server's INFO by a Watcher: INFO is
// cheap, but the figures it gives move slowly, and every Poll need not pay for it. Its command
// is counted by the cost hook as every other command sent (cost.go).
const ServerEvery = 5 * time.Second

// measuring is why a rate is not known before a second read; tooSoon why it is not from two
// reads under minSpan apart (a snapshot's sweep of a few keys), over which one key would read as
// hundreds a second.
const (
	measuring = "measuring: a rate needs a second INFO read"
	tooSoon   = "measuring: the two INFO reads were under a second apart"
	minSpan   = time.Second
)

// ServerReader reads the server's health from INFO (every master of a cluster) and measures the
// evicted and expired keys a second between its reads. snapshot reads it before and after its
// sweep; a Watcher at most every ServerEvery.
type ServerReader struct {
	last map[string]counted // per node address: the last read's totals
	// every is the least time between reads (ServerEvery; a test shortens it); lastRead when the
	// last one was.
	every    time.Duration
	minSpan  time.Duration
	lastRead time.Time
	info     snapshot.ServerInfo
}

// counted is a node's evicted and expired keys as one read found them, and when.
type counted struct {
	at               time.Time
	evicted, expired *int64
}

// NewServerReader returns a reader with no read yet: its first read's rates say "measuring".
func NewServerReader() *ServerReader {
	return &ServerReader{last: map[string]counted{}, every: ServerEvery, minSpan: minSpan}
}

// due reports whether a Watcher's Poll at now reads INFO again.
func (r *ServerReader) due(now time.Time) bool {
	return r.lastRead.IsZero() || now.Sub(r.lastRead) >= r.every
}

// Read reads INFO from every master of rdb. A refusal (NOPERM) is said in ServerInfo.Err, not
// returned; a connection failure is returned, with the last read's figures kept.
func (r *ServerReader) Read(ctx context.Context, rdb redis.UniversalClient) (snapshot.ServerInfo, error) {
	var info snapshot.ServerInfo
	var mu sync.Mutex
	read := func(ctx context.Context, addr string, c redis.Cmdable) error {
		text, err := c.Info(ctx).Result() // the default sections
		at := time.Now()
		mu.Lock()
		defer mu.Unlock()
		var rerr redis.Error
		if errors.As(err, &rerr) {
			info.Err = "INFO refused: " + err.Error()
			return nil
		}
		if err != nil {
			return err
		}
		f := store.InfoFields(text)
		n := nodeHealth(addr, f)
		r.rates(&n, at)
		info.Masters++
		info.Version = f["redis_version"]
		ops, _ := strconv.ParseInt(f["instantaneous_ops_per_sec"], 10, 64)
		info.OpsPerSec += ops
		if n.UsedMemory != nil {
			info.UsedMemory += *n.UsedMemory
		}
		info.Nodes = append(info.Nodes, n)
		return nil
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return read(ctx, n.Options().Addr, n) })
	case *redis.Client:
		err = read(ctx, c.Options().Addr, c)
	default:
		err = read(ctx, "", rdb)
	}
	if err != nil {
		return r.info, err
	}
	sortNodes(info.Nodes)
	info.ReadAt = time.Now()
	r.info, r.lastRead = info, info.ReadAt
	return info, nil
}

// rates sets n's evicted and expired keys a second from the last read of the same node. Before
// one, or when a total went back (a restart, CONFIG RESETSTAT), they are measuring.
func (r *ServerReader) rates(n *snapshot.NodeHealth, at time.Time) {
	if n.Unknown == nil {
		n.Unknown = map[string]string{}
	}
	defer func() {
		if len(n.Unknown) == 0 {
			n.Unknown = nil
		}
	}()
	prev, ok := r.last[n.Addr]
	soon := ok && at.Sub(prev.at) < r.minSpan // the rate waits for a read further apart
	if !soon {
		r.last[n.Addr] = counted{at: at, evicted: n.EvictedKeys, expired: n.ExpiredKeys}
	}
	secs := at.Sub(prev.at).Seconds()
	rate := func(then, now *int64, field string) *float64 {
		switch {
		case now == nil:
			n.Unknown[field] = withheld
			return nil
		case soon:
			n.Unknown[field] = tooSoon
			return nil
		case !ok || then == nil || *now < *then || secs <= 0:
			n.Unknown[field] = measuring
			return nil
		}
		v := float64(*now-*then) / secs
		return &v
	}
	n.EvictedPerSec = rate(prev.evicted, n.EvictedKeys, "evicted_per_sec")
	n.ExpiredPerSec = rate(prev.expired, n.ExpiredKeys, "expired_per_sec")
}

// sortNodes orders nodes by address, so a cluster's masters keep their places between reads.
func sortNodes(nodes []snapshot.NodeHealth) {
	slices.SortFunc(nodes, func(a, b snapshot.NodeHealth) int { return strings.Compare(a.Addr, b.Addr) })
}

// serverInfo is the last INFO read, with the eviction risk its policies put on what st's
// Snapshot (or, until one completes, the sweep under way's) holds.
func (w *Watcher) serverInfo(st snapshot.Status) snapshot.ServerInfo {
	info := w.server.info
	info.Nodes = slices.Clone(info.Nodes)
	snap := st.Snapshot
	if snap == nil {
		snap = st.Partial
	}
	info.Eviction = snapshot.NewEvictionRisk(info.Nodes, snap)
	return info
}
