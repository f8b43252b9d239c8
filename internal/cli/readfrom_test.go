package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// shippedWith is the shipped config with its [redis] addrs line replaced by keys, written to a
// file, and the line the first of them is on.
func shippedWith(t *testing.T, keys string) (string, int) {
	t.Helper()
	shipped := string(redistest.Shipped(t))
	at := strings.Index(shipped, "\naddrs = []\n")
	if at < 0 {
		t.Fatal("the shipped config has no addrs = [] line")
	}
	line := strings.Count(shipped[:at], "\n") + 2
	path := filepath.Join(t.TempDir(), "replica.toml")
	text := shipped[:at] + "\n" + keys + shipped[at+len("\naddrs = []\n"):]
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, line
}

// Reading from a replica with none to read: exit 2 and one line naming what is wrong, at the
// config's file:line when the file asked for it.
func TestReadFromReplicaMistakes(t *testing.T) {
	refused := redistest.RefusedAddr(t)
	path, line := shippedWith(t, "addrs = ["+strconv.Quote(refused)+"]\nread_from = \"replica\"\n")
	oneLine(t, []string{"snapshot", "--config", path}, exitUsage,
		path+":"+strconv.Itoa(line+1)+": redis.read_from: \"replica\" has no replica to read: give [redis] replica_addrs")
	path, line = shippedWith(t, "read_from = \"secondary\"\n")
	oneLine(t, []string{"snapshot", "--config", path}, exitUsage, path+":"+strconv.Itoa(line)+`: redis.read_from: is "secondary"`)
	oneLine(t, []string{"snapshot", "--addr", refused, "--read-from", "replica"}, exitUsage, "--read-from replica has no replica to read")
	oneLine(t, []string{"snapshot", "--addr", refused, "--read-from", "sideways"}, exitUsage, `--read-from "sideways": want primary or replica`)
	oneLine(t, []string{"snapshot", "--addr", refused, "--read-from", "replica", "--replica", "redis://h:1"}, exitUsage, "--replica")
	oneLine(t, []string{"snapshot", "--read-from", "replica"}, exitUsage, "--read-from replica needs a real Redis")
	p, other := redistest.Start(t), redistest.Start(t)
	oneLine(t, []string{"snapshot", "--addr", p.Addr, "--read-from", "replica", "--replica", other.Addr}, exitUsage,
		"no replica: "+other.Addr+" answers as a primary")
	s := redistest.StartSentinels(t, 0, 1, "")
	oneLine(t, []string{"snapshot", "--addr", sentinelURL(s, s.Master), "--read-from", "replica"}, exitUsage,
		"no replica of \""+s.Master+"\": the Sentinels list none")
}

// snapshot --read-from replica sweeps the replica: the primary runs no SCAN, PTTL or MGET, and
// the report is the one a sweep of the primary prints. Through Sentinel the replica is the
// Sentinels' word.
func TestSnapshotReadsReplica(t *testing.T) {
	p := redistest.Start(t)
	r := redistest.StartReplica(t, p)
	pc := p.Client(t)
	ctx := t.Context()
	hour := time.Now().UTC().Format("2006010215")
	for i := range 300 { // the shipped config's flow family, and keys no entry claims
		if err := pc.Set(ctx, "flow:count:app:dev:10.0.0."+strconv.Itoa(i)+":"+hour, i, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		if err := pc.Set(ctx, "session:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	redistest.WaitCaughtUp(t, p, r)
	code, fromPrimary, errOut := hg(t, "snapshot", "--addr", p.Addr, "--json")
	if code != exitOK {
		t.Fatalf("primary snapshot: exit %d, %s", code, errOut)
	}
	resetStats(t, pc)
	code, fromReplica, errOut := hg(t, "snapshot", "--addr", p.Addr, "--json", "--read-from", "replica", "--replica", r.Addr)
	if code != exitOK || errOut != "" {
		t.Fatalf("replica snapshot: exit %d, %q", code, errOut)
	}
	noSweepOn(t, pc)
	if a, b := figures(t, fromPrimary), figures(t, fromReplica); a != b || !strings.Contains(a, `"keys_matched":300`) {
		t.Errorf("figures differ:\nprimary %s\nreplica %s", a, b)
	}

	s := redistest.StartSentinels(t, 1, 1, "")
	sp := s.Node(t, s.Primary(t)).Client(t)
	resetStats(t, sp)
	if code, _, errOut := hg(t, "snapshot", "--addr", sentinelURL(s, s.Master), "--read-from", "replica"); code != exitOK || errOut != "" {
		t.Fatalf("Sentinel replica snapshot: exit %d, %q", code, errOut)
	}
	noSweepOn(t, sp)
}

// resetStats zeroes the commandstats of the server at c.
func resetStats(t *testing.T, c *redis.Client) {
	t.Helper()
	if err := c.ConfigResetStat(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
}

// noSweepOn fails the test if the server at c ran a SCAN, PTTL or MGET since its stats reset.
func noSweepOn(t *testing.T, c *redis.Client) {
	t.Helper()
	text, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	stats := store.ParseCommandStats(text)
	for _, cmd := range []string{"scan", "pttl", "mget"} {
		if n := stats[cmd].Calls; n != 0 {
			t.Errorf("the primary ran %d %s calls with the sweep on a replica", n, strings.ToUpper(cmd))
		}
	}
}

// figures is a --json report without what differs from one sweep to the next: when it was
// taken and how long it took, the server's figures, a rate over the hour so far (it moves with
// the clock), and the unclaimed keys sampled (a node's SCAN order is its own, so another
// sample).
func figures(t *testing.T, report string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(report), &m); err != nil {
		t.Fatalf("%v: %s", err, report)
	}
	drop(m, "taken_at", "server", "duration_ms", "hour_avg_per_sec", "sampled", "examples", "evidence")
	out, _ := json.Marshal(m)
	return string(out)
}

// drop deletes the keys named from v's objects, at any depth.
func drop(v any, names ...string) {
	switch x := v.(type) {
	case map[string]any:
		for _, n := range names {
			delete(x, n)
		}
		for _, e := range x {
			drop(e, names...)
		}
	case []any:
		for _, e := range x {
			drop(e, names...)
		}
	}
}
