package bench

import (
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// testBencher is a bencher on srv, as Run makes one for a server of its own, with its progress
// line on log.
func testBencher(t *testing.T, srv *redistest.Server, log io.Writer) *bencher {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	stats := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 2})
	t.Cleanup(func() { rdb.Close(); stats.Close() })
	sent := newSentCommands()
	rdb.AddHook(sent)
	b := &bencher{ctx: t.Context(), rdb: rdb, target: store.Target{Addrs: []string{srv.Addr}}, own: true, loadFor: time.Second,
		passes: 3, meter: &meter{stats: stats, sent: sent}, server: map[string]*ServerTime{}, prog: newProgress(log, false, 0)}
	return b
}
