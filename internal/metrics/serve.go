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

	"hourglass/internal/format"
	"hourglass/scanner"
)

// Options say how Serve polls and labels.
type Options struct {
	// Target labels every series (the [redis] name when there is one), so several serve
	// processes behind one Prometheus job stay apart.
	Target  string
	Refresh time.Duration    // a poll every Refresh, each sweeping on for half of it
	Now     func() time.Time // the server's clock, for the snapshot's age
	Log     io.Writer        // a line for each poll that fails
}

// Serve answers GET /metrics on l with the latest status w polled, polling every opt.Refresh
// until ctx ends; then it shuts the server down and returns nil.
func Serve(ctx context.Context, l net.Listener, w *scanner.Watcher, opt Options) error {
	col := newCollector(opt.Now)
	reg := prometheus.NewRegistry()
	prometheus.WrapRegistererWith(prometheus.Labels{"target": opt.Target}, reg).MustRegister(col)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/metrics", http.StatusFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	refresh := opt.Refresh
	for {
		pctx, cancel := context.WithTimeout(ctx, refresh+5*time.Second)
		st, err := w.Poll(pctx, refresh/2, "")
		cancel()
		col.set(st, err)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(opt.Log, "hourglass: serve: "+format.OneLine(err))
		}
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
		case <-time.After(refresh / 2):
		}
	}
}
