package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
)

// TestJobQueueMetrics lets Sidekiq itself fill a server and checks its series: each queue's
// waiting jobs equal Sidekiq's sizes, what Sidekiq keeps for all queues (scheduled, retry, dead,
// busy) is exported once under queue="_all" and its enqueued sum is not (it would count every
// waiting job twice), a configured queue key that is not there is missing, and promtool finds
// nothing wrong; the jobs Sidekiq ran are counters equal to Sidekiq::Stats'.
func TestJobQueueMetrics(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	srv := redistest.Start(t)
	var rep struct {
		Stats struct {
			ScheduledSize int64 `json:"scheduled_size"`
			RetrySize     int64 `json:"retry_size"`
			DeadSize      int64 `json:"dead_size"`
			WorkersSize   int64 `json:"workers_size"`
			Processed     int64 `json:"processed"`
			Failed        int64 `json:"failed"`
		} `json:"stats"`
		Now       float64            `json:"now"`
		Sizes     map[string]int64   `json:"sizes"`
		Latencies map[string]float64 `json:"latencies"` // Queue#latency, seconds, at now
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &rep, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	cfg, err := config.Parse("jobs.toml", []byte("[[job_queue]]\nname = \"sk\"\nlayout = \"sidekiq\"\n\n"+
		"[[delay_queue]]\nname = \"gone\"\nkey = \"delay:gone\"\n"), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	w := watch.New(srv.Client(t), cfg.Counters, cfg.SweepOptions(true))
	col := newCollector(nil)
	col.set(sweep(t, w), nil)
	body := scrapeHandler(t, col)
	samples := parse(t, body)
	waiting := values(samples, "hourglass_job_queue_jobs", "queue", "state", "waiting")
	for q, n := range rep.Sizes {
		if waiting[q] != float64(n) {
			t.Errorf("queue %s: waiting %v, Sidekiq's size %d", q, waiting[q], n)
		}
	}
	// Each queue's latency, as Sidekiq's Queue#latency said it grown by the time since; none for
	// the shared row.
	since := float64(time.Now().UnixMicro())/1e6 - rep.Now
	latency := values(samples, "hourglass_job_queue_latency_seconds", "queue")
	for q, want := range rep.Latencies {
		if got, ok := latency[q]; !ok || got < want-0.1 || got > want+since+0.1 || want == 0 && got != 0 {
			t.Errorf("queue %s: latency %v s (exported %v), Sidekiq's Queue#latency %.3f s, %.1f s before", q, got, ok, want, since)
		}
	}
	if _, ok := latency["_all"]; ok {
		t.Error("the shared row exports a latency of its own")
	}
	if _, ok := waiting["_all"]; ok {
		t.Error("the shared row exports waiting: summed over queues, every waiting job would count twice")
	}
	all := values(samples, "hourglass_job_queue_jobs", "state", "queue", "_all")
	want := map[string]float64{"scheduled": float64(rep.Stats.ScheduledSize), "retry": float64(rep.Stats.RetrySize),
		"dead": float64(rep.Stats.DeadSize), "active": float64(rep.Stats.WorkersSize)}
	for state, n := range want {
		if all[state] != n {
			t.Errorf("_all %s = %v, Sidekiq::Stats says %v (all: %v)", state, all[state], n, all)
		}
	}
	// What Sidekiq counts of the jobs it ran, for all queues, as counters rate() can read.
	processed := values(samples, "hourglass_job_processed_total", "queue")
	failed := values(samples, "hourglass_job_failed_total", "queue")
	if rep.Stats.Processed == 0 || processed["_all"] != float64(rep.Stats.Processed) || failed["_all"] != float64(rep.Stats.Failed) {
		t.Errorf("jobs run: processed %v, failed %v; Sidekiq::Stats: %d, %d", processed, failed, rep.Stats.Processed, rep.Stats.Failed)
	}
	if !strings.Contains(body, "# TYPE hourglass_job_processed_total counter") || !strings.Contains(body, "# TYPE hourglass_job_failed_total counter") {
		t.Error("the jobs run are not exported as counters")
	}
	if len(find(samples, "hourglass_queue_missing", "queue", "gone")) != 1 {
		t.Error("the configured delay:gone, which does not exist, is not reported missing")
	}
	cmd := exec.CommandContext(t.Context(), promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
}
