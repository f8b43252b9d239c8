// Package redistest starts real Redis servers on free loopback ports: for tests (Start,
// StartCluster, stopped when the test ends) and for bench, which measures a server of its own
// (Launch, LaunchCluster). When redis-server is not installed a test is skipped with a message,
// except under CI=true, where its absence fails the run. Of hourglass's packages it imports none;
// only tests and internal/bench may import it.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process started for one test.
type Server struct {
	Addr   string
	dir    string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	exited chan struct{} // closed when the process has exited
}

// Binary returns the path of redis-server, skipping (or, under CI, failing) the test without it.
func Binary(t testing.TB) string {
	t.Helper()
	return installed(t, "redis-server")
}

// installed returns the path of Debian's program name (its package has the same name), skipping
// the test without it, or failing it under CI, which must have it.
func installed(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed, and CI needs it: %v", name, err)
		}
		t.Skipf("%s is not installed; install Debian's %s to run this test", name, name)
	}
	return path
}

// Start runs a redis-server on a free loopback port with persistence off, waits until it answers
// PING, and stops it (by its pid) when the test ends. Extra arguments go to redis-server.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return startWith(t, func() ([]string, error) { return args, nil })
}

// StartTLS runs a redis-server as Start does that also takes TLS connections on a second loopback
// port, with certs's server certificate and CA; authClients is its --tls-auth-clients (yes, no or
// optional). It returns the server and its TLS address. Both ports are picked inside the retry
// loop: a port another process takes between being picked and bound is tried again.
func StartTLS(t testing.TB, certs Certs, authClients string) (*Server, string) {
	t.Helper()
	var tlsAddr string
	s := startWith(t, func() ([]string, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		tlsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		return []string{"--tls-port", strconv.Itoa(port), "--tls-cert-file", certs.ServerCert,
			"--tls-key-file", certs.ServerKey, "--tls-ca-cert-file", certs.CA, "--tls-auth-clients", authClients}, nil
	})
	return s, tlsAddr
}

// startWith starts a redis-server on a free port with the arguments args gives, in the test's
// temporary directory, and stops it when the test ends.
func startWith(t testing.TB, args func() ([]string, error)) *Server {
	t.Helper()
	s, err := launch(Binary(t), t.TempDir(), args)
	if err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch runs a redis-server as Start does, for a program rather than a test (bench measures a
// server of its own): its files go in dir, and the caller stops it.
func Launch(dir string, args ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("no redis-server on PATH (Debian: apt-get install redis-server): %w", err)
	}
	return launch(bin, dir, func() ([]string, error) { return args, nil })
}

// launch picks a free port and asks args for the arguments, again on each try: a port picked free
// can be taken before redis binds it.
func launch(bin, dir string, args func() ([]string, error)) (*Server, error) {
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		extra, err := args()
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		s, err := start(bin, port, dir, extra)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func start(bin string, port int, dir string, extra []string) (*Server, error) {
	args := append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
	}, extra...)
	cmd := exec.Command(bin, args...)
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, log: log, exited: exited}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err() // not while it loads its data, unlike INFO
		var info string
		if err == nil {
			info, err = c.Info(ctx, "server").Result()
		}
		cancel()
		if err == nil {
			// Whoever answers on the port must be the process started: another test's server may
			// have taken the port first, and this one have exited for it.
			if strings.Contains(info, "process_id:"+strconv.Itoa(cmd.Process.Pid)+"\r\n") {
				return s, nil
			}
			_ = cmd.Process.Kill()
			<-exited
			return nil, fmt.Errorf("another server answers on port %d", port)
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("redis-server exited (%v): %s", waitErr, log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("redis-server on port %d did not answer in 10s: %v", port, err)
		}
	}
}

// Client returns a client for the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Restart kills the server and starts a fresh one on the same port (its data is gone unless the
// extra arguments turned persistence on), waiting until it answers PING.
func (s *Server) Restart(t testing.TB, args ...string) {
	t.Helper()
	s.Stop()
	_, portText, _ := net.SplitHostPort(s.Addr)
	port, _ := strconv.Atoi(portText)
	dir := s.dir
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ns *Server
		if ns, err = start(Binary(t), port, dir, args); err == nil {
			*s = *ns
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: restart on %s: %v", s.Addr, err)
		}
		time.Sleep(50 * time.Millisecond) // the old process may still hold the port
	}
}
