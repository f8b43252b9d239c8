package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hg runs the command line as main does and returns its exit code and output.
//
// A command that watches, given an address and no --config, would infer its entries from the keys;
// the tests of everything else run it on the shipped config's families, written to a file, as an
// operator with that config would. hgInferred runs it with no config.
func hg(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if infers(args) {
		path := filepath.Join(t.TempDir(), "shipped.toml")
		if err := os.WriteFile(path, redistest.Shipped(t), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(args[0], "-") { // the console: no command word
			args = append([]string{"--config", path}, args...)
		} else {
			args = append([]string{args[0], "--config", path}, args[1:]...)
		}
	}
	return hgInferred(t, args...)
}

// infers reports whether args run a command that infers its entries: snapshot, serve or the
// console, with an address and no config.
func infers(args []string) bool {
	cmd, addr, config := "", false, false
	for i, a := range args {
		if i == 0 && !strings.HasPrefix(a, "-") {
			cmd = a
		}
		addr = addr || a == "--addr" || strings.HasPrefix(a, "--addr=")
		config = config || a == "--config" || strings.HasPrefix(a, "--config=")
	}
	return addr && !config && (cmd == "snapshot" || cmd == "serve" || cmd == "")
}

// hgInferred is hg with args as they are.
func hgInferred(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut syncBuffer
	code = Run(t.Context(), redistest.Shipped(t), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelpListsEveryCommand: `hourglass help` gives each command one line of its own, which
// names it, and nothing promised for later; every command it lists runs its own --help.
func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := hg(t, "help")
	if code != exitOK || strings.Contains(out, "more to come") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, c := range commands() {
		prefix := strings.TrimSpace("hourglass " + c.name)
		lines := 0
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.Join(f[:len(strings.Fields(prefix))], " ") == prefix &&
				strings.Contains(line, c.summary) {
				lines++
			}
		}
		if lines != 1 || c.summary == "" {
			t.Errorf("%q has %d lines in help:\n%s", prefix, lines, out)
		}
		if c.name != "help" && c.name != "" {
			if code, usage, _ := hg(t, c.name, "--help"); code != exitOK || !strings.Contains(usage, "hourglass "+c.name) {
				t.Errorf("%s --help: exit %d\n%s", c.name, code, usage)
			}
		}
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if len([]rune(line)) > 100 {
			t.Errorf("help line over 100 columns: %q", line)
		}
	}
}

// TestConfigWarningsReachStderr: a config that sets the time zone in its old place under [ui]
// still runs in that zone, and the command says, once on stderr, where the setting has moved,
// naming the file and line.
func TestConfigWarningsReachStderr(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.toml")
	body := "[ui]\ntimezone = \"Asia/Shanghai\"\n\n[[counter]]\nname = \"c\"\npattern = \"c:<a>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := hg(t, "snapshot", "--config", path)
	want := "hourglass: warning: " + path + ":2: ui.timezone: has moved"
	if code != exitOK || strings.Count(errOut, want) != 1 || !strings.Contains(out, " CST\n") {
		t.Fatalf("exit %d; stderr %q (want one %q); report head %q", code, errOut, want, out[:min(len(out), 200)])
	}
}

func TestHelpAndUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, exitOK, "hourglass inject"},
		{[]string{"help"}, exitOK, "hourglass inject"},
		{[]string{"inject", "--help"}, exitOK, "-rate"},
		{[]string{"help", "inject"}, exitOK, "-rate"},
		{[]string{"inject", "--rate", "Inf"}, exitUsage, "is not a finite number"},
		{[]string{"--addr", ":6379"}, exitUsage, "want host:port"},
		{[]string{"--addr", "localhost:99999"}, exitUsage, "port"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"--no-such-flag"}, exitUsage, "flag provided but not defined"},
		{[]string{"inject", "--dims", "0"}, exitUsage, "--dims 0 must be at least 1"},
		{[]string{"inject", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"--demo-rate", "-5"}, exitUsage, "--demo-rate -5 must not be negative"},
		{[]string{"--demo-rate", "NaN"}, exitUsage, "finite"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := hg(t, c.args...)
			if code != c.code || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exit %d, output %q %q; want exit %d saying %q", code, out, errOut, c.code, c.want)
			}
			if n := strings.Count(out, "Usage:"); n > 1 {
				t.Fatalf("usage printed %d times:\n%s", n, out)
			}
			if code != exitOK && strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("error is not one line: %q", errOut)
			}
		})
	}
}

// TestConfigErrorExits2 checks a bad config file stops every command with exit 2 and one line
// naming file:line and key.
func TestConfigErrorExits2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.toml")
	body := "[ui]\nrefresh = \"1s\"\n\n[[counter]]\nname = \"x\"\npattern = \"x:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"2x\"\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--config", path}, {"inject", "--config", path}} {
		code, _, errOut := hg(t, args...)
		want := path + ":8: counter.hour_retention: "
		if code != exitUsage || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, errOut, want)
		}
	}
	code, _, errOut := hg(t, "--config", filepath.Join(t.TempDir(), "missing.toml"))
	if code != exitUsage || !strings.Contains(errOut, "missing.toml") {
		t.Errorf("missing config: exit %d, %q", code, errOut)
	}
}

// TestUnreachableRedisExits1 points at a port nothing listens on.
func TestUnreachableRedisExits1(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, _, errOut := hg(t, "--addr", addr)
	if code != exitRuntime || !strings.Contains(errOut, addr) || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want exit 1 and one line naming %s", code, errOut, addr)
	}
	code, _, errOut = hg(t, "--addr", "not an address")
	if code != exitUsage {
		t.Fatalf("bad --addr: exit %d, %q; want 2", code, errOut)
	}
}

// TestInjectNeedsAllowWrites checks a real Redis is read-only by default and nothing is written.
func TestInjectNeedsAllowWrites(t *testing.T) {
	srv := redistest.Start(t)
	code, _, errOut := hg(t, "inject", "--addr", srv.Addr, "--events", "10")
	if code != exitUsage || !strings.Contains(errOut, "--allow-writes") {
		t.Fatalf("exit %d, stderr %q; want exit 2 asking for --allow-writes", code, errOut)
	}
	if n := srv.Client(t).DBSize(t.Context()).Val(); n != 0 {
		t.Fatalf("a refused inject wrote %d keys", n)
	}
}

var summaryField = regexp.MustCompile(`(\S+)=([0-9.]+)`)

func parseSummary(t *testing.T, line string) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, f := range summaryField.FindAllStringSubmatch(line, -1) {
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		m[f[1]] = v
	}
	return m
}

// TestInjectTotalsEqualEvents injects into a real redis-server and reads every dims tuple's
// hour and day windows back: they sum to exactly the events reported.
func TestInjectTotalsEqualEvents(t *testing.T) {
	srv := redistest.Start(t)
	const events, dims = 50000, 200
	code, out, errOut := hg(t, "inject", "--addr", srv.Addr, "--allow-writes", "--family", "ad_revenue",
		"--events", strconv.Itoa(events), "--dims", strconv.Itoa(dims))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sum := parseSummary(t, out)
	if sum["events"] != events || sum["keys"] <= 0 || sum["increments"] <= 0 {
		t.Fatalf("summary %q", out)
	}
	cfg := config.Builtin(redistest.Shipped(t))
	f, _ := cfg.Counter("ad_revenue")
	st := store.New(srv.Client(t), store.Options{Location: cfg.Timezone})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	tuples := traffic.NewGenerator(f, dims, 1).Tuples()
	for _, g := range []store.Granularity{store.Hour, store.Day} {
		now := st.Now()
		total := windowTotal(t, st, f, g, tuples, now)
		// The window may have turned during the inject; then the two windows hold the sum.
		if total != events {
			total += windowTotal(t, st, f, g, tuples, store.WindowAt(g, now, cfg.Timezone).Start.Add(-time.Second))
		}
		if total != events {
			t.Errorf("%s windows hold %d, want %d", g, total, events)
		}
	}
	// Zipf-drawn dims pre-aggregate: far fewer increments than events.
	if sum["keys"] > events/4 {
		t.Errorf("%v key updates for %d events over %d dims: pre-aggregation is not working", sum["keys"], events, dims)
	}
}

// TestInjectRateIsACeiling runs inject at a rate for a duration; it never writes more than the
// rate allows (below capacity it writes about that many, but a test cannot count on the
// machine's speed).
func TestInjectRateIsACeiling(t *testing.T) {
	srv := redistest.Start(t)
	code, out, errOut := hg(t, "inject", "--addr", srv.Addr, "--allow-writes", "--family", "flow",
		"--rate", "2000", "--duration", "500ms")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := parseSummary(t, out)["events"]; n < 1 || n > 1000+20 {
		t.Fatalf("events %v at 2000/s for 500ms; want at most 1000 (+1 tick)", n)
	}
}

// TestEmbeddedDemoPrintsLiveTotals runs the program with no address: it starts the embedded
// Redis, says where it listens, and prints totals that grow as demo traffic flows.
func TestEmbeddedDemoPrintsLiveTotals(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, redistest.Shipped(t), []string{"--demo-rate", "500"}, &out, &errOut) }()

	hourTotal := regexp.MustCompile(`flow hour ([0-9,]+)`)
	growing := redistest.Until(20*time.Second, func() bool {
		var seen []int
		for _, m := range hourTotal.FindAllStringSubmatch(out.String(), -1) {
			n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			seen = append(seen, n)
		}
		return len(seen) >= 2 && seen[len(seen)-1] > seen[0]
	})
	if !growing {
		t.Fatalf("no growing totals in 20s; output:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "redis-cli -p ") {
		t.Errorf("the embedded Redis's port is not printed:\n%s", out.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d after ctrl+c: %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop within 10s of ctrl+c")
	}
}

// TestInjectReportsRefusedKeys puts a list where one of inject's counter keys goes: inject writes
// every other key, leaves the list alone, and exits 1 naming it.
func TestInjectReportsRefusedKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg := config.Builtin(redistest.Shipped(t))
	f, _ := cfg.Counter("ad_revenue")
	st := store.New(rdb, store.Options{Location: cfg.Timezone})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	tuples := traffic.NewGenerator(f, 3, 1).Tuples()
	// The list sits in this hour's key and the next one's, in case the hour turns meanwhile.
	hour := store.WindowAt(store.Hour, st.Now(), cfg.Timezone)
	key, _ := f.Key(hour, tuples[0])
	next, _ := f.Key(store.WindowAt(store.Hour, hour.End, cfg.Timezone), tuples[0])
	rdb.RPush(t.Context(), key, "not a counter")
	rdb.RPush(t.Context(), next, "not a counter")
	code, out, errOut := hg(t, "inject", "--addr", srv.Addr, "--allow-writes", "--family", "ad_revenue", "--dims", "3", "--events", "300")
	if code != exitRuntime || !strings.Contains(errOut, "wrong type") ||
		!strings.Contains(errOut, key) && !strings.Contains(errOut, next) {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming %q as the wrong type", code, errOut, key)
	}
	// Each flush that carried increments for the list's key counts one refusal.
	if parseSummary(t, out)["refused"] < 1 {
		t.Errorf("summary %q does not count the refusal", out)
	}
	if typ := rdb.Type(t.Context(), key).Val(); typ != "list" || rdb.TTL(t.Context(), key).Val() != -1 {
		t.Errorf("the list was touched: type %s ttl %v", typ, rdb.TTL(t.Context(), key).Val())
	}
	if total := windowTotal(t, st, f, store.Day, tuples, st.Now()); total != 300 {
		t.Errorf("day windows hold %d, want all 300 events", total)
	}
}

// TestPasswordsNeverPrinted gives a password in a redis:// URL that is wrong in some other way,
// by flag and by config file, and checks no message shows it.
func TestPasswordsNeverPrinted(t *testing.T) {
	const secret = "s3cret-Pa55"
	bad := "redis://app:" + secret + "@127.0.0.1:notaport/0"
	path := filepath.Join(t.TempDir(), "pw.toml")
	if err := os.WriteFile(path, []byte("[redis]\naddrs = [\""+bad+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--addr", bad},
		{"--config", path},
		{"inject", "--addr", "redis://app:" + secret + "@127.0.0.1:6379"},
	} {
		code, out, errOut := hg(t, args...)
		if code != exitUsage || strings.Contains(out+errOut, secret) || !strings.Contains(errOut, "xxxxx") {
			t.Errorf("%v: exit %d, output %q %q; want exit 2 with the password hidden", args[:1], code, out, errOut)
		}
	}
}

// TestReadOnlyUserCanWatch logs in as an ACL user that may only read: connecting works (it
// needs only TIME), and a write it is not allowed is refused by Redis and reported in one line.
func TestReadOnlyUserCanWatch(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "watcher", "on", ">watchpw", "~*", "+@read", "+time", "+ping", "+hello", "+client").Err(); err != nil {
		t.Fatal(err)
	}
	url := "redis://watcher:watchpw@" + srv.Addr
	code, out, errOut := hg(t, "--addr", url)
	if code != exitOK || !strings.Contains(out, "read-only") {
		t.Fatalf("watch as a read-only user: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut = hg(t, "inject", "--addr", url, "--allow-writes", "--events", "10")
	if code != exitRuntime || !strings.Contains(errOut, "NOPERM") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("inject as a read-only user: exit %d, stderr %q; want exit 1 with Redis's NOPERM in one line", code, errOut)
	}
	if strings.Contains(errOut, "watchpw") {
		t.Fatalf("the password was printed: %q", errOut)
	}
}

// TestOneAddressOfAClusterIsACluster gives one node of a real 3-master cluster: hourglass finds
// it is a cluster, says so, and inject writes across every master with exact totals. A config
// whose family could not be written in one slot is refused then for writes, naming its pattern's line.
func TestOneAddressOfAClusterIsACluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	code, out, errOut := hg(t, "--addr", cl.Addrs[1])
	if code != exitOK || !strings.Contains(out, "(cluster, read-only)") {
		t.Fatalf("exit %d, %q %q; want it to report a cluster", code, out, errOut)
	}
	const events, dims = 30000, 300
	redistest.ClearOfHourEnd(t, time.Minute) // today's window from the inject to the snapshot
	code, out, errOut = hg(t, "inject", "--addr", cl.Addrs[0], "--allow-writes", "--family", "ad_revenue",
		"--events", strconv.Itoa(events), "--dims", strconv.Itoa(dims))
	if code != exitOK || parseSummary(t, out)["events"] != events {
		t.Fatalf("inject through one node: exit %d, %q %q", code, out, errOut)
	}
	cfg := config.Builtin(redistest.Shipped(t))
	f, _ := cfg.Counter("ad_revenue")
	st := store.New(cl.Client(t), store.Options{Location: cfg.Timezone})
	if err := st.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	if total := windowTotal(t, st, f, store.Day, traffic.NewGenerator(f, dims, 1).Tuples(), st.Now()); total != events {
		t.Fatalf("day windows across the cluster hold %d, want %d", total, events)
	}
	// The snapshot, merged from every master's sweep, says the same.
	code, out, errOut = hg(t, "snapshot", "--json", "--addr", cl.Addrs[2], "--keys-per-second", "0")
	var snap snapshot.Snapshot
	if code != exitOK || json.Unmarshal([]byte(out), &snap) != nil {
		t.Fatalf("snapshot of the cluster: exit %d, %q", code, errOut)
	}
	if w := snap.Family("ad_revenue").CurrentWindow("day"); w == nil || w.Total != events || snap.Mode != "cluster" || len(snap.Scan.Masters) != 3 {
		t.Fatalf("cluster snapshot: mode %s, masters %+v, today %+v; want %d", snap.Mode, snap.Scan.Masters, w, events)
	}
	code, _, errOut = hg(t, "--config", "../config/testdata/config/split-slots.toml", "--addr", cl.Addrs[2], "--allow-writes")
	if code != exitUsage || !strings.Contains(errOut, "split-slots.toml:8: counter.pattern:") {
		t.Fatalf("split family on a cluster found through one node: exit %d, %q", code, errOut)
	}
}

// TestAddrFlagOverridesClusterConfig points a config written for a cluster (whose family would
// be refused there) at one standalone server with --addr: the flag wins, and nothing is refused.
func TestAddrFlagOverridesClusterConfig(t *testing.T) {
	srv := redistest.Start(t)
	code, out, errOut := hg(t, "--config", "../config/testdata/config/split-slots.toml", "--addr", srv.Addr)
	if code != exitOK || !strings.Contains(out, "(standalone, read-only)") {
		t.Fatalf("exit %d, %q %q; want the standalone target accepted", code, out, errOut)
	}
	code, _, errOut = hg(t, "repair", "--allow-writes", "--config", "../config/testdata/config/split-slots.toml")
	if code != exitUsage || !strings.Contains(errOut, "split-slots.toml:8: counter.pattern:") {
		t.Fatalf("the file's own cluster addrs: exit %d, %q; want the family refused at its line before connecting", code, errOut)
	}
}

// windowTotal sums the windows of granularity g holding at, over tuples.
func windowTotal(t *testing.T, st *store.Store, f *store.Family, g store.Granularity, tuples [][]string, at time.Time) int64 {
	t.Helper()
	vals, err := st.GetMany(t.Context(), f, g, tuples, at)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, v := range vals {
		total += v.Value
	}
	return total
}

// quietLogger drops go-redis's own log lines, as main does.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietLogger{}) // as main does: connection trouble is reported by hourglass itself
	os.Exit(m.Run())
}
