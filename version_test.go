package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersion builds the binary as a user does in a checkout, with version control information,
// and checks that `hourglass version` and `hourglass --version` print the revision git has
// checked out, whether the tree has uncommitted changes, and the Go release that built it.
func TestVersion(t *testing.T) {
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: %v", tool, err)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	head := run("git", "rev-parse", "HEAD")
	dirty := run("git", "status", "--porcelain") != ""
	goVersion := run("go", "env", "GOVERSION")
	bin := filepath.Join(t.TempDir(), "hourglass")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, arg := range []string{"version", "--version"} {
		out := run(bin, arg)
		lines := strings.Split(out, "\n")
		if len(lines) != 3 {
			t.Fatalf("hourglass %s printed %d lines, want 3:\n%s", arg, len(lines), out)
		}
		// A tagged commit reads "v1.2.3"; any other "v0.0.0-<time>-<revision>" (Go's pseudo-version).
		if !strings.HasPrefix(lines[0], "hourglass v") {
			t.Errorf("hourglass %s: version line %q does not name a version", arg, lines[0])
		}
		if !strings.HasPrefix(lines[1], "revision  "+head+" (committed ") {
			t.Errorf("hourglass %s: revision line %q, want revision %s with its commit time", arg, lines[1], head)
		}
		if got := strings.Contains(lines[1], "with uncommitted changes"); got != dirty {
			t.Errorf("hourglass %s: revision line %q says uncommitted changes %v; git status says %v", arg, lines[1], got, dirty)
		}
		if want := "go        " + goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH; lines[2] != want {
			t.Errorf("hourglass %s: go line %q, want %q", arg, lines[2], want)
		}
	}
}

// TestVersionWithoutVCS: a binary built without version control information (go run, a build
// outside a checkout) says that it has no revision rather than printing an empty one.
func TestVersionWithoutVCS(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hourglass")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "hourglass (devel): no release version recorded\nrevision  unknown: built without version control information\n"
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("hourglass version without VCS information:\n%s\nwant it to begin\n%s", out, want)
	}
}
