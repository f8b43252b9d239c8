package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// TestClusterHashTagRefusesOnlyWrites points a config whose family's hour and day keys can land in
// different slots at a real 3-master cluster. The commands that only read (snapshot, serve, a
// read-only console, discover, repair --dry-run) go on, with one warning line naming the family
// and why, and the snapshot reads the family's keys; those that write (inject, repair, a console
// with --allow-writes) refuse at the pattern's line, exit 2, whether the cluster is given by its
// seeds or found through one node, and write nothing. (The refusal used to stop a read-only
// snapshot too.)
func TestClusterHashTagRefusesOnlyWrites(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	const split = "../config/testdata/config/split-slots.toml"
	cfg, err := config.Load(split, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := cfg.Counter("ad_revenue")
	now := redistest.ClearOfHourEnd(t, time.Minute)
	key, err := f.Key(store.WindowAt(store.Hour, now, cfg.Timezone), []string{"web", "banner"})
	if err != nil {
		t.Fatal(err)
	}
	rdb := cl.Client(t)
	if err := rdb.Set(t.Context(), key, 7, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	const warning = `hourglass: warning: ../config/testdata/config/split-slots.toml:8: counter.pattern: hour and day keys of "ad_revenue" ` +
		`can land in different cluster slots, so one script cannot write both; put the dims in a hash tag: pattern = "ad:{<channel>:<ad>}:<window>" `
	one, seeds := []string{"--addr", cl.Addrs[1]}, []string{"--addr", cl.Addrs[0], "--addr", cl.Addrs[1], "--addr", cl.Addrs[2]}
	for _, c := range []struct {
		args   []string
		reader string
	}{
		{append([]string{"snapshot", "--json", "--keys-per-second", "0", "--config", split}, one...), "snapshot"},
		{append([]string{"snapshot", "--json", "--keys-per-second", "0", "--config", split}, seeds...), "snapshot"},
		{append([]string{"--config", split}, one...), "a read-only console"},
		{append([]string{"discover", "--keys-per-second", "0", "--merge", split}, seeds...), "discover"},
		{append([]string{"repair", "--dry-run", "--keys-per-second", "0", "--config", split}, one...), "repair"},
	} {
		code, out, errOut := hg(t, c.args...)
		if code != exitOK || errOut != warning+"("+c.reader+" only reads, so it goes on; writes to it are refused)\n" {
			t.Errorf("%v: exit %d, stderr %q; want exit 0 and one warning", c.args, code, errOut)
			continue
		}
		if c.args[0] != "snapshot" {
			continue
		}
		var snap snapshot.Snapshot
		if err := json.Unmarshal([]byte(out), &snap); err != nil {
			t.Fatal(err)
		}
		if w := snap.Family("ad_revenue").CurrentWindow("hour"); w == nil || w.Total != 7 || snap.Mode != "cluster" {
			t.Errorf("%v: mode %s, this hour %+v; want the family read, 7 in it", c.args, snap.Mode, w)
		}
	}
	serveWarns(t, append([]string{"serve", "--listen", "127.0.0.1:0", "--config", split}, one...), warning+"(serve only reads, so it goes on; writes to it are refused)\n")

	const refusal = "hourglass: ../config/testdata/config/split-slots.toml:8: counter.pattern: hour and day keys of \"ad_revenue\" can land in different cluster slots"
	for _, args := range [][]string{
		append([]string{"inject", "--allow-writes", "--events", "100", "--config", split}, one...),
		append([]string{"inject", "--allow-writes", "--events", "100", "--config", split}, seeds...),
		append([]string{"repair", "--allow-writes", "--config", split}, one...),
		append([]string{"repair", "--allow-writes", "--config", split}, seeds...),
		append([]string{"--allow-writes", "--config", split}, one...),
	} {
		code, _, errOut := hg(t, args...)
		if code != exitUsage || !strings.HasPrefix(errOut, refusal) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 2 at the pattern's line", args, code, errOut)
		}
	}
	if ttl := rdb.TTL(t.Context(), key).Val(); ttl <= 0 {
		t.Errorf("the family's key lost its TTL (%v)", ttl)
	}
	var keys atomic.Int64 // the masters answer on goroutines of their own
	_ = rdb.ForEachMaster(t.Context(), func(ctx context.Context, c *redis.Client) error {
		keys.Add(c.DBSize(ctx).Val())
		return nil
	})
	if keys := keys.Load(); keys != 1 {
		t.Errorf("the cluster holds %d keys after the refused writes, want the one written here", keys)
	}
}

// serveWarns runs serve until it serves, and checks its standard error is want.
func serveWarns(t *testing.T, args []string, want string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, redistest.Shipped(t), args, &out, &errOut) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "serving metrics") {
		select {
		case code := <-done:
			t.Fatalf("serve ended, exit %d: %s", code, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not start")
		}
	}
	cancel()
	<-done
	if got := errOut.String(); got != want {
		t.Errorf("serve's stderr %q, want %q", got, want)
	}
}
