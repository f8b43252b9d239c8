package metrics

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
)

// TestServeFirstSweep runs Serve against a keyspace that takes a sweep about 1.5 s at its budget,
// with a refresh of 2 s: the first sweep completes, counts every key, and never reads faster than
// its budget (how close to the budget it comes is measured by bench, not asserted here: it
// depends on the machine). The age of the last complete sweep is absent until it completes, and
// is read from the clock at each scrape.
func TestServeFirstSweep(t *testing.T) {
	const keys, budget = 3000, 2000
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for i := 0; i < keys; i += 500 {
		var kv []any
		for j := i; j < i+500; j++ {
			kv = append(kv, fmt.Sprint("k:", j), j)
		}
		if err := rdb.MSet(t.Context(), kv...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	w := watch.New(rdb, nil, scanner.Options{Count: 100, KeysPerSecond: budget})
	var skew atomic.Int64 // added to the clock Serve ages snapshots by
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- Serve(ctx, l, w, Options{Target: "t", Refresh: 2 * time.Second, Now: clock, Log: io.Discard})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	url := "http://" + l.Addr().String() + "/metrics"

	var samples []sample
	redistest.Eventually(t, "a sweep to complete", 15*time.Second, func() bool {
		samples = scrapeURL(t, url)
		seen, age := find(samples, "hourglass_sweep_keys_seen"), find(samples, "hourglass_last_complete_sweep_age_seconds")
		if len(seen) != len(age) {
			t.Fatalf("sweep keys seen %v but age %v: the age is there exactly when a sweep is", seen, age)
		}
		return len(seen) == 1
	})
	seen := find(samples, "hourglass_sweep_keys_seen")[0].value
	dur := find(samples, "hourglass_sweep_duration_seconds")[0].value
	if seen != keys || dur <= 0 {
		t.Fatalf("first sweep: %v keys in %v s, want %d keys", seen, dur, keys)
	}
	// The budget is a ceiling. A step runs before it is paid for, so a sweep of 30 pages may read
	// one page (3%) ahead of it; 25% is slack enough for any machine, as a slow one only reads slower.
	if rate := seen / dur; rate > 1.25*budget {
		t.Errorf("first sweep: %.0f keys in %.2f s, %.0f keys/s; over the budget of %d", seen, dur, rate, budget)
	}
	t.Logf("first sweep: %.0f keys in %.2f s, %.0f keys/s of a budget of %d", seen, dur, seen/dur, budget)

	skew.Store(int64(time.Hour))
	age := find(scrapeURL(t, url), "hourglass_last_complete_sweep_age_seconds")
	if lim := time.Hour + time.Since(start); len(age) != 1 || age[0].value < 3600 || age[0].value > lim.Seconds() {
		t.Errorf("age an hour on: %v, want between 3600 and %.1f", age, lim.Seconds())
	}
}

// scrapeURL GETs url and parses the text.
func scrapeURL(t *testing.T, url string) []sample {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return parse(t, string(b))
}
