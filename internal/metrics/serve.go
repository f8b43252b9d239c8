package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// Options say how Serve polls and labels.
type Options struct {
	// Target labels every series (the [redis] name when there is one), so several serve
	// processes behind one Prometheus job stay apart.
	Target  string
	Refresh time.Duration    // a poll every Refresh, sweeping for all of it
	Now     func() time.Time // the server's clock, for the snapshot's age
	Log     io.Writer        // a line for each poll that fails
}

// Poller is what Serve polls for its status: the Watcher, or a fake in tests.
type Poller interface {
	Poll(ctx context.Context, slice time.Duration, focus string) (snapshot.Status, error)
}

// Serve answers GET /metrics on l with the latest status w polled, polling until ctx ends; then it
// shuts the server down and returns nil. Each poll sweeps for opt.Refresh and the next begins
// when it is back, as the console does, so a sweep runs at its full budget; a poll whose sweep
// completed early waits out the rest of the interval.
func Serve(ctx context.Context, l net.Listener, w Poller, opt Options) error {
	col := newCollector(opt.Now)
	srv := &http.Server{Handler: handler(col, opt.Target), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	refresh := opt.Refresh
	for {
		pctx, cancel := context.WithTimeout(ctx, refresh+5*time.Second)
		start := time.Now()
		st, err := w.Poll(pctx, refresh, "")
		cancel()
		col.set(st, err)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(opt.Log, "hourglass: serve: "+format.OneLine(err))
		}
		pause := max(refresh-time.Since(start), 0)
		select {
		case <-ctx.Done():
			sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer scancel()
			_ = srv.Shutdown(sctx)
			return nil
		case err := <-served:
			if !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve: %w", err)
			}
			return nil
		case <-time.After(pause):
		}
	}
}

// handler serves col's metrics, each labelled with target, at /metrics, and redirects the rest
// there.
func handler(col *collector, target string) http.Handler {
	reg := prometheus.NewRegistry()
	prometheus.WrapRegistererWith(prometheus.Labels{"target": target}, reg).MustRegister(col)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/metrics", http.StatusFound)
	})
	return mux
}
