package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
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

// TestServeExportsLiveEstimatesBeforeASweepCompletes: while a first sweep has most of the keyspace
// to go and a writer adds to keys that exist, serve exports the family's live rate and its current
// hour's total now as estimates, each with its 95% interval's ends and the share it rests on, and
// no exact family series yet. The estimates are one draw each; they are held to twice their
// stated error and a loose bound of the truth, which a sound draw misses far less than once in a
// thousand (their coverage over many draws is TestLiveScaledFiguresCover's and bench --scale's).
func TestServeExportsLiveEstimatesBeforeASweepCompletes(t *testing.T) {
	const familyKeys, otherKeys, perFlush = 20_000, 180_000, 40 // 40 events each 20 ms: 2,000 a second
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	redistest.ClearOfHourEnd(t, 3*time.Minute)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(`timezone = "UTC"
[scan]
keys_per_second = 2000
max_redis_time = "100%"
[[counter]]
name = "pv"
pattern = "pv:<site>:<user>:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := store.New(rdb, store.Options{Location: time.UTC})
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	pv, err := store.NewFamily(store.FamilySpec{Name: "pv", Pattern: "pv:<site>:<user>:<window>", HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	win := store.WindowAt(store.Hour, st.Now(), time.UTC)
	dims := make([][]string, familyKeys)
	var loaded int64
	pipe := rdb.Pipeline()
	for i := range familyKeys + otherKeys {
		var k string
		var v int64 = 1
		if i < familyKeys {
			dims[i] = []string{fmt.Sprintf("s%d", i%31), fmt.Sprintf("u%d", i)}
			if k, err = pv.Key(win, dims[i]); err != nil {
				t.Fatal(err)
			}
			v = int64(1 + i%40)
			loaded += v
		} else {
			k = fmt.Sprintf("session:%d", i)
		}
		pipe.Set(ctx, k, v, 3*time.Hour)
		if pipe.Len() == 5000 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	var written atomic.Int64
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { writeSteadily(wctx, t, st, pv, dims, perFlush, &written) })
	defer func() { stop(); wg.Wait() }()

	s := startServe(t, "--config", path, "--addr", srv.Addr)
	rate := `hourglass_live_rate_estimate_per_second{family="pv",granularity="hour",`
	began := time.Now()
	body := s.until("a live rate", 90*time.Second, func(body string) bool { return strings.Contains(body, rate) })
	t.Logf("a live rate after %.1f s", time.Since(began).Seconds())
	events := float64(written.Load())
	if strings.Contains(body, "hourglass_last_complete_sweep_age_seconds") || strings.Contains(body, `hourglass_family_window_value{family="pv"`) {
		t.Fatalf("a sweep of %d keys at 2,000 a second completed, or the family has exact series: the test is not of a first sweep", familyKeys+otherKeys)
	}
	get := func(name string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name+`{family="pv",granularity="hour",`) + `[^}]*\} (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s in:\n%s", name, body)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	r, rLo, rHi := get("hourglass_live_rate_estimate_per_second"), get("hourglass_live_rate_estimate_low_per_second"), get("hourglass_live_rate_estimate_high_per_second")
	tot, tLo, tHi := get("hourglass_live_window_value_estimate"), get("hourglass_live_window_value_estimate_low"), get("hourglass_live_window_value_estimate_high")
	cover := get("hourglass_live_estimate_coverage")
	trueRate, trueTotal := 2000.0, float64(loaded)+events
	t.Logf("rate ≈%.0f [%.0f, %.0f] (true ≈%.0f); total now ≈%.0f [%.0f, %.0f] (true ≈%.0f); coverage %.3f", r, rLo, rHi, trueRate, tot, tLo, tHi, trueTotal, cover)
	if !(rLo <= r && r <= rHi && rLo > 0) || !(tLo <= tot && tot <= tHi) || !(cover > 0 && cover < 1) {
		t.Errorf("estimates out of their own bounds, or a coverage of a whole window")
	}
	if math.Abs(r-trueRate) > math.Max(2*(rHi-rLo), 0.5*trueRate) || math.Abs(tot-trueTotal) > math.Max(2*(tHi-tLo), 0.2*trueTotal) {
		t.Errorf("the estimates are far from the truth")
	}
}

// writeSteadily adds perFlush events to keys of f drawn uniformly from dims every 20 ms with the
// store's batch writer, counting those written, until ctx ends.
func writeSteadily(ctx context.Context, t *testing.T, st *store.Store, f *store.Family, dims [][]string, perFlush int, written *atomic.Int64) {
	wr := st.NewWriter(store.WriterOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for range perFlush {
			if err := wr.Add(f, dims[rng.IntN(len(dims))], 1, time.Time{}); err != nil {
				t.Error(err)
				return
			}
		}
		res, err := wr.Flush(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.Error(err)
			}
			return
		}
		written.Add(res.Events)
	}
}
