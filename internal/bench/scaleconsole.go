package bench

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// scaleIdleFor is how long Redis is watched with nobody asking, for its idle CPU (at most as
// long as the console polls).
const scaleIdleFor = 5 * time.Second

// consoleAtDefaults polls a Watcher as the console does, at the shipped config's [scan] settings
// (keys_per_second, max_call, max_redis_time, live_sample) and refresh (a poll sweeping for the
// refresh, the next when it is back, or when the refresh has passed if its sweep ended early), for
// opt.ConsoleFor: when its first figures came, and Redis' CPU and time meanwhile, beside its CPU
// with nobody asking just before. It returns the console, which the live rate's measure polls on.
func consoleAtDefaults(ctx context.Context, opt ScaleOptions, rdb redis.UniversalClient, nodes []*redis.Client,
	families []*store.Family, fams []*scaleFam) (ScaleConsole, *consolePoll, error) {
	def := opt.Defaults
	refresh := def.UI.Refresh
	c := ScaleConsole{KeysPerSecond: def.Scan.KeysPerSecond, MaxRedisTime: def.Scan.MaxRedisTime, RefreshSeconds: refresh.Seconds()}
	idleFor := min(scaleIdleFor, opt.ConsoleFor)
	cpu0 := nodesCPU(ctx, nodes)
	if err := store.Sleep(ctx, idleFor); err != nil {
		return c, nil, err
	}
	c.IdleCPU = 100 * (nodesCPU(ctx, nodes) - cpu0) / idleFor.Seconds()
	stats0, statsErr := nodesCommandStats(ctx, nodes)
	cpu0 = nodesCPU(ctx, nodes)
	live := def.Scan.LiveSample
	if live == 0 {
		live = -1 // the scanner's zero is its default; the config's is none
	}
	cp := &consolePoll{refresh: refresh, w: watch.New(rdb, families, scanner.Options{Count: def.Scan.Count,
		KeysPerSecond: def.Scan.KeysPerSecond, MaxCall: def.Scan.MaxCall, MaxRedisTime: def.Scan.MaxRedisTime,
		LiveSample: live, Location: time.UTC, TopK: 20})}
	start := time.Now()
	for time.Since(start) < opt.ConsoleFor {
		began := time.Now()
		st, err := cp.poll(ctx)
		if err != nil {
			return c, nil, err
		}
		c.Polls++
		c.KeysSwept = st.Sweep.KeysSeen
		snap := st.Partial
		if st.Snapshot != nil {
			snap = st.Snapshot
		}
		if c.FirstFigures == nil && hasFigures(snap, fams, false) {
			c.FirstFigures = ptr(since(start))
		}
		if c.AllFigures == nil && hasFigures(snap, fams, true) {
			c.AllFigures = ptr(since(start))
		}
		if err := store.Sleep(ctx, min(refresh-time.Since(began), opt.ConsoleFor-time.Since(start))); err != nil {
			return c, nil, err
		}
	}
	c.Seconds = since(start)
	c.CPU = 100 * (nodesCPU(ctx, nodes) - cpu0) / c.Seconds
	c.CPUOverIdle = max(c.CPU-c.IdleCPU, 0)
	if stats1, err := nodesCommandStats(ctx, nodes); err == nil && statsErr == nil {
		c.ByCommand = map[string]float64{}
		var usec float64
		for name, s := range stats1 {
			if d := s.Usec - stats0[name].Usec; d > 0 {
				c.ByCommand[name] = float64(d)
				usec += float64(d)
			}
		}
		c.ServerTime = ptr(usec / 1e6 / c.Seconds * 100)
	}
	return c, cp, nil
}

// consolePoll is a Watcher polled as the console polls it: each poll sweeps for the refresh.
type consolePoll struct {
	w       *watch.Watcher
	refresh time.Duration
}

func (cp *consolePoll) poll(ctx context.Context) (snapshot.Status, error) {
	pctx, cancel := context.WithTimeout(ctx, cp.refresh+5*time.Second)
	defer cancel()
	return cp.w.Poll(pctx, cp.refresh, "")
}

// hasFigures says whether every main family's keys (with all, every family's) are an estimate
// with an interval in snap, or exact.
func hasFigures(snap *snapshot.Snapshot, fams []*scaleFam, all bool) bool {
	if snap == nil {
		return false
	}
	for _, sf := range fams {
		if sf.trial && !all {
			continue
		}
		fs := snap.Family(sf.fam.Name())
		if fs == nil {
			return false
		}
		if !snap.Scan.Complete && (fs.KeysEstimate == nil || fs.KeysEstimate.High == nil) {
			return false
		}
	}
	return true
}

// nodesCPU is the CPU seconds the nodes' processes have used (INFO cpu), summed; a node that
// does not answer adds nothing.
func nodesCPU(ctx context.Context, nodes []*redis.Client) float64 {
	var total float64
	for _, n := range nodes {
		c, _ := redisCPU(ctx, n)
		total += c
	}
	return total
}

// nodesCommandStats is INFO commandstats summed over the nodes.
func nodesCommandStats(ctx context.Context, nodes []*redis.Client) (map[string]cmdStat, error) {
	sum := map[string]cmdStat{}
	for _, n := range nodes {
		st, err := readCommandStats(ctx, n)
		if err != nil {
			return nil, err
		}
		for name, s := range st {
			t := sum[name]
			t.Calls += s.Calls
			t.Usec += s.Usec
			sum[name] = t
		}
	}
	return sum, nil
}

// infoInt is one integer field of an INFO section, 0 when it cannot be read.
func infoInt(ctx context.Context, n *redis.Client, section, field string) int64 {
	info, err := n.Info(ctx, section).Result()
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			i, _ := strconv.ParseInt(v, 10, 64)
			return i
		}
	}
	return 0
}

func ptr[T any](v T) *T { return &v }
