package console

import (
	"context"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/target"
	"github.com/hourglass-dev/hourglass/internal/traffic"
	"github.com/hourglass-dev/hourglass/theme"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestSoak runs the embedded demo's traffic (every kind) and the real console polling it, for
// HOURGLASS_SOAK_DURATION (2m by default), and checks that the heap and the goroutines stay flat.
// It is skipped unless HOURGLASS_SOAK=1: minutes, not a unit test.
//
//	HOURGLASS_SOAK=1 go test -run Soak -v ./internal/console
func TestSoak(t *testing.T) {
	if os.Getenv("HOURGLASS_SOAK") != "1" {
		t.Skip("set HOURGLASS_SOAK=1 to run the soak test")
	}
	d := 2 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("HOURGLASS_SOAK_DURATION")); err == nil && v > 0 {
		d = v
	}
	cfg, err := config.Parse("config.toml", redistest.Shipped(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UI.Refresh = 250 * time.Millisecond // four polls a second: the hardest the console runs
	tg, err := target.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, err := traffic.WriteDemoHistory(t.Context(), tg.Store, cfg.Counters, traffic.DemoRate); err != nil {
		t.Fatal(err)
	}
	demoCtx, stopDemo := context.WithCancel(t.Context())
	dm, demoDone, err := traffic.StartDemo(demoCtx, tg.Store, cfg, 300)
	if err != nil {
		stopDemo()
		t.Fatal(err)
	}
	defer func() {
		stopDemo()
		<-demoDone // the demo stops before the Redis under it does
	}()
	in, keys := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(t.Context(), tg, cfg, theme.Dark, in, io.Discard) }()

	sample := func() (uint64, int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, runtime.NumGoroutine()
	}
	// The soak's schedule, which is what it tests: a sample every 5 s; the first two are the
	// warm-up (pools, caches and the first sweeps fill), the baseline is the third, and the run
	// lasts d after it.
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	next := func() {
		select {
		case <-tick.C:
		case <-t.Context().Done():
			t.Fatal("the test ended during the soak")
		}
	}
	next()
	next()
	heap0, g0 := sample()
	var heapMax uint64
	gMax := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		next()
		h, g := sample()
		heapMax, gMax = max(heapMax, h), max(gMax, g)
		t.Logf("heap %d KB, goroutines %d", h>>10, g)
	}
	keys.Write([]byte("q"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if heapMax > heap0*3/2+8<<20 {
		t.Errorf("the heap grew from %d KB to %d KB", heap0>>10, heapMax>>10)
	}
	if gMax > g0+10 {
		t.Errorf("goroutines grew from %d to %d", g0, gMax)
	}
	t.Logf("over %v: heap %d KB at start, %d KB at most; goroutines %d, at most %d; demo wrote %d counter events",
		d, heap0>>10, heapMax>>10, g0, gMax, dm.Events())
}
