package metrics

import (
	"testing"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/snapshot"

	"github.com/prometheus/client_golang/prometheus"
)

// TestJobWorkerMetrics: a Sidekiq process (the one the fixture ran, beating a moment ago) is
// exported live as Sidekiq::ProcessSet lists it, none stale; Celery, which records no workers
// in Redis, has no series rather than a 0.
func TestJobWorkerMetrics(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	srv := redistest.Start(t)
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", nil, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	var procs []struct {
		Identity string `json:"identity"`
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &procs, "processes.rb", "redis://"+srv.Addr+"/0", "")
	cfg, err := config.Parse("jobs.toml", []byte("[[job_queue]]\nname = \"sk\"\nlayout = \"sidekiq\"\n\n"+
		"[[job_queue]]\nname = \"cel\"\nlayout = \"celery\"\n"), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	w := watch.New(srv.Client(t), cfg.Counters, cfg.SweepOptions(true))
	col := newCollector(nil)
	col.set(sweep(t, w), nil)
	samples := parse(t, scrapeHandler(t, col))
	sk := values(samples, "hourglass_job_workers", "state", "entry", "sk", "layout", "sidekiq")
	if len(procs) != 1 || sk["live"] != float64(len(procs)) || sk["stale"] != 0 || len(sk) != 2 {
		t.Errorf("sidekiq's workers %v, want live as ProcessSet lists %d and stale 0", sk, len(procs))
	}
	if cel := find(samples, "hourglass_job_workers", "entry", "cel"); len(cel) != 0 {
		t.Errorf("Celery records no workers in Redis, yet has series %v", cel)
	}
}

// TestJobWorkersBeyondThoseRead: a library listing more processes than a snapshot reads has its
// unread ones exported as such, so live + stale + unread is what it lists, and live is never
// taken for all of them.
func TestJobWorkersBeyondThoseRead(t *testing.T) {
	found, live, stale := int64(620), int64(499), int64(1)
	ws := &snapshot.JobWorkers{Found: &found, Live: &live, Stale: &stale, List: make([]snapshot.JobWorker, 500)}
	got := map[string]float64{}
	collectJobWorkers(func(_ *prometheus.Desc, v float64, labels ...string) { got[labels[2]] = v },
		[]snapshot.JobQueues{{Name: "sk", Layout: "sidekiq", Workers: ws}})
	if got["live"] != 499 || got["stale"] != 1 || got["unread"] != 120 || len(got) != 3 {
		t.Fatalf("workers %v, want 499 live, 1 stale, 120 unread", got)
	}
}
