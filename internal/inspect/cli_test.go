package inspect

import (
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// hostileKeys are key names an operator's Redis may hold: escape sequences, newlines, quotes,
// shell syntax, bidi overrides, binary, a NUL, UTF-8.
var hostileKeys = []string{
	"plain:key-1",
	"",
	"with space",
	"it's",
	"\x1b[31mred\x1b[0m\nnext line",
	"$(touch /tmp/pwned) `id` $HOME !x *",
	"ключ:日本",
	"evil\u202etxt.exe",
	"bin:\xff\xfe\x80",
	"nul:a\x00b",
	"back\\slash\\x41",
	"\x1b]0;title\x07'\"",
}

// TestRedisCLIReadsTheExactKey runs the command RedisCLI writes through bash, with the redis-cli
// of the system, for each hostile key: it reads that key's value and no other, as the user the
// client logs in as, with the password from REDISCLI_AUTH only. The line itself holds no control
// byte or unprintable character.
func TestRedisCLIReadsTheExactKey(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	bash, berr := exec.LookPath("bash")
	if err != nil || berr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-cli and bash are needed: %v %v", err, berr)
		}
		t.Skip("redis-cli or bash is not installed")
	}
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">s3cret pw", "~*", "+@read").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "s3cret pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	w := watching(rdb, nil, scanner.Options{})
	for i, k := range hostileKeys {
		admin.Set(ctx, k, "value-"+string(rune('a'+i)), 0)
	}
	for i, k := range hostileKeys {
		line := w.RedisCLI("GET", k)
		if strings.Contains(line, "s3cret") || !strings.Contains(line, "--user reader") {
			t.Fatalf("%q: %s", k, line)
		}
		for _, r := range line {
			if r == utf8.RuneError || !unicode.IsPrint(r) {
				t.Errorf("%q: the line holds %U: %q", k, r, line)
			}
		}
		cmd := exec.CommandContext(ctx, bash, "-c", strings.Replace(line, "redis-cli", cli, 1))
		cmd.Env = append(os.Environ(), "REDISCLI_AUTH=s3cret pw")
		out, err := cmd.CombinedOutput()
		if want := "value-" + string(rune('a'+i)) + "\n"; err != nil || string(out) != want {
			t.Errorf("%q: %s\nread %q (%v), want %q", k, line, out, err, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":             "''",
		"flow:1.2/a-b": "flow:1.2/a-b",
		"a b":          "'a b'",
		"it's":         `'it'\''s'`,
		"ключ":         "'ключ'",
		"\x1b[1m":      `$'\x1b[1m'`,
		"a'\\\n":       `$'a\'\\\x0a'`,
		"\xffé":        `$'\xffé'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestRedisCLITarget: a cluster gets -c and its first address, TLS --tls, a database -n.
func TestRedisCLITarget(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"[::1]:7000", "10.0.0.2:7001"}})
	t.Cleanup(func() { _ = cc.Close() })
	if got := watching(cc, nil, scanner.Options{}).RedisCLI("GET", "k"); got != "redis-cli -h ::1 -p 7000 -c GET k" {
		t.Errorf("cluster: %s", got)
	}
	c := redis.NewClient(&redis.Options{Addr: "db.example:6380", DB: 3, Username: "ops team", TLSConfig: &tls.Config{ServerName: "db.example"}})
	t.Cleanup(func() { _ = c.Close() })
	if got := watching(c, nil, scanner.Options{}).RedisCLI("PTTL", "k"); got != "redis-cli -h db.example -p 6380 -n 3 --user 'ops team' --tls PTTL k" {
		t.Errorf("tls: %s", got)
	}
}

// Through Sentinel the command names the primary the client's connections reach.
func TestRedisCLITargetThroughSentinel(t *testing.T) {
	s := redistest.StartSentinels(t, 0, 1, "")
	tg, err := store.ParseTarget([]string{"redis-sentinel://" + s.Addrs[0] + "/" + s.Master}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rdb := tg.NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(s.Primary(t))
	if got, want := watching(rdb, nil, scanner.Options{}).RedisCLI("GET", "k"), "redis-cli -h "+host+" -p "+port+" GET k"; got != want {
		t.Errorf("through Sentinel: %s, want %s", got, want)
	}
}
