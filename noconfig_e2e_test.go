package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// liveCounters writes seed-style pv:<site>:<hour> and pv:<site>:<day> counters in UTC, as a
// writer of the seed posts does (INCRBY then EXPIRE), until the test ends; done says how many
// events of the current UTC hour have been acknowledged so far.
type liveCounters struct {
	mu    sync.Mutex
	hours map[string]int64 // UTC hour label -> events acknowledged
	sent  atomic.Int64
}

func startLiveCounters(t *testing.T, rdb *redis.Client) *liveCounters {
	t.Helper()
	lc := &liveCounters{hours: map[string]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			now := time.Now().UTC()
			hour, day := now.Format("2006010215"), now.Format("20060102")
			site := fmt.Sprintf("site%d", i%40)
			pipe := rdb.Pipeline()
			for _, k := range []string{"pv:" + site + ":" + hour, "pv:" + site + ":" + day} {
				pipe.IncrBy(ctx, k, 1)
				pipe.Expire(ctx, k, 48*time.Hour)
			}
			if _, err := pipe.Exec(ctx); err == nil {
				lc.mu.Lock()
				lc.hours[hour]++
				lc.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return lc
}

// hour returns the events acknowledged in the UTC hour label.
func (lc *liveCounters) hour(label string) int64 {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.hours[label]
}

// TestNoConfigUnderAnotherZone tries hourglass as a new user does: Sidekiq, RQ, BullMQ and python
// limits fill a real redis-server, seed-style counters are written in UTC while it runs, and the built binary
// runs under TZ=Asia/Shanghai, in a directory with no config.toml and no --config. snapshot
// infers the entries, cuts the counters' windows in UTC as the data shows (this hour's total lies
// between what was acknowledged before and after it ran), and warns of no zone; the console says
// its entries are inferred, shows the counters, and w writes a config that loads with them.
func TestNoConfigUnderAnotherZone(t *testing.T) {
	tmux := tmuxBinary(t)
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	py := redistest.Interpreter(t, "python3", "limits", "redis")
	bin := buildConsole(t)
	srv := redistest.Start(t)
	redistest.RunFixture(t, ruby, "store/jobs/testdata/sidekiq", nil, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	redistest.RunFixture(t, py, "store/limits/testdata/limits", nil, "fixture.py", "redis://"+srv.Addr+"/0")
	redistest.RunFixture(t, redistest.Interpreter(t, "python3", "rq"), "store/jobs/testdata/rq", nil, "fixture.py", "redis://"+srv.Addr+"/0")
	redistest.RunFixture(t, redistest.Interpreter(t, "node", "bullmq", "ioredis"), redistest.NodeDir(), nil, "bullmq.mjs", "redis://"+srv.Addr)
	redistest.ClearOfHourEnd(t, 90*time.Second)
	lc := startLiveCounters(t, srv.Client(t))
	redistest.Eventually(t, "the writer writes", 10*time.Second, func() bool { return lc.hour(time.Now().UTC().Format("2006010215")) > 100 })
	dir := t.TempDir()

	label := time.Now().UTC().Format("2006010215")
	before := lc.hour(label)
	cmd := exec.Command(bin, "snapshot", "--json", "--addr", srv.Addr)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "TZ=Asia/Shanghai")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("snapshot: %v\n%s", err, stderr.String())
	}
	after := lc.hour(label)
	var snap snapshot.Snapshot
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	checkInferredSnapshot(t, &snap, label, before, after)

	opened := lc.hour(label)
	term := openTerminal(t, tmux, dir, 120, 36, "/usr/bin/env", "TZ=Asia/Shanghai", bin, "--addr", srv.Addr)
	term.waitText("no config:", "entries inferred", "w saves")
	term.press("2")
	// The counters table's pv row: its THIS HOUR holds the UTC hour's events, at least those
	// acknowledged before the console opened and at most those acknowledged once it is read.
	pvRow := regexp.MustCompile(`(?m)^pv\S*\s+[\d,]+\s+([\d,]+)\s`)
	var shown, read int64
	term.waitFor("the pv family with this hour's events", func(s string) bool {
		read = lc.hour(label)
		m := pvRow.FindStringSubmatch(s)
		if m == nil || strings.Contains(s, "zone") {
			return false
		}
		shown, _ = strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		return shown >= opened
	})
	if shown > read {
		t.Fatalf("the console shows %d events in pv's hour %s, more than the %d acknowledged", shown, label, read)
	}
	term.press("w")
	term.waitText("Write the proposal to a new file")
	term.press("-l", "mine.toml")
	term.press("Enter")
	term.waitText("wrote mine.toml")
	cfg, err := config.Load(filepath.Join(dir, "mine.toml"), nil)
	if err != nil {
		t.Fatalf("the file the console wrote does not load: %v", err)
	}
	if cfg.TimezoneName != "UTC" || len(cfg.Counters) == 0 || len(cfg.Structures.JobQueues) == 0 || len(cfg.Structures.Limiters) == 0 {
		t.Fatalf("the file cuts windows in %s and holds %d counters, %d job queues, %d limiters", cfg.TimezoneName,
			len(cfg.Counters), len(cfg.Structures.JobQueues), len(cfg.Structures.Limiters))
	}
}

// checkInferredSnapshot holds a no-config snapshot to the keys: the entries inferred, the pv
// family's current UTC hour (label) between the events acknowledged before and after it ran, and
// no warning of a zone.
func checkInferredSnapshot(t *testing.T, snap *snapshot.Snapshot, label string, before, after int64) {
	t.Helper()
	if snap.Inferred == nil {
		t.Fatal("the snapshot does not say its entries are inferred")
	}
	tables := map[string]int{}
	zone := ""
	for _, e := range snap.Inferred.Entries {
		tables[e.Table]++
		if e.Table == "counter" && strings.HasPrefix(e.Pattern, "pv:") {
			zone = e.Timezone
		}
	}
	if tables["counter"] == 0 || tables["job_queue"] < 3 || tables["limiter"] == 0 || zone != "UTC" {
		t.Fatalf("inferred %+v; want a counter cut in UTC, three job libraries and a limiter", snap.Inferred.Entries)
	}
	for _, w := range snap.Warnings {
		if strings.Contains(w, "zone") || strings.Contains(w, "UTC") {
			t.Errorf("warning: %s", w)
		}
	}
	for _, f := range snap.Counters {
		if !strings.HasPrefix(f.Family, "pv") {
			continue
		}
		cw := f.CurrentWindow("hour")
		if cw == nil || cw.Window != label || cw.Total < before || cw.Total > after {
			t.Fatalf("pv's current hour %+v; want %s holding %d to %d events", cw, label, before, after)
		}
		return
	}
	t.Fatalf("no pv family among %+v", snap.Counters)
}
