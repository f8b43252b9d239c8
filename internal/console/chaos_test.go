package console

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/metrics"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/theme"
	"github.com/hourglass-dev/hourglass/tui"
)

// TestChaos runs the console (its poller, its screen and its steady test traffic), inject and
// serve together against a real redis-server behind the fault proxy, which cuts a reply now and
// then, for HOURGLASS_CHAOS_DURATION (2m by default). Meanwhile the server goes down and comes
// back twice, and the ACL user all three log in as loses its rights and gets them back. Each fault
// must show in the console's header within 5 s, and the header must say "connected" within 5 s
// of each recovery; serve must answer every scrape; inject's totals must be exact; and the heap
// and the goroutines must stay flat. Skipped unless HOURGLASS_CHAOS=1: minutes, not a unit test.
//
//	HOURGLASS_CHAOS=1 go test -run Chaos -v ./internal/console
func TestChaos(t *testing.T) {
	if os.Getenv("HOURGLASS_CHAOS") != "1" {
		t.Skip("set HOURGLASS_CHAOS=1 to run the chaos test")
	}
	d := 2 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("HOURGLASS_CHAOS_DURATION")); err == nil && v > 0 {
		d = v
	}
	c := startChaos(t)
	_, gBefore := sample() // the server and the proxy are up; nothing of hourglass runs yet
	screen := c.console()
	injected := c.inject()
	scrapes := c.serve()

	c.waitHeader(screen, "the first sweep", 30*time.Second, connected)
	heap0, g0 := sample()
	end := time.Now().Add(d)
	step := d / 5
	faults := []struct {
		name  string
		at    time.Duration
		fault func()
		shows string
		back  func()
	}{
		{"restart 1", step, c.srv.Stop, "unreachable", c.restart},
		{"ACL revoked", 2 * step, c.revoke, "permission denied: ", c.restore},
		{"restart 2", 3 * step, c.srv.Stop, "unreachable", c.restart},
	}
	start := time.Now()
	// The fault schedule, which is what is tested: each fault at its time, and the run its length.
	at := func(when time.Time) {
		select {
		case <-time.After(time.Until(when)):
		case <-t.Context().Done():
			t.Fatal("the test ended during the chaos run")
		}
	}
	for _, f := range faults {
		at(start.Add(f.at))
		f.fault()
		c.waitHeader(screen, f.name+" shown", 5*time.Second, contains(f.shows))
		f.back()
		c.waitHeader(screen, "connected after "+f.name, 5*time.Second, connected)
		t.Logf("%s: shown and recovered; header now %q", f.name, header(screen.Load().(string)))
	}
	at(end)
	c.waitHeader(screen, "connected at the end", 5*time.Second, connected)
	heap1, g1 := sample()

	written, unconfirmed, mayHold := injected()
	okScrapes, failed := scrapes()
	c.stopAll()
	total := c.hourTotal("ad_revenue")
	c.tg.Close()
	gAfter := settled(gBefore)
	t.Logf("over %v: inject wrote %d events (%d pairs not confirmed), Redis holds %d; %d scrapes answered, %d failed; "+
		"proxy cut %d replies; heap %d KB then %d KB, goroutines %d then %d (%d before, %d after)",
		d, written, unconfirmed, total, okScrapes, failed, c.proxy.Cuts(), heap0>>10, heap1>>10, g0, g1, gBefore, gAfter)
	// Every pair confirmed: Redis holds exactly what inject wrote. Pairs left unconfirmed (their
	// answer lost and their record unreadable) may or may not be there, so Redis holds at least
	// what was confirmed and at most that and every event the unconfirmed runs drew besides.
	if unconfirmed == 0 && total != written {
		t.Errorf("Redis holds %d events in ad_revenue's hours, inject says it wrote %d", total, written)
	}
	if unconfirmed > 0 && (total < written || total > mayHold) {
		t.Errorf("Redis holds %d events; inject confirmed %d and left %d pairs unconfirmed, so it holds %d to %d",
			total, written, unconfirmed, written, mayHold)
	}
	if failed > 0 {
		t.Errorf("%d of %d scrapes of serve failed", failed, okScrapes+failed)
	}
	if heap1 > heap0*3/2+8<<20 {
		t.Errorf("the heap grew from %d KB to %d KB", heap0>>10, heap1>>10)
	}
	if g1 > g0+10 || gAfter > gBefore+1 { // +1: os/signal's watcher, started once and kept
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines grew from %d to %d while running, and %d were left of %d after; they are:\n%s",
			g0, g1, gAfter, gBefore, buf[:runtime.Stack(buf, true)])
	}
}

// settled waits up to 5 s for the goroutines to come down to want, and returns how many there are.
func settled(want int) int {
	var g int
	redistest.Until(5*time.Second, func() bool {
		_, g = sample()
		return g <= want
	})
	return g
}

// chaos is the world of TestChaos: a persistent redis-server with an ACL user, the fault proxy in
// front of it, and the target the console, inject and serve share.
type chaos struct {
	t     *testing.T
	srv   *redistest.Server
	args  []string
	admin *redis.Client
	proxy *redistest.FaultProxy
	cfg   *config.Config
	tg    *target.Target
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// closers end what the console holds open, after it stops
	closers []func()
}

func startChaos(t *testing.T) *chaos {
	args := []string{"--appendonly", "yes", "--appendfsync", "always", "--user", "hg", "on", ">pw", "~*", "&*", "+@all"}
	c := &chaos{t: t, args: args, srv: redistest.Start(t, args...)}
	c.admin = c.srv.Client(t)
	c.proxy = redistest.StartFaultProxy(t, c.srv.Addr)
	c.proxy.SetCutRate(2000) // one array or bulk reply in 500
	t.Setenv("HG_CHAOS_PASSWORD", "pw")
	body := strings.Replace(string(redistest.Shipped(t)), `timezone = "Local"`, `timezone = "UTC"`, 1)
	body = strings.Replace(body, "addrs = []", fmt.Sprintf("addrs = [%q]\nusername = \"hg\"\npassword_env = \"HG_CHAOS_PASSWORD\"", c.proxy.Addr), 1)
	body = strings.Replace(body, "allow_writes = false", "allow_writes = true", 1)
	cfg, err := config.Parse("chaos.toml", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UI.Refresh = 500 * time.Millisecond
	c.cfg = cfg
	c.ctx, c.stop = context.WithCancel(t.Context())
	if c.tg, err = target.Open(c.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.stopAll()
		c.tg.Close()
	})
	t.Cleanup(func() { _ = c.admin.Close() }) // before the server stops
	return c
}

// stopAll ends the console, inject and serve, and waits for them.
func (c *chaos) stopAll() {
	c.stop()
	c.wg.Wait()
	for _, close := range c.closers {
		close()
	}
}

// console runs the console as Run does, with its steady test traffic on, and returns its screen
// as of the last message it handled, without colours.
func (c *chaos) console() *atomic.Value {
	var screen atomic.Value
	screen.Store("")
	wopt := c.cfg.SweepOptions(true)
	wopt.Now, wopt.Target, wopt.Mode, wopt.TopK = c.tg.Store.Now, c.tg.Label, c.tg.Mode, 20
	src := watch.New(c.tg.RDB, c.cfg.Counters, wopt)
	acts := newConsoleActions(c.ctx, c.tg, func() *config.Config { return c.cfg })
	opt := tui.Options{Target: c.tg.Label, Name: c.tg.Name, Mode: c.tg.Mode, Source: src, Actions: acts,
		Refresh: c.cfg.UI.Refresh, Now: c.tg.Store.Now, Location: c.cfg.Timezone, Context: c.ctx}
	for _, f := range c.cfg.Counters {
		opt.Families = append(opt.Families, tui.FamilyInfo{Name: f.Name(), Pattern: f.Pattern().String()})
	}
	in, keys := io.Pipe()
	c.closers = append(c.closers, func() { _ = keys.Close() })
	p := tea.NewProgram(tui.New(opt, theme.New(theme.Dark)), tea.WithContext(c.ctx), tea.WithInput(in),
		tea.WithOutput(io.Discard), tea.WithWindowSize(120, 36), tea.WithoutSignals(),
		tea.WithFilter(func(m tea.Model, msg tea.Msg) tea.Msg {
			if tm, ok := m.(*tui.Model); ok {
				screen.Store(ansi.Strip(tm.Render()))
			}
			return msg
		}))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer acts.stop()
		_, _ = p.Run()
	}()
	go func() { _, _ = keys.Write([]byte("t")) }() // steady test traffic into the first family
	return &screen
}

// inject runs inject into ad_revenue back to back until the end, and returns a function that
// says how many events it wrote in all (confirmed), how many key pairs were left not confirmed,
// and the most events Redis can hold from it: the confirmed ones, and for each run that left
// pairs unconfirmed every event it drew and did not confirm (a run draws injectRun events at most).
func (c *chaos) inject() func() (written int64, unconfirmed int, mayHold int64) {
	const injectRun = 20_000
	f, err := c.cfg.Counter("ad_revenue")
	if err != nil {
		c.t.Fatal(err)
	}
	var mu sync.Mutex
	var written, mayHold int64
	var unconfirmed int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c.ctx.Err() == nil {
			res := traffic.Inject(c.ctx, c.tg.Store, f, traffic.InjectOptions{Events: injectRun, Rate: 4000, Dims: 200})
			mu.Lock()
			written += res.Events
			mayHold += res.Events
			if res.NotConfirmed > 0 {
				mayHold += injectRun - res.Events
			}
			unconfirmed += res.NotConfirmed
			mu.Unlock()
			if res.Err != nil || res.GaveUp != "" {
				c.t.Logf("inject ended early (%s; %v): %s", res.GaveUp, res.Err, res.Summary("ad_revenue"))
			}
			if res.Err != nil || res.GaveUp != "" {
				select { // a refusal or an outage ended it: try again shortly, as an operator would
				case <-time.After(200 * time.Millisecond):
				case <-c.ctx.Done():
				}
			}
		}
	}()
	return func() (int64, int, int64) {
		c.stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return written, unconfirmed, mayHold
	}
}

// serve runs serve on a loopback port and scrapes it every second until the end; the function it
// returns says how many scrapes were answered and how many failed.
func (c *chaos) serve() func() (ok, failed int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	opt := c.cfg.SweepOptions(true)
	opt.Now, opt.Target, opt.Mode = c.tg.Store.Now, c.tg.Label, c.tg.Mode
	w := watch.New(c.tg.RDB, c.cfg.Counters, opt)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = metrics.Serve(c.ctx, l, w, metrics.Options{Target: c.tg.Label, Refresh: time.Second, Now: c.tg.Store.Now, Log: io.Discard})
	}()
	var ok, failed atomic.Int64
	client := &http.Client{Timeout: 5 * time.Second}
	url := "http://" + l.Addr().String() + "/metrics"
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-tick.C:
			}
			resp, err := client.Get(url)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			switch {
			case c.ctx.Err() != nil:
			case err != nil || resp.StatusCode != http.StatusOK:
				failed.Add(1)
				c.t.Logf("scrape failed: %v", err)
			default:
				ok.Add(1)
			}
		}
	}()
	return func() (int, int) {
		c.stop()
		<-done
		return int(ok.Load()), int(failed.Load())
	}
}

// restart brings the stopped server back with its data and its users.
func (c *chaos) restart() { c.srv.Restart(c.t, c.args...) }

// revoke takes every command from the user the console, inject and serve log in as.
func (c *chaos) revoke() {
	if err := c.admin.Do(context.Background(), "ACL", "SETUSER", "hg", "-@all").Err(); err != nil {
		c.t.Fatal(err)
	}
}

func (c *chaos) restore() {
	if err := c.admin.Do(context.Background(), "ACL", "SETUSER", "hg", "+@all").Err(); err != nil {
		c.t.Fatal(err)
	}
}

// waitHeader waits up to within for the console's header to satisfy ok.
func (c *chaos) waitHeader(screen *atomic.Value, what string, within time.Duration, ok func(string) bool) {
	c.t.Helper()
	var h string
	if !redistest.Until(within, func() bool {
		h = header(screen.Load().(string))
		return ok(h)
	}) {
		c.t.Fatalf("%s: not within %v; the screen's top reads %q", what, within, h)
	}
}

// header is the screen's first two lines: the banner when there is one, and the header.
func header(screen string) string {
	lines := strings.SplitN(screen, "\n", 3)
	return strings.Join(lines[:min(2, len(lines))], "\n")
}

func connected(h string) bool {
	return strings.Contains(h, "● connected") && !strings.Contains(h, "late") && !strings.Contains(h, "✖")
}

func contains(s string) func(string) bool {
	return func(h string) bool { return strings.Contains(h, s) }
}

// hourTotal adds up every hour window of family in Redis, read straight from the server.
func (c *chaos) hourTotal(family string) int64 {
	opt := c.cfg.SweepOptions(false)
	opt.Now = time.Now
	snap, err := scanner.Take(context.Background(), c.admin, c.cfg.Counters, opt)
	if err != nil {
		c.t.Fatal(err)
	}
	var sum int64
	if f := snap.Family(family); f != nil {
		for _, w := range f.Windows {
			if w.Granularity == store.Hour.String() {
				sum += w.Total
			}
		}
	}
	return sum
}

func sample() (uint64, int) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, runtime.NumGoroutine()
}
