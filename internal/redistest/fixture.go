package redistest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The job libraries' and limiters' fixtures are small programs in the library's own language
// that write to a redis-server with the library itself and print, as JSON, what the library's
// own inspection API then reports. Interpreters come from Debian packages (python3-rq,
// python3-celery, python3-limits, ruby-sidekiq) and npm (store/testdata/node); a missing one
// skips the test, except under CI=true, where it fails it.

// Interpreter returns the path of an interpreter that can load every module in mods (Python
// modules for python3, Ruby libraries for ruby, packages under store/testdata/node for node).
// Python is Debian's /usr/bin/python3, where the python3-* packages install.
func Interpreter(t testing.TB, name string, mods ...string) string {
	t.Helper()
	path, err := lookInterpreter(name)
	if err == nil {
		err = canLoad(path, name, mods)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s with %v is not installed, and CI needs it: %v", name, mods, err)
		}
		t.Skipf("%s with %v is not installed (.ci/run installs it): %v", name, mods, err)
	}
	return path
}

func lookInterpreter(name string) (string, error) {
	if name == "python3" {
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			return "/usr/bin/python3", nil
		}
	}
	return exec.LookPath(name)
}

// canLoad runs the interpreter once to load mods.
func canLoad(path, name string, mods []string) error {
	var args []string
	switch name {
	case "python3":
		args = []string{"-c", "import " + strings.Join(mods, ", ")}
	case "ruby":
		for _, m := range mods {
			args = append(args, "-r"+m)
		}
		args = append(args, "-e", "0")
	case "node":
		script := ""
		for _, m := range mods {
			script += "require.resolve(" + jsonString(m) + ");"
		}
		args = []string{"-e", script}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = NodeDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return &loadError{err: err, out: strings.TrimSpace(string(out))}
	}
	return nil
}

type loadError struct {
	err error
	out string
}

func (e *loadError) Error() string { return e.err.Error() + ": " + e.out }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// NodeDir is store/testdata/node, where `npm ci` installs the node fixtures' packages.
func NodeDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "store", "testdata", "node")
}

// RunFixture runs a fixture program with args, in dir, within a minute, fails the test on an
// error (with its output), and decodes its standard output as JSON into out.
func RunFixture(t testing.TB, interpreter, dir string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, interpreter, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fixture %s %v: %v\nstderr: %s\nstdout: %s", interpreter, args, err, stderr.String(), stdout.String())
	}
	if out == nil {
		return
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("fixture %s %v printed no JSON: %v\n%s", interpreter, args, err, stdout.String())
	}
}
