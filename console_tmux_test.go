//go:build unix

package main

// The tests in this file drive the built console in a real terminal: tmux runs the binary in a
// pane of a known size, keys go in with send-keys, and what a user would see is read back with
// capture-pane. They assert the screen, not the model.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// screenWait is how long a screen may take to show what a key press or a server event should
// bring: generous, since the console polls once a second and the demo first writes its history.
const screenWait = 15 * time.Second

var tmuxServers atomic.Int64

// tmuxBinary returns the path of tmux, skipping (or, under CI, failing) the test without it.
func tmuxBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is not installed, and CI needs it: %v", err)
		}
		t.Skip("tmux is not installed; install Debian's tmux to run this test")
	}
	return path
}

// buildConsole builds the binary from the module root, as a user does.
func buildConsole(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hourglass")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// terminal is one pane of a private tmux server, running the console.
type terminal struct {
	t      *testing.T
	tmux   string
	socket string
}

// openTerminal starts a tmux server of its own (its socket named for this process and test) with
// one session of width×height running bin with args in dir, and kills the server and removes its
// socket when the test ends. A pane whose process exits stays, so the exit can be seen.
func openTerminal(t *testing.T, tmux, dir string, width, height int, bin string, args ...string) *terminal {
	t.Helper()
	term := &terminal{t: t, tmux: tmux, socket: fmt.Sprintf("hourglass-e2e-%d-%d", os.Getpid(), tmuxServers.Add(1))}
	var socketPath string
	t.Cleanup(func() {
		_ = term.command("kill-server").Run()
		if socketPath != "" {
			_ = os.Remove(socketPath)
		}
	})
	start := []string{"-f", "/dev/null", "set-option", "-g", "remain-on-exit", "on", ";",
		"new-session", "-d", "-s", "console", "-c", dir, "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), bin}
	term.run(append(start, args...)...)
	socketPath = strings.TrimSpace(term.run("display-message", "-p", "#{socket_path}"))
	return term
}

func (term *terminal) command(args ...string) *exec.Cmd {
	cmd := exec.Command(term.tmux, append([]string{"-L", term.socket}, args...)...)
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

// run runs one tmux command and returns its output, failing the test when tmux does.
func (term *terminal) run(args ...string) string {
	term.t.Helper()
	out, err := term.command(args...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// press sends keys to the console as tmux names them ("Enter", "Escape", "y").
func (term *terminal) press(keys ...string) {
	term.t.Helper()
	term.run(append([]string{"send-keys", "-t", "console"}, keys...)...)
}

// screen is what the pane shows, one line a row, without colours.
func (term *terminal) screen() string {
	term.t.Helper()
	return term.run("capture-pane", "-p", "-t", "console")
}

// waitFor reads the screen until ok says it shows what is wanted, and fails the test with the
// last screen when it does not within screenWait.
func (term *terminal) waitFor(what string, ok func(screen string) bool) string {
	term.t.Helper()
	var s string
	if !redistest.Until(screenWait, func() bool {
		s = term.screen()
		return ok(s)
	}) {
		term.t.Fatalf("after %v the screen does not show %s:\n%s", screenWait, what, s)
	}
	return s
}

// waitText waits until the screen holds every one of texts.
func (term *terminal) waitText(texts ...string) string {
	term.t.Helper()
	return term.waitFor(fmt.Sprintf("%q", texts), func(s string) bool { return containsAll(s, texts...) })
}

// waitGone waits until the screen holds none of texts.
func (term *terminal) waitGone(texts ...string) string {
	term.t.Helper()
	return term.waitFor(fmt.Sprintf("no more %q", texts), func(s string) bool {
		for _, text := range texts {
			if strings.Contains(s, text) {
				return false
			}
		}
		return true
	})
}

// waitExit waits until the console's process has exited and returns its exit status. tmux built
// with libutempter can miss the SIGCHLD of a pane's process (tmux/tmux#311): the process stays a
// zombie and the pane alive. So while the pane lives its server is sent SIGCHLD again, which makes
// it reap whatever child has exited and mark the pane dead with the status it exited with.
func (term *terminal) waitExit() string {
	term.t.Helper()
	server, err := strconv.Atoi(strings.TrimSpace(term.run("display-message", "-p", "#{pid}")))
	if err != nil {
		term.t.Fatalf("tmux names no server pid: %v", err)
	}
	var status string
	if !redistest.Until(screenWait, func() bool {
		dead := strings.Fields(term.run("list-panes", "-t", "console", "-F", "#{pane_dead} #{pane_dead_status}"))
		if len(dead) == 2 && dead[0] == "1" {
			status = dead[1]
			return true
		}
		_ = syscall.Kill(server, syscall.SIGCHLD)
		return false
	}) {
		term.t.Fatalf("after %v the console is still running:\n%s", screenWait, term.screen())
	}
	return status
}

func containsAll(s string, texts ...string) bool {
	for _, text := range texts {
		if !strings.Contains(s, text) {
			return false
		}
	}
	return true
}

// TestConsoleInTmux runs the built console in tmux: on the embedded demo through every view, a
// drill-down and back, a queue's tasks, the help, a resize and quitting; and on a real
// redis-server that is stopped and started again under it.
func TestConsoleInTmux(t *testing.T) {
	tmux := tmuxBinary(t)
	bin := buildConsole(t)
	t.Run("demo", func(t *testing.T) { testDemoConsole(t, tmux, bin) })
	t.Run("redis restarted", func(t *testing.T) { testConsoleReconnects(t, tmux, bin) })
	t.Run("sentinel failover", func(t *testing.T) { testConsoleFollowsFailover(t, tmux, bin) })
}

// demoViews is what each view of the embedded demo shows that no other view does, at 120
// columns: its table headings and footer hints, as the shipped config's entries fill them.
var demoViews = []struct {
	key, name string
	shows     []string
}{
	{"1", "Overview", []string{"│ Counters", "events/s", "│ Limiters", "Unclaimed keys"}},
	{"2", "Counters", []string{"FAMILY", "THIS HOUR", "LAST 24 HOURS", "api_calls", "enter opens a family"}},
	{"3", "TTL health", []string{"NO TTL", "OVER RET", "WRONG TYPE", "all families", "r repairs"}},
	{"4", "Queues", []string{"DELAY QUEUE", "delay:orders", "LIST QUEUE", "queue:emails", "enter lists the selected queue's tasks"}},
	{"5", "Limiters", []string{"LIMITER", "REJECTED/S", "Busiest keys of api", "LOCK"}},
	{"6", "Uniques", []string{"UNIQUES", "7-DAY UNION", "30-DAY UNION", "page_uv", "dau"}},
	{"7", "Unclaimed", []string{"last complete sweep", "a add group • w write proposal"}},
}

// testDemoConsole starts the console on the embedded demo at 120×36 and goes where a user goes.
func testDemoConsole(t *testing.T, tmux, bin string) {
	// An empty directory: no ./config.toml takes the place of the shipped one.
	term := openTerminal(t, tmux, t.TempDir(), 120, 36, bin)
	first := term.waitText("hourglass", "DEMO", "WRITES ON", "embedded Redis on 127.0.0.1:", "● connected",
		"1 Overview  2 Counters  3 TTL health  4 Queues  5 Limiters  6 Uniques  7 Unclaimed", "q quit")
	port := regexp.MustCompile(`embedded Redis on 127\.0\.0\.1:(\d+)`).FindStringSubmatch(first)
	if port == nil {
		t.Fatalf("the header names no embedded Redis address:\n%s", first)
	}
	for _, v := range demoViews {
		term.press(v.key)
		term.waitText(v.shows...)
	}
	demoDrillDown(t, term, port[1])
	demoQueueTasks(term)
	demoHelp(term)
	demoResize(t, term)
	term.press("q")
	if status := term.waitExit(); status != "0" {
		t.Fatalf("q: the console exited with status %s:\n%s", status, term.screen())
	}
}

// demoDrillDown opens the first family, then its busiest dims tuple, asks for the redis-cli
// command that reads its current window, and comes back to the counters table with esc.
func demoDrillDown(t *testing.T, term *terminal, port string) {
	t.Helper()
	term.press("2")
	term.waitText("FAMILY", "enter opens a family")
	term.press("Enter")
	// flow is the first [[counter]] of the shipped config.
	term.waitText("Counters › flow", "flow:count:<app>:<device>:<ip>:<window>", "TOP DIMS THIS HOUR", "enter open dims")
	term.press("Enter")
	dims := regexp.MustCompile(`Counters › flow › (\S+)`)
	s := term.waitFor("a dims tuple's windows", func(s string) bool {
		return dims.MatchString(s) && containsAll(s, "WINDOW", "VALUE", "TTL", "EXPIRES", "KEY", "y redis-cli cmd")
	})
	tuple := strings.Split(dims.FindStringSubmatch(s)[1], "/")
	if len(tuple) != 3 {
		t.Fatalf("the dims tuple %v is not app/device/ip:\n%s", tuple, s)
	}
	key := "flow:count:" + strings.Join(tuple, ":") + ":"
	if !regexp.MustCompile(`(?m)^h \d{10} .*` + regexp.QuoteMeta(key) + `\d{10}\s*$`).MatchString(s) {
		t.Fatalf("no hour window of %s* is listed:\n%s", key, s)
	}
	term.press("y")
	command := regexp.MustCompile(`redis-cli -h 127\.0\.0\.1 -p ` + port + ` GET ` + regexp.QuoteMeta(key) + `\d{10}`)
	term.waitFor("the redis-cli command reading "+key+"<hour>", command.MatchString)
	term.press("Escape")
	term.waitFor("the family again", func(s string) bool {
		return containsAll(s, "Counters › flow", "TOP DIMS THIS HOUR") && !dims.MatchString(s)
	})
	term.press("Escape")
	term.waitFor("the counters table again", func(s string) bool {
		return containsAll(s, "FAMILY", "THIS HOUR", "enter opens a family") && !strings.Contains(s, "Counters ›")
	})
}

// demoQueueTasks opens the first delay queue's tasks and comes back.
func demoQueueTasks(term *terminal) {
	term.t.Helper()
	term.press("4")
	term.waitText("DELAY QUEUE", "enter lists the selected queue's tasks")
	term.press("Enter")
	page := regexp.MustCompile(`tasks 1–\d+ of \d+ in delay:orders`)
	term.waitFor("a page of the orders queue's tasks", func(s string) bool {
		return page.MatchString(s) && containsAll(s, "Queues › orders delay:orders", "DUE", "WHEN", "PAYLOAD")
	})
	term.press("Escape")
	term.waitFor("the queues table again", func(s string) bool {
		return containsAll(s, "DELAY QUEUE", "LIST QUEUE") && !strings.Contains(s, "Queues ›")
	})
}

// demoHelp opens the help over the counters table and closes it.
func demoHelp(term *terminal) {
	term.t.Helper()
	term.press("2")
	term.waitText("enter opens a family")
	term.press("?")
	term.waitText("Keys", "Overview", "Unclaimed", "? or esc closes")
	term.press("?")
	term.waitGone("? or esc closes")
	term.waitText("FAMILY", "enter opens a family")
}

// demoResize shrinks the terminal to 80×24 under the counters table: the console draws again at
// the new size, with the tabs shortened and the sparkline column left out, nothing wider than 80.
func demoResize(t *testing.T, term *terminal) {
	t.Helper()
	term.run("resize-window", "-t", "console", "-x", "80", "-y", "24")
	s := term.waitFor("the counters table at 80×24", func(s string) bool {
		return containsAll(s, "1 Overview  2 Counters  3 TTL  4 Queues", "FAMILY", "MISMATCH", "enter opens a family") &&
			!strings.Contains(s, "LAST 24 HOURS")
	})
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) != 24 {
		t.Errorf("at 80×24 the pane has %d rows", len(lines))
	}
	for i, line := range lines {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("row %d is %d wide at 80 columns: %q", i+1, n, line)
		}
	}
	if !strings.HasPrefix(lines[0], "hourglass  DEMO") || !strings.Contains(lines[len(lines)-1], "q quit") {
		t.Errorf("at 80×24 the header is not on the first row or the key hints not on the last:\n%s", s)
	}
}

// consoleConfig is a small config for a real Redis: one counter family and one delay queue,
// polled at the fastest refresh allowed.
const consoleConfig = `timezone = "UTC"

[ui]
refresh = "250ms"
theme = "none"

[[counter]]
name = "hits"
pattern = "hits:<page>:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"

[[delay_queue]]
name = "jobs"
key = "delay:jobs"
score_unit = "ms"
`

// writeJobs puts tasks tasks into delay:jobs, due over the next hour, and counts hits on
// hits:home in the current UTC hour.
func writeJobs(t *testing.T, c *redis.Client, tasks int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	now := time.Now()
	for i := range tasks {
		due := now.Add(time.Duration(i+1) * time.Minute).UnixMilli()
		if err := c.ZAdd(ctx, "delay:jobs", redis.Z{Score: float64(due), Member: fmt.Sprintf("task-%d", i)}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	hour := "hits:home:" + now.UTC().Format("2006010215")
	if err := c.IncrBy(ctx, hour, 7).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Expire(ctx, hour, 49*time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
}

// testConsoleReconnects runs the console on a real redis-server, stops the server under it and
// starts it again on the same port: the console says it is unreachable, then connects again on
// its own and reads what the new server holds.
func testConsoleReconnects(t *testing.T, tmux, bin string) {
	srv := redistest.Start(t)
	writeJobs(t, srv.Client(t), 3)
	dir := t.TempDir()
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, []byte(consoleConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	term := openTerminal(t, tmux, dir, 120, 36, bin, "--config", config, "--addr", srv.Addr)
	term.waitText("READ-ONLY", srv.Addr, "● connected")
	term.press("4")
	depth := func(n int) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^jobs\s+delay:jobs\s+` + fmt.Sprint(n) + `\s`)
	}
	term.waitFor("the jobs queue 3 deep", depth(3).MatchString)

	srv.Stop()
	term.waitText("● unreachable", "Redis unreachable")

	srv.Restart(t)
	writeJobs(t, srv.Client(t), 5)
	term.waitFor("connected again, the jobs queue 5 deep", func(s string) bool {
		return strings.Contains(s, "● connected") && !strings.Contains(s, "unreachable") && depth(5).MatchString(s)
	})
	term.press("q")
	if status := term.waitExit(); status != "0" {
		t.Fatalf("q: the console exited with status %s:\n%s", status, term.screen())
	}
}

// testConsoleFollowsFailover runs the console on a primary behind three real Sentinels, fails
// it over with SENTINEL FAILOVER, then kills the new primary: each time the header names the
// primary the Sentinels moved it to, and the queue's depth is read on that primary.
func testConsoleFollowsFailover(t *testing.T, tmux, bin string) {
	s := redistest.StartSentinels(t, 2, 3, "")
	writeJobs(t, s.Node(t, s.Primary(t)).Client(t), 3)
	dir := t.TempDir()
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, []byte(consoleConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "redis-sentinel://" + strings.Join(s.Addrs, ",") + "/" + s.Master
	term := openTerminal(t, tmux, dir, 120, 36, bin, "--config", config, "--addr", url)
	term.waitText("READ-ONLY", "sentinel master "+s.Master, "● connected")
	term.press("4")
	depth := func(n int) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^jobs\s+delay:jobs\s+` + fmt.Sprint(n) + `\s`)
	}
	term.waitFor("the jobs queue 3 deep", depth(3).MatchString)
	for i, fail := range []func(testing.TB) string{s.Failover, s.KillPrimary} {
		moved := fail(t)
		term.waitText("failover: primary now " + moved)
		writeJobs(t, s.Node(t, moved).Client(t), 4+i)
		term.waitFor(fmt.Sprintf("the jobs queue %d deep, read on %s", 4+i, moved), func(scr string) bool {
			return strings.Contains(scr, "● connected") && depth(4+i).MatchString(scr)
		})
	}
	term.press("q")
	if status := term.waitExit(); status != "0" {
		t.Fatalf("q: the console exited with status %s:\n%s", status, term.screen())
	}
}
