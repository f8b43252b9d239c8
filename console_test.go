package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"hourglass/theme"
)

// TestConsoleRunsOnTheEmbeddedDemo runs the real console, as `hourglass` does with no address,
// with keys from a pipe: the demo's numbers appear, the views switch, and q quits.
func TestConsoleRunsOnTheEmbeddedDemo(t *testing.T) {
	cfg, err := parseConfig("config.toml", shippedConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UI.Refresh = 250 * time.Millisecond
	tg, err := openTarget(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, err := writeDemoHistory(t.Context(), tg.store, cfg.Counters); err != nil {
		t.Fatal(err)
	}
	in, keys := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- runConsole(t.Context(), tg, cfg, theme.Dark, in, out) }()

	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(ansi.Strip(out.String()), what) {
			if time.Now().After(deadline) {
				t.Fatalf("the console never showed %q; it shows:\n%s", what, tail(ansi.Strip(out.String()), 3000))
			}
			time.Sleep(20 * time.Millisecond)
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
