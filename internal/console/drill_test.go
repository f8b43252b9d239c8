package console

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/theme"
)

// TestDrillDownDeletesOneTaskOnARealServer runs the real console against a real redis-server
// with writes allowed: enter lists the delay queue's due tasks, x asks for the target's name,
// and once it is typed exactly the oldest due task, and only it, is gone from Redis.
func TestDrillDownDeletesOneTaskOnARealServer(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	due := time.Now().Add(-time.Minute)
	for i, task := range []string{"first", "second", "third"} {
		if err := rdb.ZAdd(t.Context(), "delay:orders", redis.Z{Score: float64(due.Add(time.Duration(i) * time.Second).UnixMilli()), Member: task}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	body := strings.Replace(string(redistest.Shipped(t)), "addrs = []", `addrs = ["`+srv.Addr+`"]`, 1)
	body = strings.Replace(body, "allow_writes = false", "allow_writes = true\nname = \"shop\"", 1)
	cfg, err := config.Parse("config.toml", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UI.Refresh = 250 * time.Millisecond
	tg, err := target.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	in, keys := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(t.Context(), tg, cfg, theme.None, in, out) }()
	waitFor := func(what string) {
		t.Helper()
		if !redistest.Until(10*time.Second, func() bool { return strings.Contains(ansi.Strip(out.String()), what) }) {
			t.Fatalf("the console never showed %q; it shows:\n%s", what, tail(ansi.Strip(out.String()), 3000))
		}
	}
	press := func(s string) {
		if _, err := keys.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("WRITES ON")
	press("4")
	waitFor("delay:orders")
	press("\r")
	waitFor("tasks 1–3 of 3")
	press("x")
	waitFor("Type the target's name (shop)")
	press("shop\r")
	// The screen is redrawn cell by cell, so what changed is waited for in Redis itself.
	var left []string
	if !redistest.Until(10*time.Second, func() bool {
		left, err = rdb.ZRange(t.Context(), "delay:orders", 0, -1).Result()
		return err == nil && strings.Join(left, ",") == "second,third"
	}) {
		t.Fatalf("after deleting the first task the queue holds %v (%v)", left, err)
	}
	press("q")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit the console")
	}
}
