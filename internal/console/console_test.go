package console

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/theme"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestConsoleRunsOnTheEmbeddedDemo runs the real console, as `hourglass` does with no address,
// with keys from a pipe: the demo's numbers appear, the views switch, and q quits.
func TestConsoleRunsOnTheEmbeddedDemo(t *testing.T) {
	cfg, err := config.Parse("config.toml", redistest.Shipped(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UI.Refresh = 250 * time.Millisecond
	tg, err := target.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, err := traffic.WriteDemoHistory(t.Context(), tg.Store, cfg.Counters, traffic.DemoRate); err != nil {
		t.Fatal(err)
	}
	in, keys := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(t.Context(), tg, cfg, theme.Dark, in, out) }()

	waitFor := func(what string) {
		t.Helper()
		if !redistest.Until(10*time.Second, func() bool { return strings.Contains(ansi.Strip(out.String()), what) }) {
			t.Fatalf("the console never showed %q; it shows:\n%s", what, tail(ansi.Strip(out.String()), 3000))
		}
	}
	waitFor("DEMO")
	waitFor("leaking (no TTL)")
	keys.Write([]byte("3"))
	waitFor("Examples in flow")
	keys.Write([]byte("q"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("q did not quit the console")
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// syncBuffer is a bytes.Buffer safe to read while the console writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
