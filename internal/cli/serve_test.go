package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// served is a `hourglass serve` a test runs: where its metrics are and what it printed.
type served struct {
	t      *testing.T
	url    string
	out    *syncBuffer
	errOut *syncBuffer
}

// startServe runs `hourglass serve --listen 127.0.0.1:0` with args until the test ends, when it
// must exit 0, and waits for it to print its metrics address.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &served{t: t, out: &syncBuffer{}, errOut: &syncBuffer{}}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, redistest.Shipped(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), s.out, s.errOut)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exited %d: %s", code, s.errOut.String())
		}
	})
	if !redistest.Until(10*time.Second, func() bool {
		s.url = regexp.MustCompile(`http://\S+/metrics`).FindString(s.out.String())
		return s.url != ""
	}) {
		t.Fatalf("serve printed no address: %q %q", s.out.String(), s.errOut.String())
	}
	return s
}

// scrape is the metrics' text, "" when the request fails.
func (s *served) scrape() string {
	resp, err := http.Get(s.url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// until scrapes until ok says the metrics hold what is wanted and returns them, failing the test
// with the last scrape when they do not within wait.
func (s *served) until(what string, wait time.Duration, ok func(body string) bool) string {
	s.t.Helper()
	var body string
	if !redistest.Until(wait, func() bool {
		body = s.scrape()
		return ok(body)
	}) {
		s.t.Fatalf("serve's metrics never showed %s: %q\n%s", what, s.errOut.String(), body)
	}
	return body
}
