package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// consoleModules are the console's dependencies: a service that imports store must build
// without any of them.
var consoleModules = []string{
	"charm.land/",                    // Bubble Tea, Lip Gloss, bubbles
	"github.com/charmbracelet/",      // their terminal packages
	"github.com/alicebob/miniredis/", // the embedded Redis
	"github.com/prometheus/",         // metrics
	"github.com/BurntSushi/toml",     // the config file
	"github.com/hibiken/asynq",       // the job libraries' readers (store/jobs)
	"google.golang.org/protobuf",     // asynq's worker records
}

// goTool runs the go command in dir, outside this module's workspace, and returns its stdout.
func goTool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is not on PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return stdout.String()
}

// TestServiceModuleUsesStore: a module outside the tree (testdata/service, with a replace to this
// checkout, as a service that ran `go get` has) builds with store alone, pulls in none of the
// console's dependencies, and counts page views into a real redis-server, in window-aligned keys.
func TestServiceModuleUsesStore(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(goTool(t, dir, "list", "-deps", ".")) {
		for _, console := range consoleModules {
			if strings.HasPrefix(dep, console) {
				t.Errorf("a service importing store builds %s, one of the console's dependencies", dep)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "pageviews")
	goTool(t, dir, "build", "-o", bin, ".")

	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	redistest.ClearOfHourEnd(t, 2*time.Minute)
	out, err := exec.Command(bin, srv.Addr, "1234").CombinedOutput()
	if err != nil {
		t.Fatalf("pageviews: %v\n%s", err, out)
	}

	// The keys, their values and their expiry, read apart from the store.
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	hourStart := now.UTC().Truncate(time.Hour)
	dayStart := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	for _, k := range []struct {
		key    string
		expiry time.Time // the window's end plus its retention
	}{
		{"pv:home:" + hourStart.Format("2006010215"), hourStart.Add(time.Hour + 48*time.Hour)},
		{"pv:home:" + dayStart.Format("20060102"), dayStart.AddDate(0, 0, 1).Add(30 * 24 * time.Hour)},
	} {
		if v, err := rdb.Get(t.Context(), k.key).Int64(); err != nil || v != 1234 {
			t.Errorf("GET %s = %d, %v; want 1234", k.key, v, err)
		}
		at, err := rdb.PExpireTime(t.Context(), k.key).Result()
		if err != nil || at != time.Duration(k.expiry.UnixMilli())*time.Millisecond {
			t.Errorf("PEXPIRETIME %s = %v, %v; want %v (%s)", k.key, at, err, k.expiry.UnixMilli(), k.expiry)
		}
	}
	if want := "pv:home:" + hourStart.Format("2006010215") + " 1234"; strings.TrimSpace(string(out)) != want {
		t.Errorf("pageviews printed %q; want %q", out, want)
	}
}
