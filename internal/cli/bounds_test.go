package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestNumericFlagsAreBounded: every numeric flag of snapshot, serve, the console, discover,
// repair and bench refuses NaN, infinities, negatives and absurd values before anything starts,
// with exit 2 and one line naming the command, the flag and the value, and without dialling the
// Redis address given. (The old code ran `snapshot --top 1000000000` and `--demo-rate 1e300`,
// and bench with any --load-for.)
func TestNumericFlagsAreBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // liveness: a flag let through would start a run
	defer cancel()
	standIn := newDialCounter(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"snapshot", "--top", "0"}, "snapshot: --top 0 must be at least 1"},
		{[]string{"snapshot", "--top", "1000000000"}, "snapshot: --top 1000000000 must be at most 1,000"},
		{[]string{"snapshot", "--examples", "-3"}, "snapshot: --examples -3 must be at least 1"},
		{[]string{"snapshot", "--examples", "101"}, "snapshot: --examples 101 must be at most 100"},
		{[]string{"snapshot", "--keys-per-second", "-1"}, "snapshot: --keys-per-second -1 must not be negative"},
		{[]string{"snapshot", "--keys-per-second", "20000000"}, "snapshot: --keys-per-second 20000000 must be at most 10,000,000"},
		{[]string{"snapshot", "--keys-per-second", "1e9"}, "snapshot: --keys-per-second 1e9 is not a whole number"},
		{[]string{"snapshot", "--keys-per-second", "99999999999999999999"}, "is far too large"},
		{[]string{"discover", "--keys-per-second", "NaN"}, "discover: --keys-per-second NaN is not a whole number"},
		{[]string{"repair", "--dry-run", "--keys-per-second", "100000000"}, "repair: --keys-per-second 100000000 must be at most 10,000,000"},
		{[]string{"--demo-rate", "NaN"}, "--demo-rate NaN is not a finite number"},
		{[]string{"--demo-rate", "Inf"}, "--demo-rate Inf is not a finite number"},
		{[]string{"--demo-rate", "-Inf"}, "--demo-rate -Inf is not a finite number"},
		{[]string{"--demo-rate", "1e300"}, "--demo-rate 1e300 must be at most 100,000"},
		{[]string{"--demo-rate", "1e999"}, "--demo-rate 1e999 is not a finite number"},
		{[]string{"--demo-rate", "-0.5"}, "--demo-rate -0.5 must not be negative"},
		{[]string{"bench", "--events", "10"}, "bench: --events 10 must be at least 1,000"},
		{[]string{"bench", "--events", "1000000000000"}, "bench: --events 1000000000000 must be at most 100,000,000"},
		{[]string{"bench", "--keys", "-1"}, "bench: --keys -1 must be at least 1,000"},
		{[]string{"bench", "--keys", "100000000"}, "bench: --keys 100000000 must be at most 10,000,000"},
		{[]string{"bench", "--load-for", "-1s"}, "bench: --load-for -1s must be at least 1s"},
		{[]string{"bench", "--load-for", "100h"}, "bench: --load-for 100h must be at most 1h0m0s"},
		{[]string{"bench", "--load-for", "soon"}, "bench: --load-for soon is not a duration"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append(append([]string{}, c.args...), "--addr", standIn.addr)
			code, out, errOut, took := hgWithin(t, ctx, args...)
			if code != exitUsage || errOut != "hourglass: "+c.want+"\n" && !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 saying %q", code, errOut, c.want)
			}
			if strings.Count(errOut, "\n") != 1 || out != "" {
				t.Errorf("want one line on stderr and nothing else; got %q and stdout %q", errOut, out)
			}
			if n := standIn.othersSince(); n != 0 {
				t.Errorf("dialled Redis %d times (after %v) before refusing the flag", n, took)
			}
		})
	}
	// The bounds themselves are accepted: --help shows the range, and a flag at its bound parses.
	code, out, _ := hg(t, "snapshot", "--top", "1000", "--examples", "100", "--keys-per-second", "10000000", "--help")
	if code != exitOK || !strings.Contains(out, "from 1 to 1,000") {
		t.Fatalf("snapshot --help at the bounds: exit %d\n%s", code, out)
	}
}

// TestConfigFilesThatSayNothing: an empty config file (or one of comments only) is refused at its
// line 1, exit 2, where it used to load as zero families without a word; one behind a UTF-8 byte
// order mark loads as without it; a file over 1 MiB is refused before it is parsed; one with settings but no
// entry gives a snapshot a warning that nothing is watched.
func TestConfigFilesThatSayNothing(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.toml", []byte("# to be filled in\n\n"))
	for _, args := range [][]string{
		{"snapshot", "--config", empty, "--addr", srv.Addr},
		{"--config", empty, "--addr", srv.Addr},
		{"discover", "--config", empty, "--addr", srv.Addr},
		{"repair", "--dry-run", "--config", empty, "--addr", srv.Addr},
	} {
		code, _, errOut := hg(t, args...)
		if code != exitUsage || errOut != "hourglass: "+empty+":1: the file is empty (no table or key, only blank lines or comments): "+
			"write the entries to watch in it (hourglass discover proposes them), or use another file\n" {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %s:1", args[0], code, errOut, empty)
		}
	}

	withBOM := write("bom.toml", append([]byte("\xef\xbb\xbf"), redistest.Shipped(t)...))
	code, out, errOut := hg(t, "snapshot", "--json", "--config", withBOM, "--addr", srv.Addr, "--keys-per-second", "0")
	if code != exitOK || !strings.Contains(out, `"family": "ad_revenue"`) || errOut != "" {
		t.Fatalf("a config behind a byte order mark: exit %d, stderr %q\n%.300s", code, errOut, out)
	}

	big := write("big.toml", []byte(strings.Repeat("# "+strings.Repeat("x", 97)+"\n", 100_000)))
	code, _, errOut, took := hgWithin(t, t.Context(), "snapshot", "--config", big, "--addr", srv.Addr)
	// 10 s: a liveness bound, ten times the second the docs promise loading ends in.
	if code != exitUsage || errOut != "hourglass: "+big+": the file is larger than 1 MiB (1,048,576 bytes), the limit of a config file: is it the right file?\n" || took > 10*time.Second {
		t.Fatalf("a 10 MB config: exit %d after %v, %q", code, took, errOut)
	}

	bare := write("bare.toml", []byte("[scan]\ncount = 500\n"))
	code, _, errOut = hg(t, "snapshot", "--config", bare, "--addr", srv.Addr, "--keys-per-second", "0")
	if code != exitOK || errOut != "hourglass: warning: "+bare+" declares no entry ([[counter]], queues, limiters, uniques, locks or job queues): "+
		"nothing is watched and every key counts as unclaimed; hourglass discover proposes entries\n" {
		t.Fatalf("a config with no entry: exit %d, %q; want one warning", code, errOut)
	}
	code, _, errOut = hg(t, "discover", "--config", bare, "--addr", srv.Addr, "--keys-per-second", "0")
	if code != exitOK || strings.Contains(errOut, "warning") {
		t.Fatalf("discover, whose config needs no entry: exit %d, %q", code, errOut)
	}
}

// TestEmptyPasswordVariableIsRefused: a password_env naming a variable that is set but empty (or
// not set) would send no AUTH at all; the command refuses, naming the variable, exit 2.
func TestEmptyPasswordVariableIsRefused(t *testing.T) {
	srv := redistest.Start(t)
	path := filepath.Join(t.TempDir(), "auth.toml")
	body := "[redis]\npassword_env = \"HG_TEST_PASSWORD\"\n[[counter]]\nname = \"a\"\npattern = \"a:<window>\"\nday_format = \"yyyyMMdd\"\nday_retention = \"1d\"\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HG_TEST_PASSWORD", "")
	code, _, errOut := hg(t, "snapshot", "--config", path, "--addr", srv.Addr)
	if code != exitUsage || errOut != "hourglass: "+path+":2: redis.password_env: names HG_TEST_PASSWORD, which is set but empty, so no password would be sent\n" {
		t.Fatalf("set but empty: exit %d, %q", code, errOut)
	}
	os.Unsetenv("HG_TEST_PASSWORD")
	code, _, errOut = hg(t, "snapshot", "--config", path, "--addr", srv.Addr)
	if code != exitUsage || errOut != "hourglass: "+path+":2: redis.password_env: names HG_TEST_PASSWORD, which is not set\n" {
		t.Fatalf("unset: exit %d, %q", code, errOut)
	}
}
