package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// sentinelURL is the redis-sentinel:// address of s's Sentinels and master name.
func sentinelURL(s *redistest.Sentinels, master string) string {
	return "redis-sentinel://" + strings.Join(s.Addrs, ",") + "/" + master
}

// oneLine fails the test unless a command ended with exit code want within the liveness bound,
// on one line of stderr saying says, and returns that line.
func oneLine(t *testing.T, args []string, want int, says string) string {
	t.Helper()
	start := time.Now()
	code, _, errOut := hgInferred(t, args...)
	took := time.Since(start)
	if code != want || !strings.Contains(errOut, says) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("%v: exit %d, %q; want exit %d and one line saying %q", args, code, errOut, want, says)
	}
	if took > 50*time.Second { // the documented figure is 5 s: Open's time to connect
		t.Errorf("%v took %v", args, took)
	}
	return errOut
}

// The mistakes a Sentinel address can hold, each one line: no master name and a master name no
// Sentinel knows are usage errors (exit 2); Sentinels that refuse our credentials, or none that
// answers, a runtime failure (exit 1), within seconds, naming the Sentinel.
func TestSentinelMistakes(t *testing.T) {
	s := redistest.StartSentinels(t, 1, 3, "sentinel-secret")
	oneLine(t, []string{"snapshot", "--addr", "redis-sentinel://127.0.0.1:26379"}, exitUsage, "no master name")
	oneLine(t, []string{"snapshot", "--addr", "redis-sentinel://127.0.0.1:26379,127.0.0.1/m"}, exitUsage, `Sentinel "127.0.0.1": want host:port`)
	refused := redistest.RefusedAddr(t)
	oneLine(t, []string{"snapshot", "--addr", "redis-sentinel://" + refused + "/" + s.Master}, exitRuntime,
		"no Sentinel answers: "+refused+": connect: connection refused")
	// No password for Sentinels that need one, then a wrong one, then the right one.
	oneLine(t, []string{"snapshot", "--addr", sentinelURL(s, s.Master)}, exitRuntime, "refused our credentials: NOAUTH")
	conf := func(env string) string { // the shipped config, its [redis] table naming the Sentinels
		path := filepath.Join(t.TempDir(), "sentinel.toml")
		keys := "sentinel_master = " + strconv.Quote(s.Master) + "\nsentinel_addrs = [" + strconv.Quote(s.Addrs[0]) + ", " +
			strconv.Quote(s.Addrs[1]) + "]\nsentinel_password_env = " + strconv.Quote(env) + "\n"
		text := strings.Replace(string(redistest.Shipped(t)), "\n[redis]\n", "\n[redis]\n"+keys, 1)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Setenv("HG_TEST_SENTINEL_WRONG", "not-it")
	t.Setenv("HG_TEST_SENTINEL_RIGHT", "sentinel-secret")
	oneLine(t, []string{"snapshot", "--config", conf("HG_TEST_SENTINEL_WRONG")}, exitRuntime, "refused our credentials: WRONGPASS")
	code, out, errOut := hgInferred(t, "snapshot", "--config", conf("HG_TEST_SENTINEL_RIGHT"))
	if code != exitOK || !strings.Contains(out, "sentinel master "+s.Master) {
		t.Errorf("the right Sentinel password: exit %d, %q %q", code, out, errOut)
	}
	// The master name, asked of Sentinels that know another, through --addr with the file's
	// Sentinel password.
	oneLine(t, []string{"snapshot", "--config", conf("HG_TEST_SENTINEL_RIGHT"), "--addr", sentinelURL(s, "nosuch")}, exitUsage,
		`no Sentinel knows the master name "nosuch"`)
}

// Config mistakes in the Sentinel keys name their file and line, and exit 2.
func TestSentinelConfigMistakes(t *testing.T) {
	for _, c := range []struct{ text, says string }{
		{"[redis]\nsentinel_master = \"m\"\n", "2: redis.sentinel_master: needs sentinel_addrs"},
		{"[redis]\nsentinel_addrs = [\"127.0.0.1:26379\"]\n", "2: redis.sentinel_addrs: needs sentinel_master"},
		{"[redis]\naddrs = [\"127.0.0.1:6379\"]\nsentinel_master = \"m\"\nsentinel_addrs = [\"127.0.0.1:26379\"]\n", "3: redis.sentinel_master: and addrs both"},
		{"[redis]\nsentinel_master = \"m\"\nsentinel_addrs = [\"127.0.0.1\"]\n", "3: redis.sentinel_addrs: bad Sentinel address"},
		{"[redis]\nsentinel_master = \"\"\n", "2: redis.sentinel_master: is empty"},
		{"[redis]\nsentinel_master = \"m\"\nsentinel_addrs = [\"127.0.0.1:26379\"]\nsentinel_password_env = \"no way\"\n", "4: redis.sentinel_password_env"},
	} {
		path := filepath.Join(t.TempDir(), "bad.toml")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		oneLine(t, []string{"snapshot", "--config", path}, exitUsage, path+":"+c.says)
	}
}

// serve through Sentinel keeps exporting across a failover: every scrape answers, and a sweep
// completes on the new primary.
func TestServeThroughFailover(t *testing.T) {
	s := redistest.StartSentinels(t, 2, 3, "")
	sv := startServe(t, "--addr", sentinelURL(s, s.Master))
	age := regexp.MustCompile(`(?m)^hourglass_last_complete_sweep_age_seconds\{[^}]*\} (\S+)$`)
	up := regexp.MustCompile(`(?m)^hourglass_up\{[^}]*\} 1$`)
	swept := func(body string) bool { return up.MatchString(body) && age.MatchString(body) }
	sv.until("a complete sweep", 20*time.Second, swept)
	moved := s.Failover(t)
	failed := time.Now()
	sv.until("a sweep completed on "+moved, 30*time.Second, func(body string) bool {
		if !swept(body) {
			return false
		}
		secs, err := strconv.ParseFloat(age.FindStringSubmatch(body)[1], 64)
		return err == nil && time.Duration(secs*float64(time.Second)) < time.Since(failed)
	})
	if strings.Contains(sv.errOut.String(), "\n\n") {
		t.Errorf("serve's stderr: %q", sv.errOut.String())
	}
}

// aclSentinel is docs/production.md's ACL rule for the user hourglass logs in to the Sentinels
// as.
const aclSentinel = `on >PASSWORD resetchannels &+switch-master &+replica-reconf-done -@all +ping +hello +sentinel|get-master-addr-by-name +sentinel|sentinels +subscribe`

// The Sentinels' user needs no more than docs/production.md's rule: serve runs through a
// failover as that user, and no Sentinel's ACL LOG holds a refusal.
func TestSentinelLeastPrivilege(t *testing.T) {
	doc, err := os.ReadFile("../../docs/production.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), aclSentinel) {
		t.Fatalf("docs/production.md does not give the rule the test uses: %s", aclSentinel)
	}
	s := redistest.StartSentinels(t, 1, 3, "")
	for _, addr := range s.Addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		args := []any{"ACL", "SETUSER", "hg-sentinel"}
		for _, f := range strings.Fields(strings.ReplaceAll(aclSentinel, "PASSWORD", "pw-sentinel")) {
			args = append(args, f)
		}
		if err := c.Do(t.Context(), args...).Err(); err != nil {
			t.Fatalf("ACL SETUSER on Sentinel %s: %v", addr, err)
		}
		c.Close()
	}
	path := filepath.Join(t.TempDir(), "sentinel.toml")
	quoted := make([]string, len(s.Addrs))
	for i, a := range s.Addrs {
		quoted[i] = strconv.Quote(a)
	}
	keys := "sentinel_master = " + strconv.Quote(s.Master) + "\nsentinel_addrs = [" + strings.Join(quoted, ", ") +
		"]\nsentinel_username = \"hg-sentinel\"\nsentinel_password_env = \"HG_TEST_SENTINEL_PW\"\n"
	text := strings.Replace(string(redistest.Shipped(t)), "\n[redis]\n", "\n[redis]\n"+keys, 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HG_TEST_SENTINEL_PW", "pw-sentinel")
	sv := startServe(t, "--config", path)
	age := regexp.MustCompile(`(?m)^hourglass_last_complete_sweep_age_seconds\{[^}]*\} (\S+)$`)
	sv.until("a complete sweep", 20*time.Second, func(body string) bool { return age.MatchString(body) })
	moved := s.Failover(t)
	failed := time.Now()
	sv.until("a sweep completed on "+moved, 30*time.Second, func(body string) bool {
		m := age.FindStringSubmatch(body)
		if m == nil {
			return false
		}
		secs, err := strconv.ParseFloat(m[1], 64)
		return err == nil && time.Duration(secs*float64(time.Second)) < time.Since(failed)
	})
	for _, addr := range s.Addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		entries, err := c.Do(t.Context(), "ACL", "LOG").Slice()
		c.Close()
		if err != nil || len(entries) != 0 {
			t.Errorf("Sentinel %s's ACL LOG: %v %v", addr, entries, err)
		}
	}
}

// Sentinels that name different primaries for the master name are asked again, then the
// command ends on one line saying which Sentinel names which primary.
func TestSentinelsThatDisagree(t *testing.T) {
	a, b := redistest.StartSentinels(t, 0, 1, ""), redistest.StartSentinels(t, 0, 1, "")
	url := "redis-sentinel://" + a.Addrs[0] + "," + b.Addrs[0] + "/" + a.Master
	errOut := oneLine(t, []string{"snapshot", "--addr", url}, exitRuntime, `the Sentinels disagree on the primary of "`+a.Master+`": `)
	for _, s := range []*redistest.Sentinels{a, b} {
		if !strings.Contains(errOut, s.Addrs[0]+" name "+s.Primary(t)) {
			t.Errorf("%q does not say that %s names %s", errOut, s.Addrs[0], s.Primary(t))
		}
	}
}
