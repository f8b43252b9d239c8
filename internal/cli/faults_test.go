package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// A user refused SCAN ends snapshot and discover with one line naming the command, the user and
// the cause, and exit 1: a refusal is not waited out. Redis itself counts the SCANs it refused:
// each command is refused once, never tried again. The docs promise a second; the bound here is ten
// times that, a liveness bound.
func TestOneShotCommandsEndOnARefusal(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "noscan", "on", ">pw", "~*", "+@all", "-scan").Err(); err != nil {
		t.Fatal(err)
	}
	denied := func() int {
		info, err := admin.Info(t.Context(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`cmdstat_scan:.*rejected_calls=(\d+)`).FindStringSubmatch(info)
		if m == nil {
			return 0 // SCAN not seen yet
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	addr := "redis://noscan:pw@" + srv.Addr
	for _, cmd := range []string{"snapshot", "discover"} {
		before := denied()
		start := time.Now()
		code, _, errOut := hg(t, cmd, "--addr", addr)
		took := time.Since(start)
		if code != exitRuntime || took > 10*time.Second || strings.Count(errOut, "\n") != 1 ||
			!strings.Contains(errOut, `SCAN as user "noscan"`) || !strings.Contains(errOut, "NOPERM") {
			t.Errorf("%s: exit %d after %v, %q; want exit 1 (within 10 s), one line naming SCAN and the user", cmd, code, took, errOut)
		}
		if n := denied() - before; n != 1 {
			t.Errorf("%s: Redis refused %d SCANs; want the one refusal, not tried again", cmd, n)
		}
	}
}

// runWithOutage runs the command line while srv goes down once its sweep is under way, and comes
// back (its data kept) once the command says it is trying again. "Under way" is a second SCAN: at
// the tests' budget of 600 keys/s and COUNT 100 it comes about 170 ms after the first, whose page
// was read and counted in that time, so the outage always falls after a page was counted.
func runWithOutage(t *testing.T, srv *redistest.Server, persist []string, args ...string) (code int, stdout, stderr string) {
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	if err := admin.ConfigResetStat(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	ran := make(chan int, 1)
	go func() { ran <- Run(t.Context(), redistest.Shipped(t), args, &out, &errOut) }()
	waitFor(t, "the sweep to begin", func() bool {
		stats, err := admin.Info(t.Context(), "commandstats").Result()
		m := scanCalls.FindStringSubmatch(stats)
		return err == nil && m != nil && m[1] != "1"
	})
	srv.Stop()
	waitFor(t, "the command to say it is trying again", func() bool { return strings.Contains(errOut.String(), "trying again in") })
	srv.Restart(t, persist...)
	return <-ran, out.String(), errOut.String()
}

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, what, 20*time.Second, cond)
}

// An outage in the middle of a snapshot or a discover is waited out: the fault is shown while it
// lasts, the sweep resumes, and every key is counted.
func TestOneShotCommandsRideOutAnOutage(t *testing.T) {
	persist := []string{"--appendonly", "yes", "--appendfsync", "always"}
	srv := redistest.Start(t, persist...)
	path, cfg := utcConfig(t, srv.Addr)
	setScanCount(t, path, 100)
	now := time.Now()
	pipe := srv.Client(t).Pipeline()
	const n = 1500
	for i := range n {
		k := familyKey(t, cfg, "flow", store.Hour, now, "app", "ios", fmt.Sprint("10.0.", i/250, ".", i%250))
		pipe.Set(t.Context(), k, "2", 47*time.Hour)
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runWithOutage(t, srv, persist, "snapshot", "--json", "--config", path, "--keys-per-second", "600")
	if code != exitOK {
		t.Fatalf("snapshot across an outage: exit %d, stderr %q", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	if f := snap.Family("flow"); f == nil || f.Keys != n {
		t.Errorf("after the outage the snapshot counted %+v flow keys, want %d", f, n)
	}

	code, out, errOut = runWithOutage(t, srv, persist, "discover", "--config", path, "--keys-per-second", "600")
	if code != exitOK {
		t.Errorf("discover across an outage: exit %d, stderr %q, out %q", code, errOut, out)
	}

	// repair cannot start its writes over: it says the server restarted and to run it again.
	code, _, errOut = runWithOutage(t, srv, persist, "repair", "--dry-run", "--config", path, "--keys-per-second", "600")
	if code != exitRuntime || !strings.Contains(errOut, "trying again in") || !strings.Contains(errOut, "restarted during the sweep") ||
		!strings.Contains(errOut, "run repair again") {
		t.Errorf("repair across an outage: exit %d, stderr %q", code, errOut)
	}
}

// setScanCount sets the [scan] count of the config file at path.
func setScanCount(t *testing.T, path string, count int) {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(body), "count = 1000", "count = "+strconv.Itoa(count), 1)
	if changed == string(body) {
		t.Fatal("the shipped config has no [scan] count = 1000 to change")
	}
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
}
