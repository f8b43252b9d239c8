package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// utcConfig writes a config with the shipped families, cut in UTC, that points at addr.
func utcConfig(t *testing.T, addr string) (string, *config.Config) {
	t.Helper()
	body := strings.Replace(string(redistest.Shipped(t)), `timezone = "Local"`, `timezone = "UTC"`, 1)
	body = strings.Replace(body, "addrs = []", fmt.Sprintf("addrs = [%q]", addr), 1)
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, []string{addr})
	if err != nil {
		t.Fatal(err)
	}
	return path, cfg
}

func familyKey(t *testing.T, cfg *config.Config, name string, g store.Granularity, at time.Time, dims ...string) string {
	t.Helper()
	f, err := cfg.Counter(name)
	if err != nil {
		t.Fatal(err)
	}
	k, err := f.Key(store.WindowAt(g, at, time.UTC), dims)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSnapshotCommand writes keys as leaky and sound writers do, then checks the JSON's numbers
// and the text report's lines.
func TestSnapshotCommand(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	path, cfg := utcConfig(t, srv.Addr)
	now := redistest.ClearOfHourEnd(t, 30*time.Second) // the snapshot's current hour is this one
	var hourTotal int64
	for i := range 10 { // sound: INCRBY then a window-aligned EXPIREAT
		k := familyKey(t, cfg, "flow", store.Hour, now, "app", "ios", fmt.Sprint("10.0.0.", i))
		rdb.IncrBy(ctx, k, int64(i+1))
		rdb.ExpireAt(ctx, k, store.WindowAt(store.Hour, now, time.UTC).End.Add(48*time.Hour))
		hourTotal += int64(i + 1)
	}
	leak := familyKey(t, cfg, "flow", store.Hour, now, "app\x1b[2J", "ios", "10.9.9.9") // INCRBY, no EXPIRE
	rdb.IncrBy(ctx, leak, 5)
	hourTotal += 5
	day := familyKey(t, cfg, "ad_revenue", store.Day, now, "baidu", "ad1")
	rdb.IncrBy(ctx, day, 300)
	rdb.Expire(ctx, day, 30*24*time.Hour)
	rdb.LPush(ctx, familyKey(t, cfg, "api_calls", store.Hour, now, "t1", "/v1"), "oops")
	rdb.Set(ctx, "unrelated:key", "x", 0)

	code, out, errOut := hg(t, "snapshot", "--json", "--config", path)
	if code != exitOK {
		t.Fatalf("snapshot --json: exit %d, %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("output is not a snapshot: %v\n%s", err, out)
	}
	if snap.Scan.KeysSeen != 14 || snap.Scan.KeysMatched != 13 || !snap.Scan.Complete || snap.Mode != "standalone" || snap.Target != srv.Addr {
		t.Errorf("scan %+v mode %q target %q", snap.Scan, snap.Mode, snap.Target)
	}
	flow := snap.Family("flow")
	if cw := flow.CurrentWindow("hour"); cw == nil || cw.Total != hourTotal || cw.Keys != 11 {
		t.Errorf("flow current hour = %+v, want total %d over 11 keys", cw, hourTotal)
	}
	// The list under a counter pattern has no TTL either: it is counted there too.
	if flow.TTL.NoTTL != 1 || flow.TTL.OK != 10 || snap.TTLHealth.NoTTL.Keys != 2 || snap.TTLHealth.WrongType.Keys != 1 {
		t.Errorf("flow ttl %+v, health %+v", flow.TTL, snap.TTLHealth)
	}
	if ex := flow.Health.NoTTL.Examples; len(ex) != 1 || ex[0].Key != format.Escape(leak) || strings.ContainsRune(out, 0x1b) {
		t.Errorf("no_ttl examples %+v; want the leak escaped, no raw escape in the output", ex)
	}
	if cw := snap.Family("ad_revenue").CurrentWindow("day"); cw == nil || cw.Total != 300 {
		t.Errorf("ad_revenue today = %+v, want 300", cw)
	}

	code, out, errOut = hg(t, "snapshot", "--config", path)
	if code != exitOK {
		t.Fatalf("snapshot: exit %d, %s", code, errOut)
	}
	for _, want := range []string{
		"scan: 14 keys seen, 13 in 3 counter families; complete",
		fmt.Sprintf("hour %s", store.WindowAt(store.Hour, now, time.UTC).Start.Format("2006010215")),
		`app\x1b[2J`, "no ttl                  2", "wrong type              1", "a list",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Error("a raw escape reached the report")
	}
}

func TestSnapshotErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, out, errOut := hg(t, "snapshot", "--addr", addr)
	if code != exitRuntime || out != "" || !strings.Contains(errOut, addr) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unreachable: exit %d, %q %q; want exit 1, one line", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[scan]\ncount = \"many\"\n"), 0o644)
	code, _, errOut = hg(t, "snapshot", "--config", bad)
	if code != exitUsage || !strings.Contains(errOut, bad+":2:") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad config: exit %d, %q; want exit 2 naming line 2", code, errOut)
	}
	code, _, errOut = hg(t, "snapshot", "--top", "0")
	if code != exitUsage {
		t.Errorf("--top 0: exit %d, %q", code, errOut)
	}
}

// TestSnapshotOfTheEmbeddedDemo runs with no address: the report shows demo data.
func TestSnapshotOfTheEmbeddedDemo(t *testing.T) {
	code, out, errOut := hg(t, "snapshot", "--json", "--keys-per-second", "0")
	if code != exitOK || !strings.Contains(errOut, "demo data") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Mode != "embedded" || len(snap.Counters) != 3 || snap.TTLHealth.NoTTL.Keys != 9 || snap.TTLHealth.OverRetention.Keys != 3 {
		t.Errorf("embedded snapshot: mode %q, %d families, health %+v", snap.Mode, len(snap.Counters), snap.TTLHealth)
	}
	for _, f := range snap.Counters {
		var sum int64
		for _, v := range f.Series.Hours {
			sum += v
		}
		if sum == 0 || (f.Reconciliation != nil && f.Reconciliation.Mismatched != 0) {
			t.Errorf("%s: hour series %v, reconciliation %+v", f.Family, f.Series.Hours, f.Reconciliation)
		}
	}
}

// TestRepair fixes a leak the way a sound writer would have set it, lists first in a dry run,
// and deletes a key past its expiry only when asked. What it leaves (a key past its expiry, one of
// another type, a string of the family's shape that holds text) is listed by reason with a count
// and examples, escaped, and stays as it was.
func TestRepair(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	path, cfg := utcConfig(t, srv.Addr)
	now := time.Now()
	leak := familyKey(t, cfg, "api_calls", store.Hour, now, "acme", "/v1/pay")
	rdb.IncrBy(ctx, leak, 3)
	old := familyKey(t, cfg, "flow", store.Hour, now.Add(-72*time.Hour), "app", "ios", "10.0.0.1") // past 48h
	rdb.IncrBy(ctx, old, 4)
	wrong := familyKey(t, cfg, "flow", store.Hour, now, "app", "ios", "10.0.0.2")
	rdb.SAdd(ctx, wrong, "x")
	fine := familyKey(t, cfg, "flow", store.Hour, now, "app", "ios", "10.0.0.3")
	rdb.Set(ctx, fine, 1, time.Hour)
	text := familyKey(t, cfg, "flow", store.Hour, now, "app", "\x1b[2J", "10.0.0.4")
	rdb.Set(ctx, text, "session=\x1b]0;pwned\x07", 0)

	code, _, errOut := hg(t, "repair", "--config", path)
	if code != exitUsage || !strings.Contains(errOut, "--allow-writes") {
		t.Fatalf("repair without --allow-writes: exit %d, %q", code, errOut)
	}
	code, out, errOut := hg(t, "repair", "--dry-run", "--config", path)
	escaped := strings.Replace(text, "\x1b", `\x1b`, 1)
	for _, want := range []string{"would expire  " + leak, "left as they are: 3 keys\n",
		"  past_expiry  1  past the instant they should have expired; --delete-expired deletes them\n      " + old + "  (expiry ",
		"  not_integer  1  strings that are not a 64-bit integer, so not counters hourglass writes\n      " + escaped + `  (holds "session=\x1b]0;pwned\x07")` + "\n",
		"  wrong_type  1  not strings, so not counters\n      " + wrong + "\n",
		"expiry_set=1 deleted=0 skipped_past_expiry=1 skipped_wrong_type=1 skipped_not_integer=1 skipped_changed=0 gone=0"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("dry run: exit %d, output lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("the dry run printed a control character:\n%q", out)
	}
	if rdb.TTL(ctx, leak).Val() != -1 {
		t.Fatal("a dry run wrote")
	}

	code, out, errOut = hg(t, "repair", "--allow-writes", "--config", path)
	if code != exitOK || !strings.Contains(out, "expiry_set=1 deleted=0 skipped_past_expiry=1") {
		t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
	}
	want := store.WindowAt(store.Hour, now, time.UTC).End.Add(7 * 24 * time.Hour) // api_calls keeps hours 7d
	if got := rdb.ExpireTime(ctx, leak).Val(); got != time.Duration(want.Unix())*time.Second {
		t.Errorf("repaired expiry at %v, want %v", time.Unix(int64(got/time.Second), 0), want)
	}
	if rdb.Exists(ctx, old).Val() != 1 || rdb.TTL(ctx, fine).Val() <= 0 || rdb.TTL(ctx, wrong).Val() != -1 || rdb.TTL(ctx, text).Val() != -1 {
		t.Error("repair touched a key it should have left")
	}

	code, out, _ = hg(t, "repair", "--allow-writes", "--delete-expired", "--config", path)
	if code != exitOK || !strings.Contains(out, "delete  "+old) || !strings.Contains(out, "expiry_set=0 deleted=1") {
		t.Fatalf("repair --delete-expired: exit %d\n%s", code, out)
	}
	if rdb.Exists(ctx, old).Val() != 0 || rdb.Get(ctx, fine).Val() != "1" {
		t.Error("--delete-expired did not delete the expired key, or deleted another")
	}
}

// TestRepairAsReadOnlyUser: Redis refuses the write, and repair says so in one line.
func TestRepairAsReadOnlyUser(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	path, cfg := utcConfig(t, srv.Addr)
	admin.IncrBy(ctx, familyKey(t, cfg, "flow", store.Hour, time.Now(), "a", "b", "c"), 1)
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">pw", "~*", "+@read", "+scan", "+time", "+hello", "+client", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	url := "redis://watcher:pw@" + srv.Addr
	code, out, errOut := hg(t, "repair", "--dry-run", "--config", path, "--addr", url)
	if code != exitOK || !strings.Contains(out, "expiry_set=1") {
		t.Fatalf("dry run as a read-only user: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = hg(t, "repair", "--allow-writes", "--config", path, "--addr", url)
	if code != exitRuntime || !strings.Contains(errOut, "NOPERM") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("repair as a read-only user: exit %d, %q %q; want exit 1 with NOPERM in one line", code, out, errOut)
	}
}

// TestInjectProfile runs the shipped steady profile against a real server: each structure gets
// its rate within 5%, every queued task is acknowledged, and a snapshot then reports them.
func TestInjectProfile(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	path, _ := utcConfig(t, srv.Addr)
	const seconds = 3
	code, out, errOut := hg(t, "inject", "--profile", "steady", "--duration", fmt.Sprint(seconds, "s"), "--allow-writes", "--config", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	lines, bloomAdded := 0, -1.0
	for _, line := range strings.Split(out, "\n") {
		f := parseSummary(t, line)
		target, ok := f["target/s"]
		if !ok {
			continue
		}
		lines++
		if strings.Contains(line, "bloom lookups:") {
			bloomAdded = f["added"]
		}
		if want := target * seconds; f["ops"] < want*0.95-1 || f["ops"] > want*1.05+1 {
			t.Errorf("%s: %v ops, want %v ± 5%%", strings.TrimSpace(line), f["ops"], want)
		}
	}
	if lines != 9 || bloomAdded <= 0 {
		t.Fatalf("%d structure lines, want 9, the Bloom filter's with its adds:\n%s", lines, out)
	}
	if n := rdb.ZCard(ctx, "delay:orders").Val() + rdb.ZCard(ctx, "{delay:orders}:inflight").Val(); n != 0 {
		t.Errorf("%d tasks left in the delay queue, want all acknowledged", n)
	}
	code, out, errOut = hg(t, "snapshot", "--json", "--config", path, "--keys-per-second", "0")
	if code != exitOK {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	lim := snap.Limiters[0]
	// On a real Redis the profile's hits use test users, and its decisions are counted apart, so
	// the real limiter's hourly counters stay unwritten: its decisions unknown, not 0.
	if lim.Keys == 0 || lim.Hits < 700 || lim.Allowed != nil || lim.Rejected != nil || len(snap.Uniques) != 2 || snap.Uniques[1].Union7d == nil || *snap.Uniques[1].Union7d == 0 ||
		snap.ListQueues[0].Length != 0 || snap.Locks[0].NoTTL != 0 {
		t.Errorf("snapshot after the profile: limiters %+v uniques %+v lists %+v locks %+v", snap.Limiters, snap.Uniques, snap.ListQueues, snap.Locks)
	}
	// The profile's ids went to a test filter, read whole: its adds are the profile's.
	if b := snap.Blooms; len(b) != 1 || len(b[0].Filters) != 1 || b[0].Filters[0].Key != "bf:hourglass-test-table0" ||
		b[0].Filters[0].Added == nil || float64(*b[0].Filters[0].Added) != bloomAdded || b[0].Filters[0].Elements == nil || !b[0].Filters[0].Elements.Exact() {
		t.Errorf("snapshot after the profile: blooms %+v, want the test filter with %v adds", snap.Blooms, bloomAdded)
	}
}

// TestInjectProfileSurvivesRedisGoingAway stops the server mid-profile: the command says which
// structures failed, in one line, and exits 1.
func TestInjectProfileSurvivesRedisGoingAway(t *testing.T) {
	srv := redistest.Start(t)
	path, _ := utcConfig(t, srv.Addr)
	rdb := srv.Client(t)
	go func() { // once the profile is writing, the server goes away
		redistest.Until(10*time.Second, func() bool { return rdb.DBSize(context.Background()).Val() > 0 })
		srv.Stop()
	}()
	code, out, errOut := hg(t, "inject", "--profile", "steady", "--duration", "5s", "--allow-writes", "--config", path)
	if code != exitRuntime || !strings.Contains(errOut, "inject profile steady:") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and one line", code, out, errOut)
	}
}

// TestTLS talks to a redis-server over TLS with a CA made in the test: verified with the CA file,
// refused without it, accepted by --insecure only when asked, and with a client certificate when
// the server demands one.
func TestTLS(t *testing.T) {
	certs := redistest.MakeCerts(t)
	srv, tlsAddr := redistest.StartTLS(t, certs, "optional")
	srv.Client(t).Set(t.Context(), familyKey(t, config.Builtin(redistest.Shipped(t)), "flow", store.Hour, time.Now(), "a", "b", "c"), 7, time.Hour)
	addr := "rediss://" + tlsAddr
	dir := t.TempDir()
	cfgWith := func(extra string) string {
		p := filepath.Join(dir, fmt.Sprint(len(extra), "tls.toml"))
		// A lock entry, so that the snapshot has something to watch and no warning that it has not.
		if err := os.WriteFile(p, []byte("[redis]\n"+extra+"[[lock]]\nname = \"l\"\npattern = \"lock:<id>\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	verified := cfgWith(fmt.Sprintf("name = \"tls-test\"\ntls_ca_file = %q\n", certs.CA))
	code, out, errOut := hg(t, "snapshot", "--json", "--addr", addr, "--config", verified, "--keys-per-second", "0")
	if code != exitOK || !strings.Contains(out, `"target": "tls-test (tls:127.0.0.1:`) {
		t.Fatalf("verified TLS: exit %d, %s %s", code, out[:min(len(out), 300)], errOut)
	}
	code, _, errOut = hg(t, "snapshot", "--addr", addr, "--config", cfgWith(""))
	if code != exitRuntime || !strings.Contains(errOut, "certificate") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("an unknown CA: exit %d, %q; want exit 1 naming the certificate", code, errOut)
	}
	if code, _, errOut = hg(t, "snapshot", "--addr", addr, "--config", cfgWith(""), "--insecure"); code != exitOK {
		t.Fatalf("--insecure: exit %d, %q", code, errOut)
	}
	if code, _, errOut = hg(t, "snapshot", "--addr", addr, "--config", cfgWith("tls_ca_file = \"/nonexistent/ca.pem\"\n")); code != exitUsage || !strings.Contains(errOut, ":2: redis.tls_ca_file") {
		t.Fatalf("a missing CA file: exit %d, %q", code, errOut)
	}

	// A server that demands a client certificate.
	_, mtlsAddr := redistest.StartTLS(t, certs, "yes")
	mtls := "rediss://" + mtlsAddr
	if code, _, errOut = hg(t, "snapshot", "--addr", mtls, "--config", verified); code != exitRuntime {
		t.Fatalf("no client certificate: exit %d, %q; want refused", code, errOut)
	}
	withCert := cfgWith(fmt.Sprintf("tls_ca_file = %q\ntls_cert_file = %q\ntls_key_file = %q\n", certs.CA, certs.ClientCert, certs.ClientKey))
	if code, _, errOut = hg(t, "snapshot", "--addr", mtls, "--config", withCert); code != exitOK {
		t.Fatalf("with a client certificate: exit %d, %q", code, errOut)
	}
}

// TestServeMetrics runs `hourglass serve` against a real server and scrapes it over loopback.
func TestServeMetrics(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	path, cfg := utcConfig(t, srv.Addr)
	now := redistest.ClearOfHourEnd(t, 30*time.Second)
	for i := range 4 {
		rdb.Set(t.Context(), familyKey(t, cfg, "flow", store.Hour, now, "app", "ios", fmt.Sprint("10.0.0.", i)), 10*(i+1), time.Hour)
	}
	rdb.Set(t.Context(), familyKey(t, cfg, "flow", store.Hour, now, "leak", "ios", "10.0.0.9"), 5, 0)
	rdb.ZAdd(t.Context(), "delay:orders", redis.Z{Score: float64(now.Add(-30 * time.Second).UnixMilli()), Member: "late"})

	running := startServe(t, "--config", path)
	want := []string{
		`hourglass_up 1`,
		`hourglass_family_window_value{family="flow",granularity="hour"} 105`,
		`hourglass_ttl_keys{family="flow",state="no_ttl"} 1`,
		`hourglass_delay_queue_tasks{key="delay:orders",queue="orders",state="due"} 1`,
		`hourglass_locks_held{lock="jobs"} 0`,
	}
	// Every series carries the target label: the rest is compared without it.
	untarget := strings.NewReplacer(`,target="`+srv.Addr+`"`, "", `{target="`+srv.Addr+`"}`, "")
	body := untarget.Replace(running.until(fmt.Sprintf("%q", want), 10*time.Second, func(body string) bool {
		if body != "" && !strings.Contains(body, `target="`+srv.Addr+`"`) {
			t.Fatalf("the series do not carry the target label:\n%s", body)
		}
		body = untarget.Replace(body)
		for _, w := range want {
			if !strings.Contains(body, w) {
				return false
			}
		}
		return true
	}))
	line := grepLine(body, "hourglass_delay_queue_lag_seconds")
	var lag float64
	if _, err := fmt.Sscanf(line[strings.LastIndexByte(line, ' ')+1:], "%g", &lag); err != nil || lag < 29 || lag > 120 {
		t.Errorf("lag line %q: want about 30 s", line)
	}
}

func grepLine(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// aclReadOnly and aclWrites are docs/production.md's ACL rules for a monitoring user and a writing one.
const (
	aclReadOnly = `on >PASSWORD resetkeys ~* resetchannels -@all +time +ping +hello +info +scan +type +pttl +ttl +get +mget +strlen +getrange +exists +zcard +zcount +zrange +zrangebyscore +llen +lindex +lrange +scard +smembers +sismember +sscan +hget +hmget +hlen +hexists +xlen +pfcount +bitcount +memory|usage +cluster|slots +cluster|shards +cluster|info +readonly +select`
	aclWrites   = aclReadOnly + ` +evalsha +eval +script|load +expireat +del +zadd +zrem +lpush +lmove +blmove +lrem +set +incr +incrby +pexpireat +pfadd +setbit +pexpire`
)

// TestLeastPrivilege runs hourglass as docs/production.md's read-only user: the snapshot works with
// nothing missing (the unclaimed keys of every type sampled, nothing refused), a write is refused
// by Redis and reported in one line, and a user without INFO loses only the server numbers, with a
// note, not the watch. The writing user can inject.
func TestLeastPrivilege(t *testing.T) {
	readme, err := os.ReadFile("../../docs/production.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{aclReadOnly, strings.TrimPrefix(aclWrites, aclReadOnly)} {
		if !strings.Contains(string(readme), strings.TrimSpace(rule)) {
			t.Fatalf("docs/production.md does not give the rule the test uses: %s", rule)
		}
	}
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	path, cfg := utcConfig(t, srv.Addr)
	admin.Set(ctx, familyKey(t, cfg, "flow", store.Hour, time.Now(), "a", "b", "c"), 5, 0) // a leak, for repair
	// Unclaimed keys of every type: the rule must let the sweep sample each.
	writeEveryType(t, admin)
	setUser := func(name, rule string) string {
		args := []any{"ACL", "SETUSER", name}
		for _, f := range strings.Fields(strings.ReplaceAll(rule, "PASSWORD", "pw-"+name)) {
			args = append(args, f)
		}
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("ACL SETUSER %s: %v", name, err)
		}
		return fmt.Sprintf("redis://%s:pw-%s@%s", name, name, srv.Addr)
	}
	ro := setUser("watcher", aclReadOnly)
	code, out, errOut := hg(t, "snapshot", "--json", "--config", path, "--addr", ro, "--keys-per-second", "0")
	var snap snapshot.Snapshot
	if code != exitOK || json.Unmarshal([]byte(out), &snap) != nil {
		t.Fatalf("snapshot as the read-only user: exit %d, %s", code, errOut)
	}
	if snap.TTLHealth.NoTTL.Keys != 1 || snap.TTLHealth.MemoryNote != "" || len(snap.Limiters) != 1 {
		t.Errorf("read-only snapshot: health %+v", snap.TTLHealth)
	}
	checkSampled(t, &snap)
	code, _, errOut = hg(t, "repair", "--allow-writes", "--config", path, "--addr", ro)
	if code != exitRuntime || !strings.Contains(errOut, "NOPERM") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("repair as the read-only user: exit %d, %q", code, errOut)
	}

	// No INFO: the watch goes on; only the server panel says what is missing.
	noInfo := setUser("blind", strings.Replace(aclReadOnly, " +info", "", 1))
	tg, err := store.ParseTarget([]string{noInfo}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rdb := tg.NewClient()
	defer rdb.Close()
	w := watch.New(rdb, cfg.Counters, scanner.Options{Structures: cfg.Structures})
	st, err := w.Poll(ctx, time.Second, "flow")
	if err != nil || st.Snapshot == nil || !strings.Contains(st.Server.Err, "INFO refused: NOPERM") {
		t.Fatalf("poll without INFO: err %v, snapshot %v, server %+v", err, st.Snapshot != nil, st.Server)
	}

	rw := setUser("writer", aclWrites)
	code, out, errOut = hg(t, "inject", "--config", path, "--addr", rw, "--allow-writes", "--events", "1000")
	if code != exitOK || parseSummary(t, out)["events"] != 1000 {
		t.Errorf("inject as the writing user: exit %d, %s %s", code, out, errOut)
	}
	code, out, errOut = hg(t, "repair", "--allow-writes", "--config", path, "--addr", rw)
	if code != exitOK || !strings.Contains(out, "expiry_set=1") {
		t.Errorf("repair as the writing user: exit %d, %s %s", code, out, errOut)
	}
}

// TestBenchJSON runs a small bench against a server of its own and checks the report's shape:
// every figure measured, the ratios computed from them.
func TestBenchJSON(t *testing.T) {
	redistest.Binary(t) // skips (or fails under CI) without redis-server
	code, out, errOut := hg(t, "bench", "--events", "2000", "--keys", "2000", "--load-for", "1s", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"sweep_vs_raw_scan", "zipf_events_per_script", "limiter_hits_per_sec", "delay_queue_claimed_acked_per_sec",
		"sweep_keys_per_sec", "raw_scan_keys_per_sec", "console_redis_cpu_percent"} {
		if v, ok := rep[k].(float64); !ok || (v <= 0 && k != "console_redis_cpu_percent") {
			t.Errorf("%s = %v", k, rep[k])
		}
	}
	if _, err := exec.LookPath("redis-benchmark"); err == nil {
		// Each ratio is its writer case (or go-redis alone) over redis-benchmark on as many
		// connections: cases 0 and 1 on one, 2 and 3 on four.
		writer, _ := rep["writer"].([]any)
		pairs := func(i int) float64 {
			if i >= len(writer) {
				t.Fatalf("%d writer cases, want at least %d", len(writer), i+1)
			}
			return writer[i].(map[string]any)["pairs_per_sec"].(float64)
		}
		rb1, _ := rep["redis_benchmark_pairs_per_sec"].(float64)
		rb4, _ := rep["redis_benchmark_c4_pairs_per_sec"].(float64)
		bare, _ := rep["bare_client_pairs_per_sec"].(float64)
		bare4, _ := rep["bare_client_c4_pairs_per_sec"].(float64)
		for k, want := range map[string]float64{
			"single_pair_vs_redis_benchmark":    pairs(0) / rb1,
			"writer_vs_redis_benchmark":         pairs(1) / rb1,
			"single_pair_vs_redis_benchmark_c4": pairs(2) / rb4,
			"writer_vs_redis_benchmark_c4":      pairs(3) / rb4,
			"bare_client_vs_redis_benchmark":    bare / rb1,
			"bare_client_vs_redis_benchmark_c4": bare4 / rb4,
		} {
			if got, ok := rep[k].(float64); !ok || got <= 0 || got != want {
				t.Errorf("%s = %v, want %v", k, rep[k], want)
			}
		}
	}
	if v, ok := rep["idle_redis_cpu_percent"].(float64); !ok || v < 0 {
		t.Errorf("idle_redis_cpu_percent = %v", rep["idle_redis_cpu_percent"])
	}
	if got, want := rep["sweep_vs_raw_scan"].(float64), rep["sweep_keys_per_sec"].(float64)/rep["raw_scan_keys_per_sec"].(float64); got != want {
		t.Errorf("sweep_vs_raw_scan %v is not sweep ÷ raw SCAN %v", got, want)
	}
	code, _, errOut = hg(t, "bench", "--addr", "127.0.0.1:1")
	if code != exitUsage || !strings.Contains(errOut, "--allow-writes") {
		t.Errorf("bench of a given Redis without --allow-writes: exit %d, %q", code, errOut)
	}

	// A given Redis keeps its own keys: bench deletes only what it wrote.
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	rdb.Set(t.Context(), "mine:keep", "1", 0)
	rdb.Set(t.Context(), "{benchmarks}:keep", "1", 0) // close to bench's names, yet not bench's
	code, _, errOut = hg(t, "bench", "--addr", srv.Addr, "--allow-writes", "--events", "2000", "--keys", "2000", "--load-for", "1s", "--json")
	if code != exitOK {
		t.Fatalf("bench --addr: exit %d, %s", code, errOut)
	}
	if rdb.Exists(t.Context(), "mine:keep", "{benchmarks}:keep").Val() != 2 {
		t.Fatal("bench deleted a key that was not its own")
	}
	for _, match := range []string{"bench:*", "{bench:*"} {
		if keys, _, _ := rdb.Scan(t.Context(), 0, match, 10_000).Result(); len(keys) != 0 {
			t.Errorf("bench left %d keys matching %s, e.g. %q", len(keys), match, keys[0])
		}
	}
}
