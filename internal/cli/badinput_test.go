package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestARedisThatRefusesEverything: every command answers an error. Each command says so in one
// line and exits 1; nothing panics.
func TestARedisThatRefusesEverything(t *testing.T) {
	addr := redistest.StartErrorServer(t)
	for _, args := range [][]string{
		{"snapshot", "--addr", addr},
		{"repair", "--dry-run", "--addr", addr},
		{"inject", "--addr", addr, "--allow-writes", "--events", "10"},
		{"serve", "--addr", addr, "--listen", "127.0.0.1:0"},
		{"--addr", addr},
	} {
		code, _, errOut := hg(t, args...)
		if code != exitRuntime || !strings.Contains(errOut, "refused by the test server") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want exit 1 and the server's error in one line", args, code, errOut)
		}
	}
}

// TestHostileKeys puts the worst a keyspace holds in front of a snapshot: a 1 MB key name in a
// family's shape, binary bytes and escape sequences in dims, a limiter key holding 200k hits, a
// counter at the int64 limit and one past it, and a value like 12abc. The snapshot reports each
// and stays one report.
func TestHostileKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	path, _ := utcConfig(t, srv.Addr)
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	hour := store.WindowAt(store.Hour, now, time.UTC).Start.Format("2006010215")
	huge := "flow:count:" + strings.Repeat("a", 1<<20) + ":ios:10.0.0.1:" + hour
	rdb.Set(ctx, huge, 1, time.Hour)
	rdb.Set(ctx, "flow:count:\xff\xfe\x00:\x1b]0;pwned\x07:10.0.0.2:"+hour, 2, time.Hour)
	rdb.Set(ctx, "flow:count:max:ios:10.0.0.3:"+hour, "9223372036854775807", time.Hour)
	rdb.Set(ctx, "flow:count:over:ios:10.0.0.4:"+hour, "9223372036854775808", time.Hour)
	rdb.Set(ctx, "flow:count:text:ios:10.0.0.5:"+hour, "12abc", time.Hour)
	for i := 0; i < 200_000; i += 10_000 {
		z := make([]redis.Z, 10_000)
		for j := range z {
			z[j] = redis.Z{Score: float64(now.UnixMilli()), Member: fmt.Sprint(i + j)}
		}
		rdb.ZAdd(ctx, "rl:api:flood", z...)
	}
	rdb.HSet(ctx, "rl:api:a-hash", "f", 1) // a limiter's key of the wrong type

	code, out, errOut := hg(t, "snapshot", "--json", "--config", path, "--keys-per-second", "0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07\x00") {
		t.Fatal("a control character from a key reached the output")
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	flow := snap.Family("flow")
	if flow.Keys != 5 || flow.NotInteger != 2 { // 12abc, and 2^63 which no INCRBY could take
		t.Errorf("flow: %d keys, %d not integers; want 5 and 2", flow.Keys, flow.NotInteger)
	}
	if w := flow.CurrentWindow("hour"); w == nil || w.Total != 9223372036854775807 {
		t.Errorf("the hour total saturates at the int64 limit rather than wrap: %+v", w)
	}
	for _, ex := range flow.Health.NotInteger.Examples {
		if len(ex.Key) > format.MaxEscaped+40 {
			t.Errorf("an example key of %d bytes: names are cut", len(ex.Key))
		}
	}
	if lim := snap.Limiters[0]; num(lim.OverLimit) != 1 || lim.Top[0].Count != 200_000 || lim.Keys != 1 || lim.WrongType != 1 {
		t.Errorf("the flooded limiter key, and a hash beside it: %+v", lim)
	}
	code, out, _ = hg(t, "snapshot", "--config", path, "--keys-per-second", "0")
	if code != exitOK || strings.ContainsAny(out, "\x1b\x07\x00") {
		t.Errorf("text report: exit %d, or a control character reached it", code)
	}
	if !strings.Contains(out, "limiter api: 1 key of its pattern holds another type") {
		t.Errorf("the text report does not say a limiter key is of the wrong type:\n%s", out)
	}
}

// TestInjectAcrossARestart kills redis-server (AOF on) while inject runs and starts it again once
// inject has failed to reach it: inject keeps what it could not send, writes it when Redis is
// back, and every event it reports written is in Redis exactly once, summed over the day windows
// the run fell in (two across midnight).
func TestInjectAcrossARestart(t *testing.T) {
	aof := []string{"--appendonly", "yes", "--appendfsync", "always"}
	srv := redistest.Start(t, aof...)
	rdb := srv.Client(t)
	path, cfg := utcConfig(t, srv.Addr)
	out, errOut := &syncBuffer{}, &syncBuffer{}
	began := serverTime(t, rdb)
	done := make(chan int, 1)
	go func() {
		done <- Run(t.Context(), redistest.Shipped(t), []string{"inject", "--config", path, "--allow-writes", "--family", "ad_revenue",
			"--duration", "4s", "--rate", "20000", "--dims", "300"}, out, errOut)
	}()
	redistest.Eventually(t, "inject to write", 10*time.Second, func() bool { return rdb.DBSize(t.Context()).Val() > 0 })
	srv.Stop()
	// While Redis is away, a stand-in holds its port and closes each connection at once, so
	// inject's tries fail; Redis comes back only once inject has tried it, and so holds what it
	// generated.
	away, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var tries atomic.Int64
	go func() {
		for {
			c, err := away.Accept()
			if err != nil {
				return
			}
			tries.Add(1)
			_ = c.Close()
		}
	}()
	waitFor(t, "inject to try Redis while it is away", func() bool { return tries.Load() > 0 })
	_ = away.Close()
	srv.Restart(t, aof...)
	if code := <-done; code != exitOK {
		t.Fatalf("inject across the restart: exit %d, %s %s", code, out.String(), errOut.String())
	}
	ended := serverTime(t, rdb)
	events := parseSummary(t, out.String())["events"]
	f, _ := cfg.Counter("ad_revenue")
	st := store.New(srv.Client(t), store.Options{Location: cfg.Timezone})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Every day window from the one inject began in to the one it ended in.
	tuples := traffic.NewGenerator(f, 300, 1).Tuples()
	var total int64
	var windows []store.Window
	for w := store.WindowAt(store.Day, began, cfg.Timezone); !w.Start.After(ended); w = store.WindowAt(store.Day, w.End, cfg.Timezone) {
		total += windowTotal(t, st, f, store.Day, tuples, w.Start)
		windows = append(windows, w)
	}
	if float64(total) != events || events < 20000 {
		t.Fatalf("Redis holds %d in the day windows %v for the %v events inject reported", total, windows, events)
	}
}

// serverTime is the server's clock, by which the writers cut their windows.
func serverTime(t *testing.T, rdb *redis.Client) time.Time {
	t.Helper()
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}
