package metrics

import (
	"testing"

	"hourglass/internal/config"
	"hourglass/internal/redistest"
	"hourglass/scanner"
)

// TestJobWorkerMetrics: a Sidekiq process (the one the fixture ran, beating a moment ago) is
// exported live as Sidekiq::ProcessSet lists it, none stale; Celery, which records no workers
// in Redis, has no series rather than a 0.
func TestJobWorkerMetrics(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	srv := redistest.Start(t)
	redistest.RunFixture(t, ruby, "../../store/testdata/sidekiq", nil, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	var procs []struct {
		Identity string `json:"identity"`
	}
	redistest.RunFixture(t, ruby, "../../store/testdata/sidekiq", &procs, "processes.rb", "redis://"+srv.Addr+"/0", "")
	cfg, err := config.Parse("jobs.toml", []byte("[[job_queue]]\nname = \"sk\"\nlayout = \"sidekiq\"\n\n"+
		"[[job_queue]]\nname = \"cel\"\nlayout = \"celery\"\n"), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	w := scanner.NewWatcher(srv.Client(t), cfg.Counters, cfg.SweepOptions(true))
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
