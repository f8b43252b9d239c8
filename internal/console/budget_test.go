package console

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// scanned counts the keys the SCANs of a client return, as a go-redis hook: what a sweep visits,
// counted on the wire and not by the sweep's own figures.
type scanned struct {
	mu   sync.Mutex
	keys int
}

func (s *scanned) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *scanned) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if sc, ok := cmd.(*redis.ScanCmd); ok && err == nil {
			keys, _ := sc.Val()
			s.mu.Lock()
			s.keys += len(keys)
			s.mu.Unlock()
		}
		return err
	}
}

func (s *scanned) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (s *scanned) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys
}

// The console spends its sweep budget: on a keyspace a sweep takes many polls to cover, the keys
// it visits a second are [scan] keys_per_second, not the share of it a poll's slice of the
// refresh allowed (a third of it, when each poll swept half the refresh and the next began a
// refresh after it returned). Nor does it go over the budget. The tolerance is wide: this is
// about where the budget goes, not about speed; 2,000 keys a second in pages of 100 is light work.
func TestConsoleSweepsAtItsBudget(t *testing.T) {
	const budget = 2000
	srv := redistest.Start(t)
	cfg := testConfig(t) // a poll every 250 ms
	cfg.Scan.Count, cfg.Scan.KeysPerSecond = 100, budget
	cfg.Scan.MaxRedisTime = 1                  // keys_per_second alone paces the sweep
	cfg.Scan.LiveSample = 0                    // the live reads take only the largest keys' share
	fillFlow(t, cfg, srv.Client(t), 30_000, 1) // a sweep of 15 s: the window sees no sweep end
	counter := &scanned{}
	d := console(t, cfg, srv.Addr, "", false, counter)
	d.until(5*time.Second, []string{"● connected", "first sweep"})

	const window = 3 * time.Second
	start, from := time.Now(), counter.count()
	d.untilTrue(window+2*time.Second, func() bool { return time.Since(start) >= window })
	rate := float64(counter.count()-from) / time.Since(start).Seconds()
	t.Logf("swept %.0f keys/s over %v at a budget of %d", rate, window, budget)
	if rate < 0.7*budget || rate > 1.15*budget {
		t.Fatalf("the console swept %.0f keys/s over %v; its budget is %d keys/s", rate, window, budget)
	}
}
