package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/theme"
	"github.com/hourglass-dev/hourglass/tui"
)

// driver runs the console's model as the Bubble Tea runtime does, without a terminal: each Cmd
// on a goroutine of its own, each message through Update on the test's goroutine, and the
// screen drawn after each.
type driver struct {
	t    *testing.T
	m    *tui.Model
	msgs chan tea.Msg
	done chan struct{}
}

// console opens the console's model on addr as user (writes allowed when writable), polling
// every 250 ms, and starts it.
func console(t *testing.T, cfg *config.Config, addr, user string, writable bool, hooks ...redis.Hook) *driver {
	t.Helper()
	tgt := store.Target{Addrs: []string{addr}}
	if user != "" {
		tgt.Username, tgt.Password = user, "pw"
	}
	rdb := tgt.NewClient() // the console's own client, with its short timeouts
	for _, h := range hooks {
		rdb.AddHook(h)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	st := store.New(rdb, store.Options{Location: cfg.Timezone})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	tg := &target.Target{Mode: "standalone", Label: addr, Writable: writable, RDB: rdb, Store: st}
	ctx, cancel := context.WithCancel(t.Context())
	m, stop := newModel(ctx, tg, cfg, theme.None)
	d := &driver{t: t, m: m, msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
	t.Cleanup(func() { cancel(); close(d.done); stop() })
	d.handle(tea.WindowSizeMsg{Width: 160, Height: 40})
	d.run(m.Init())
	return d
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		select {
		case d.msgs <- msg:
		case <-d.done:
		}
	}()
}

func (d *driver) handle(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
		return
	}
	_, cmd := d.m.Update(msg)
	d.run(cmd)
}

// press hands the model the key k, a single character.
func (d *driver) press(k string) {
	d.handle(tea.KeyPressMsg{Code: []rune(k)[0], Text: k})
}

// untilTrue runs the model until cond holds, checked after each message; it fails the test
// after within.
func (d *driver) untilTrue(within time.Duration, cond func() bool) {
	d.t.Helper()
	deadline := time.After(within)
	for !cond() {
		select {
		case msg := <-d.msgs:
			d.handle(msg)
		case <-deadline:
			d.t.Fatalf("after %v the condition still does not hold", within)
		}
	}
}

// until runs the model until its screen has all of want and none of unwanted, and returns the
// screen; it fails the test after within.
func (d *driver) until(within time.Duration, want []string, unwanted ...string) string {
	d.t.Helper()
	deadline := time.After(within)
	for {
		s := ansi.Strip(d.m.Render())
		if hasAll(s, want) && !hasAny(s, unwanted) {
			return s
		}
		select {
		case msg := <-d.msgs:
			d.handle(msg)
		case <-deadline:
			d.t.Fatalf("after %v the console shows no %q (nor none of %q):\n%s", within, want, unwanted, s)
		}
	}
}

func hasAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

func hasAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// testConfig is the shipped config, polled every 250 ms.
func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("config.toml", redistest.Shipped(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UI.Refresh = 250 * time.Millisecond
	return cfg
}

// aclUser makes user (password pw) on srv with rules.
func aclUser(t *testing.T, admin *redis.Client, user string, rules ...string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", user}
	for _, r := range rules {
		args = append(args, r)
	}
	if err := admin.Do(t.Context(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %s %v: %v", user, rules, err)
	}
}

// fillFlow writes n flow counters of the current hour, each holding value.
func fillFlow(t *testing.T, cfg *config.Config, rdb *redis.Client, n int, value int64) []string {
	t.Helper()
	f, err := cfg.Counter("flow")
	if err != nil {
		t.Fatal(err)
	}
	w := store.WindowAt(store.Hour, time.Now(), cfg.Timezone)
	pipe := rdb.Pipeline()
	var keys []string
	for i := range n {
		k, err := f.Key(w, []string{fmt.Sprint("app", i), "ios", fmt.Sprint("10.0.", i/250, ".", i%250)})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
		pipe.Set(t.Context(), k, value, 2*time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	return keys
}

// A SCAN the ACL refuses is "permission denied: scan" in the header, not a disconnection; and
// the header says "connected" again once the right is given back.
func TestHeaderSaysPermissionDenied(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	aclUser(t, admin, "watcher", "on", ">pw", "~*", "+@all")
	d := console(t, testConfig(t), srv.Addr, "watcher", false)
	d.until(5*time.Second, []string{"● connected"})

	aclUser(t, admin, "watcher", "-scan")
	s := d.until(5*time.Second, []string{"● permission denied: scan", "permission denied: scan · retry in"})
	if strings.Contains(s, "unreachable") || strings.Contains(s, "disconnected") {
		t.Errorf("a refusal is shown as a lost connection:\n%s", s)
	}
	aclUser(t, admin, "watcher", "+scan")
	d.until(6*time.Second, []string{"● connected"}, "permission denied", "✖")
}

// A server that stops is "unreachable", with the countdown to the next attempt; when it is back
// the header says "connected" again.
func TestHeaderSaysUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	d := console(t, testConfig(t), srv.Addr, "", false)
	d.until(5*time.Second, []string{"● connected"})
	srv.Stop()
	d.until(8*time.Second, []string{"● unreachable", "✖ Redis unreachable · retry in"})
	srv.Restart(t)
	d.until(6*time.Second, []string{"● connected"}, "unreachable", "✖")
}

// Replies that come slowly keep the console connected, but once the sweep has run well past its
// usual time the header says it is late, and how long it has stalled; when replies come quickly
// again the sweep completes and the header says "connected".
func TestHeaderSaysTheSweepIsLate(t *testing.T) {
	srv := redistest.Start(t)
	cfg := testConfig(t)
	cfg.Scan.Count = 20
	fillFlow(t, cfg, srv.Client(t), 3000, 1)
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	d := console(t, cfg, proxy.Addr, "", false)
	d.until(10*time.Second, []string{"● connected", "sweep 0s ago"})

	proxy.SetDelay(20 * time.Millisecond) // every reply: a sweep of 3,000 keys now takes minutes
	start := time.Now()
	s := d.until(40*time.Second, []string{"● connected but the sweep is late (stalled "}, "unreachable")
	if took := time.Since(start); took < 10*time.Second {
		t.Errorf("the sweep was called late after %v, before %v of sweeping:\n%s", took, 10*time.Second, s)
	}
	proxy.SetDelay(0)
	d.until(20*time.Second, []string{"● connected  ·"}, "late")
}

// The Counters view's SINCE column shows how far each top dims moved between two sweeps: on a
// small keyspace a sweep completes at every poll, and counting from the sweep that poll just
// completed showed +0 on every row, however fast the values climbed.
func TestSinceSweepShowsHowFarValuesMoved(t *testing.T) {
	redistest.ClearOfHourEnd(t, 30*time.Second)
	srv := redistest.Start(t)
	cfg := testConfig(t)
	rdb := srv.Client(t)
	keys := fillFlow(t, cfg, rdb, 3, 100)
	d := console(t, cfg, srv.Addr, "", false)
	d.press("2")
	d.until(5*time.Second, []string{"flow", "sweep 0s ago"})
	d.handle(tea.KeyPressMsg{Code: tea.KeyEnter})
	d.until(5*time.Second, []string{"TOP DIMS THIS HOUR", "SINCE "})
	for _, k := range keys {
		rdb.IncrBy(t.Context(), k, 300)
	}
	s := d.until(5*time.Second, []string{"+300"}) // not "400": the hour 00 of day 24 is "…2400" on screen
	rows := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "app") && strings.Contains(l, "400") {
			rows++
			if !strings.HasSuffix(strings.TrimSpace(l), "+300") {
				t.Errorf("a top dims row that climbed by 300 since the last sweep says %q", strings.TrimSpace(l))
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows show the new values, want 3:\n%s", rows, s)
	}
}

// Steady test traffic that Redis refuses shows its fault in the status line while it lasts,
// retrying, and says when writes go through again.
func TestTrafficErrorsShowInTheStatusLine(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	aclUser(t, admin, "writer", "on", ">pw", "~*", "+@all")
	d := console(t, testConfig(t), srv.Addr, "writer", true)
	d.until(5*time.Second, []string{"● connected"})
	d.press("2")
	d.press("t")
	d.until(5*time.Second, []string{"test traffic: flow"})
	aclUser(t, admin, "writer", "-@scripting")
	s := d.until(5*time.Second, []string{"traffic into flow (retrying, failing for ", "NOPERM"})
	if !strings.Contains(s, "test traffic: flow") {
		t.Errorf("the header no longer shows the traffic running:\n%s", s)
	}
	aclUser(t, admin, "writer", "+@scripting")
	d.until(8*time.Second, []string{"traffic into flow: writes go through again, after "}, "NOPERM")
}
