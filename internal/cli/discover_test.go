package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// variedKeyspace writes what a service's Redis holds, the way its programs write it: counters in
// hour and day windows with window-aligned TTLs, a delay queue scored in seconds, a list queue,
// sliding-limiter sorted sets, locks, cache strings, hashes, and two keys with hostile names. It
// returns how many of the keys hourglass reads no structure from (the caches, hashes and the
// hostile two).
func variedKeyspace(t *testing.T, rdb *redis.Client) (noise int64) {
	t.Helper()
	ctx := t.Context()
	now := time.Now()
	p := rdb.Pipeline()
	for app := range 4 {
		for _, dev := range []string{"ios", "android", "web"} {
			for h := range 6 {
				w := store.WindowAt(store.Hour, now.Add(-time.Duration(h)*time.Hour), time.UTC)
				k := fmt.Sprintf("stats:app%d:%s:%s", app, dev, w.Start.Format("2006010215"))
				p.Set(ctx, k, 10*app+h+1, 0)
				p.ExpireAt(ctx, k, w.End.Add(48*time.Hour))
			}
			d := store.WindowAt(store.Day, now, time.UTC)
			k := fmt.Sprintf("stats:app%d:%s:%s", app, dev, d.Start.Format("20060102"))
			p.Set(ctx, k, 500+app, 0)
			p.ExpireAt(ctx, k, d.End.Add(30*24*time.Hour))
		}
	}
	for i := range 40 { // due times in Unix seconds, a few already due
		p.ZAdd(ctx, "delay:orders", redis.Z{Score: float64(now.Unix() + int64(i*90-600)), Member: fmt.Sprint("order", i)})
	}
	for i := range 25 {
		p.RPush(ctx, "queue:emails", fmt.Sprint("mail", i))
	}
	for u := range 30 { // a sliding limiter: the hit times of the last minute, in milliseconds
		k := fmt.Sprintf("ratelimit:user%d", u)
		for j := range 5 {
			p.ZAdd(ctx, k, redis.Z{Score: float64(now.UnixMilli() - int64(j*1000)), Member: fmt.Sprint(u, "-", j)})
		}
		p.PExpire(ctx, k, time.Minute)
	}
	for l := range 6 {
		token := make([]byte, 16)
		_, _ = rand.Read(token)
		p.Set(ctx, fmt.Sprintf("lock:job%d", l), hex.EncodeToString(token), 30*time.Second)
	}
	for c := range 50 {
		p.Set(ctx, fmt.Sprintf("cache:page:%d", c), `{"html":"<p>hello</p>"}`, 10*time.Minute)
	}
	for u := range 40 {
		p.HSet(ctx, fmt.Sprintf("user:%d", u), "name", fmt.Sprint("n", u), "email", fmt.Sprint(u, "@example.com"))
	}
	p.Set(ctx, "odd\n[[counter]]\nname = \"injected\"", "x", 0)
	p.Set(ctx, "\x1b[2Jclear\u202e", "y", 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return 50 + 40 + 2
}

// writeConfig writes body to a new file and returns its path.
func writeConfig(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshotWith runs snapshot --json with the config at path and returns the Snapshot.
func snapshotWith(t *testing.T, path string) *snapshot.Snapshot {
	t.Helper()
	code, out, errOut := hg(t, "snapshot", "--json", "--config", path)
	if code != exitOK {
		t.Fatalf("snapshot with the discovered config: exit %d, %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot output: %v", err)
	}
	return &snap
}

// TestDiscoverEndToEnd discovers a varied keyspace on a real redis-server, loads what it printed
// as a config with no edits, and checks that a snapshot with it claims every key but the noise:
// the counter family, both queues, the limiter and the locks each with their keys.
func TestDiscoverEndToEnd(t *testing.T) {
	srv := redistest.Start(t)
	noise := variedKeyspace(t, srv.Client(t))
	// The password reaches discover and the snapshots through password_env alone.
	if err := srv.Client(t).ConfigSet(t.Context(), "requirepass", "discover-pw").Err(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HG_DISCOVER_TEST_PASSWORD", "discover-pw")
	conn := writeConfig(t, "conn.toml", fmt.Sprintf("timezone = \"UTC\"\n\n[redis]\naddrs = [%q]\nname = \"test-redis\"\npassword_env = \"HG_DISCOVER_TEST_PASSWORD\"\n", srv.Addr))

	code, out, errOut := hg(t, "discover", "--config", conn)
	if code != exitOK || errOut != "" {
		t.Fatalf("discover: exit %d, stderr %q (want nothing: no progress when stderr is not a terminal)", code, errOut)
	}
	if _, err := config.Parse("discovered.toml", []byte(out), nil); err != nil {
		t.Fatalf("the output does not load as a config: %v\n%s", err, out)
	}
	for _, want := range []string{
		"# target:   test-redis (" + srv.Addr + "), standalone\n",
		"# keys:     ", " seen, ", "timezone = \"UTC\"\n",
		"[redis]\naddrs = [\"" + srv.Addr + "\"]\nname = \"test-redis\"\npassword_env = \"HG_DISCOVER_TEST_PASSWORD\"\n",
		"# pattern:    delay:orders\n", "# confidence: high\n", "[[delay_queue]]\n", "[[list_queue]]\n",
		"# [[limiter]]\n", "[[lock]]\n", "[[counter]]\n", "# pattern:    user:<",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "INCOMPLETE") || strings.Contains(out, "\nname = \"injected\"") || strings.Count(out, "\n[[counter]]\n") != 1 ||
		strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("a complete sweep marked incomplete, or a key name broke out of its comment:\n%s", out)
	}
	if !strings.Contains(out, "# Commented out: the keys do not hold its window and limit") || strings.Contains(out, "\n[[limiter]]\n") {
		t.Errorf("the sliding limiter, whose limit its keys do not hold, is not commented out:\n%s", out)
	}
	before := snapshotWith(t, conn)
	path := writeConfig(t, "discovered.toml", setGuessed(out))
	snap := snapshotWith(t, path)
	if before.Unclaimed.Keys <= noise || snap.Unclaimed.Keys != noise || !snap.Scan.Complete {
		t.Errorf("unclaimed keys: %d before, %d with the discovered config; want %d (the noise)", before.Unclaimed.Keys, snap.Unclaimed.Keys, noise)
	}
	for _, g := range snap.Unclaimed.Groups {
		if g.Entry != nil {
			t.Errorf("still unclaimed with an entry proposed: %s (%s)", g.Pattern, g.Kind)
		}
	}
	if len(snap.Counters) != 1 || snap.Counters[0].Keys != 4*3*7 || len(snap.Counters[0].Granularities) != 2 {
		t.Errorf("counters %+v; want one family of 84 keys in hour and day windows", snap.Counters)
	}
	if len(snap.DelayQueues) != 1 || snap.DelayQueues[0].Depth != 40 || snap.DelayQueues[0].Schedule == nil {
		t.Errorf("delay queues %+v; want delay:orders with 40 tasks due by time", snap.DelayQueues)
	}
	if len(snap.ListQueues) != 1 || snap.ListQueues[0].Length != 25 {
		t.Errorf("list queues %+v; want queue:emails of 25", snap.ListQueues)
	}
	if len(snap.Limiters) != 1 || snap.Limiters[0].Keys != 30 || len(snap.Locks) != 1 || snap.Locks[0].Held != 6 {
		t.Errorf("limiters %+v, locks %+v; want 30 limiter keys and 6 locks held", snap.Limiters, snap.Locks)
	}
}

// setGuessed does what a user does with a discovered limiter whose limit its keys do not hold:
// sets the limit (here, keeps the guess) and removes the "# " of the entry's lines.
func setGuessed(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "# Commented out: the keys do not hold its ") {
			continue
		}
		for j := i + 2; j < len(lines) && strings.HasPrefix(lines[j], "# "); j++ {
			lines[j] = strings.TrimPrefix(lines[j], "# ")
		}
	}
	return strings.Join(lines, "\n")
}

// TestDiscoverJSON: --json gives the finding as data, its config the same text discover prints.
func TestDiscoverJSON(t *testing.T) {
	srv := redistest.Start(t)
	noise := variedKeyspace(t, srv.Client(t))
	code, out, errOut := hg(t, "discover", "--json", "--addr", srv.Addr)
	if code != exitOK {
		t.Fatalf("discover --json: exit %d, %s", code, errOut)
	}
	var got discoverJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not the JSON of a finding: %v\n%s", err, out)
	}
	keys := srv.Client(t).DBSize(t.Context()).Val()
	if got.Target != srv.Addr || got.Mode != "standalone" || !got.Complete || got.KeysSeen != keys ||
		got.Unclaimed.Keys != keys || got.TakenAt.IsZero() || got.Merge != "" || got.Timezone == "" {
		t.Errorf("finding %+v; want a complete sweep of %d keys, all unclaimed", got, keys)
	}
	if _, err := config.Parse("json.config", []byte(got.Config), nil); err != nil {
		t.Fatalf("config field does not load: %v", err)
	}
	var entries, notes int64
	for _, g := range got.Unclaimed.Groups {
		if g.Entry == nil {
			notes += g.Keys
			continue
		}
		entries++
		plain := *g.Entry // an entry in the top-level zone has no timezone line of its own
		if plain.Timezone == got.Timezone {
			plain.Timezone = ""
		}
		text := plain.TOML()
		if len(plain.Guessed) > 0 {
			text = "# " + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n# ") + "\n"
		}
		if !strings.Contains(got.Config, text) {
			t.Errorf("entry %s is not in the config text as Entry.TOML renders it", g.Entry.Name)
		}
	}
	if entries != 5 || notes != noise {
		t.Errorf("%d entries and %d keys with none; want 5 and %d", entries, notes, noise)
	}
}

// TestDiscoverMerge: --merge keeps the file's text byte for byte, sweeps with its entries
// claiming keys, and adds a marked section of only the groups it does not claim, renamed where
// a name is the file's already; the result loads and claims all but the noise.
func TestDiscoverMerge(t *testing.T) {
	srv := redistest.Start(t)
	noise := variedKeyspace(t, srv.Client(t))
	mine := fmt.Sprintf("# my own config, with my comments\ntimezone = \"UTC\"\n[redis]\naddrs = [%q]\n\n"+
		"[[lock]]\nname = \"lock\"   # trailing comment\npattern = \"lock:<job>\"\n\n"+
		"[[counter]]\nname = \"stats\"\npattern = \"stats:<app>:<dev>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"2d\"", srv.Addr)
	path := writeConfig(t, "mine.toml", mine)
	code, out, errOut := hg(t, "discover", "--merge", path)
	if code != exitOK {
		t.Fatalf("discover --merge: exit %d, %s", code, errOut)
	}
	if !strings.HasPrefix(out, mine+"\n") {
		t.Fatalf("the file's text is not kept as it is at the top:\n%s", out)
	}
	section := out[len(mine):]
	for _, want := range []string{"==== hourglass discover: the keys " + path + " does not claim ====", "==== end of hourglass discover ====",
		"[[delay_queue]]", "[[list_queue]]", "# [[limiter]]", "name = \"stats_2\"", "day_format"} {
		if !strings.Contains(section, want) {
			t.Errorf("the added section lacks %q:\n%s", want, section)
		}
	}
	if strings.Contains(section, "[[lock]]") || strings.Contains(section, "hour_format") {
		t.Errorf("the section proposes what the file already claims:\n%s", section)
	}
	if body, _ := os.ReadFile(path); string(body) != mine {
		t.Error("--merge changed the file")
	}
	snap := snapshotWith(t, writeConfig(t, "merged.toml", setGuessed(out)))
	if snap.Unclaimed.Keys != noise || len(snap.Counters) != 2 {
		t.Errorf("with the merged config: %d unclaimed (want %d), %d families (want the file's and the day one)", snap.Unclaimed.Keys, noise, len(snap.Counters))
	}

	bad := writeConfig(t, "bad.toml", "timezone = \"UTC\"\n\n[[counter]]\nname = \"x\"\npattern = \"x:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"2x\"\n")
	for _, args := range [][]string{{"--merge", bad, "--addr", srv.Addr}, {"--merge", bad, "--config", path}} {
		code, out, errOut = hg(t, append([]string{"discover"}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, bad+":7: counter.hour_retention: ") || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s:7", args, code, errOut, bad)
		}
	}
	code, _, errOut = hg(t, "discover", "--merge", filepath.Join(t.TempDir(), "none.toml"), "--addr", srv.Addr)
	if code != exitUsage || !strings.Contains(errOut, "none.toml") {
		t.Errorf("a missing --merge file: exit %d, %q; want 2", code, errOut)
	}
}

// TestDiscoverOutputFile: -o writes a new file and nothing to stdout, and refuses a file that
// exists (the config read among them) before it sweeps, leaving it as it was.
func TestDiscoverOutputFile(t *testing.T) {
	srv := redistest.Start(t)
	srv.Client(t).Set(t.Context(), "queue:jobs:delay", "x", 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "found.toml")
	code, out, errOut := hg(t, "discover", "--addr", srv.Addr, "-o", path)
	body, err := os.ReadFile(path)
	if code != exitOK || out != "" || err != nil || !strings.Contains(string(body), "[redis]\naddrs = [\""+srv.Addr+"\"]") {
		t.Fatalf("-o: exit %d, stdout %q, stderr %q, file %q (%v)", code, out, errOut, body, err)
	}
	for _, args := range [][]string{{"-o", path}, {"--output", path}, {"--merge", path, "-o", path}, {"--config", path, "--output", path}} {
		code, out, errOut = hg(t, append([]string{"discover", "--addr", srv.Addr}, args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, path) || !strings.Contains(errOut, "never") {
			t.Errorf("%v over an existing file: exit %d, %q %q; want exit 2 refusing it", args, code, out, errOut)
		}
	}
	if again, _ := os.ReadFile(path); string(again) != string(body) {
		t.Error("a refused -o changed the file")
	}
	code, _, _ = hg(t, "discover", "--addr", "127.0.0.1:1", "-o", filepath.Join(dir, "never.toml"))
	if _, err := os.Stat(filepath.Join(dir, "never.toml")); code != exitRuntime || err == nil {
		t.Errorf("a failed discover: exit %d, and its -o file left behind: %v", code, err)
	}
}

// TestDiscoverFlags: bad flags exit 2 with one line, an unreachable Redis exits 1.
func TestDiscoverFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--keys-per-second", "-5"}, exitUsage, "discover: --keys-per-second -5 must not be negative"},
		{[]string{"--merge", ""}, exitUsage, "--merge needs a file name"},
		{[]string{"-o", ""}, exitUsage, "-o needs a file name"},
		{[]string{"--output="}, exitUsage, "--output needs a file name"},
		{[]string{"extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"--frob"}, exitUsage, "flag provided but not defined"},
		{[]string{"--addr", ":1"}, exitUsage, "want host:port"},
		{[]string{"--addr", "127.0.0.1:1"}, exitRuntime, "127.0.0.1:1"},
	} {
		code, out, errOut := hg(t, append([]string{"discover"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 ||
			out != "" && !strings.HasPrefix(out, "hourglass discover: ") { // a flag not defined shows the usage

			t.Errorf("discover %v: exit %d, %q %q; want exit %d and one line saying %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	code, out, _ := hg(t, "help", "discover")
	for _, want := range []string{"hourglass discover", "-merge", "-output", "-o PATH", "docs/discover.md", "INCOMPLETE"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("help discover lacks %q:\n%s", want, out)
		}
	}
}

// TestDiscoverNoPassword: an address's password never reaches the output; the file still reaches
// the server with the password from the environment.
func TestDiscoverNoPassword(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client(t).ConfigSet(t.Context(), "requirepass", "s3cret-pw").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "s3cret-pw"})
	defer rdb.Close()
	for i := range 20 {
		rdb.Set(t.Context(), fmt.Sprint("lock:res", i), fmt.Sprintf("%032x", i*7919+1), time.Minute)
	}
	t.Setenv("REDISCLI_AUTH", "")
	url := "redis://:s3cret-pw@" + srv.Addr + "/0"
	code, out, errOut := hg(t, "discover", "--addr", url)
	if code != exitOK || strings.Contains(out+errOut, "s3cret") || !strings.Contains(out, `addrs = ["redis://`+srv.Addr+`/0"]`) ||
		!strings.Contains(out, "password of an address is left out") {
		t.Fatalf("exit %d; stderr %q; output:\n%s", code, errOut, out)
	}
	t.Setenv("REDISCLI_AUTH", "s3cret-pw")
	snap := snapshotWith(t, writeConfig(t, "found.toml", out))
	if snap.Scan.KeysSeen != 20 {
		t.Errorf("the discovered config saw %d keys; want 20", snap.Scan.KeysSeen)
	}
}

var scanCalls = regexp.MustCompile(`cmdstat_scan:calls=(\d+)`)

// TestDiscoverInterrupted: ctrl+c mid-sweep ends discover long before the sweep would end; what it
// found so far is printed, marked incomplete, loads as a config, and the exit code is 1.
func TestDiscoverInterrupted(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	variedKeyspace(t, rdb)
	conn := writeConfig(t, "slow.toml", fmt.Sprintf("timezone = \"UTC\"\n[redis]\naddrs = [%q]\n[scan]\ncount = 10\nkeys_per_second = 20\n", srv.Addr))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, redistest.Shipped(t), []string{"discover", "--config", conn}, &out, &errOut) }()
	for calls := 0; calls < 3; { // at 20 keys a second the sweep of 300 keys takes 15 s
		select {
		case code := <-done:
			t.Fatalf("discover ended (exit %d) before it was interrupted: %s", code, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := scanCalls.FindStringSubmatch(rdb.Info(t.Context(), "commandstats").Val()); m != nil {
			calls, _ = strconv.Atoi(m[1])
		}
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second): // liveness: ten times the second the docs promise; the sweep has 15 s to go
		t.Fatal("discover did not stop within 10 s of ctrl+c")
	}
	text := out.String()
	if code != exitRuntime || !strings.Contains(errOut.String(), "interrupted") || !strings.Contains(text, "# INCOMPLETE") {
		t.Fatalf("exit %d, stderr %q; output:\n%s", code, errOut.String(), text)
	}
	if _, err := config.Parse("partial.toml", []byte(text), nil); err != nil {
		t.Fatalf("the partial output does not load: %v\n%s", err, text)
	}
	m := regexp.MustCompile(`# keys: +(\d+) seen`).FindStringSubmatch(text)
	if m == nil || m[1] == "0" {
		t.Errorf("the partial output says no key was seen:\n%s", text)
	}
}

// TestDiscoverCluster: on a Redis Cluster, reached through one node, discover sweeps every
// master. A counter whose hour and day keys fall in different slots, which hourglass refuses on a
// cluster, is printed commented out with the config's reason; one whose dims are in a hash tag is
// an entry. The output loads, and a snapshot with it (through the same node) claims its keys.
func TestDiscoverCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	ctx := t.Context()
	now := time.Now()
	hour, day := store.WindowAt(store.Hour, now, time.UTC), store.WindowAt(store.Day, now, time.UTC)
	for app := range 12 {
		for _, w := range []struct {
			at  store.Window
			fmt string
			ret time.Duration
		}{{hour, "2006010215", 48 * time.Hour}, {day, "20060102", 30 * 24 * time.Hour}} {
			for _, k := range []string{fmt.Sprintf("split:app%d:%s", app, w.at.Start.Format(w.fmt)), fmt.Sprintf("tagged:{app%d}:%s", app, w.at.Start.Format(w.fmt))} {
				if err := rdb.Set(ctx, k, app+1, 0).Err(); err != nil {
					t.Fatal(err)
				}
				rdb.ExpireAt(ctx, k, w.at.End.Add(w.ret))
			}
		}
	}
	// The config's own family fits the split keys, and a cluster refuses it for writes (a snapshot
	// only warns of it); without --merge it claims nothing and is not checked.
	conn := writeConfig(t, "conn.toml", fmt.Sprintf("timezone = \"UTC\"\n[redis]\naddrs = [%q]\n\n[[counter]]\nname = \"mine\"\n"+
		"pattern = \"split:<app>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"2d\"\nday_format = \"yyyyMMdd\"\nday_retention = \"30d\"\n", cl.Addrs[0]))
	if code, _, errOut := hg(t, "snapshot", "--config", conn); code != exitOK || !strings.Contains(errOut, "hourglass: warning: ") || !strings.Contains(errOut, "cluster slots") {
		t.Fatalf("snapshot with a family a cluster refuses for writes: exit %d, %q", code, errOut)
	}
	code, out, errOut := hg(t, "discover", "--config", conn)
	if code != exitOK {
		t.Fatalf("discover on a cluster: exit %d, %s", code, errOut)
	}
	for _, want := range []string{", cluster\n", "# keys:     48 seen, 48 claimed by no entry",
		"# Commented out: hourglass refuses this entry as it stands (counter.pattern: hour and day keys of \"split\" can land in different cluster slots",
		"split it in two: one entry with the hour_ keys, one with the day_ keys",
		"# [[counter]]\n# name = \"split\"\n", "\n[[counter]]\nname = \"tagged\"\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	snap := snapshotWith(t, writeConfig(t, "found.toml", out))
	if snap.Mode != "cluster" || len(snap.Counters) != 1 || snap.Counters[0].Keys != 24 || snap.Unclaimed.Keys != 24 {
		t.Errorf("snapshot with it: mode %s, counters %+v, %d unclaimed; want the tagged family's 24 keys claimed, the split 24 not",
			snap.Mode, snap.Counters, snap.Unclaimed.Keys)
	}
}

// TestDiscoverEmbedded: with no address discover sweeps the embedded Redis filled with the demo's
// data, and its output, whose addrs = [] is that Redis again, loads with the demo's families
// found.
func TestDiscoverEmbedded(t *testing.T) {
	code, out, errOut := hg(t, "discover", "--config", writeConfig(t, "demo.toml", string(redistest.Shipped(t))))
	if code != exitOK || !strings.Contains(errOut, "embedded Redis on ") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	cfg, err := config.Parse("demo.toml", []byte(out), nil)
	if err != nil || len(cfg.Redis.Addrs) != 0 || len(cfg.Counters) == 0 || !strings.Contains(out, "addrs = [] is the embedded Redis") {
		t.Fatalf("%v; %d addrs, %d counters:\n%s", err, len(cfg.Redis.Addrs), len(cfg.Counters), out)
	}
}
