package jobs

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// serverNow is the server's clock.
func serverNow(t *testing.T, rdb redis.Cmdable) time.Time {
	t.Helper()
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// TestSidekiqThroughputIsSidekiqs: after a real Sidekiq process ran jobs (two of them failing),
// the totals and the days read are Sidekiq::Stats' and Stats::History's, bare and namespaced.
func TestSidekiqThroughputIsSidekiqs(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	for _, ns := range []string{"", "myapp"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			var fixture map[string]any
			redistest.RunFixture(t, ruby, "testdata/sidekiq", &fixture, "fixture.rb", "redis://"+srv.Addr+"/0", ns)
			var want struct {
				Processed, Failed int64
				Days              struct{ Processed, Failed map[string]int64 }
			}
			redistest.RunFixture(t, ruby, "testdata/sidekiq", &want, "throughput.rb", "redis://"+srv.Addr+"/0", "7", ns)
			if want.Processed == 0 || want.Failed == 0 {
				t.Fatalf("the fixture's Sidekiq process ran nothing: %+v", want)
			}
			got, err := Source{Layout: Sidekiq, Prefix: ns}.Throughput(t.Context(), rdb, nil, 7, serverNow(t, rdb))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Queue != "" || got[0].Processed != want.Processed || got[0].Failed != want.Failed {
				t.Fatalf("throughput %+v; Sidekiq::Stats says processed %d, failed %d", got, want.Processed, want.Failed)
			}
			if len(got[0].Days) != 7 {
				t.Fatalf("%d days, want 7", len(got[0].Days))
			}
			for _, d := range got[0].Days {
				if d.Processed != want.Days.Processed[d.Day] || d.Failed != want.Days.Failed[d.Day] {
					t.Errorf("%s: %d processed, %d failed; Stats::History says %d, %d", d.Day, d.Processed, d.Failed,
						want.Days.Processed[d.Day], want.Days.Failed[d.Day])
				}
			}
		})
	}
}

// TestAsynqThroughputIsAsynqs: after a real asynq server ran 5 tasks and failed 2 for good, each
// queue's totals and days are what asynq's Inspector reports (GetQueueInfo, History).
func TestAsynqThroughputIsAsynqs(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 2, Queues: map[string]int{"work": 1, "idle": 1}, LogLevel: asynq.FatalLevel})
	if err := server.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		if task.Type() == "fail" {
			return errors.New("fails")
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	for i := range 7 {
		typ, q := "ok", "work"
		if i >= 5 {
			typ = "fail"
		}
		if _, err := client.Enqueue(asynq.NewTask(typ, nil), asynq.Queue(q), asynq.MaxRetry(0)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Enqueue(asynq.NewTask("ok", nil), asynq.Queue("idle"), asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, "asynq ran the tasks", 30*time.Second, func() bool {
		q, err := insp.GetQueueInfo("work")
		return err == nil && q.ProcessedTotal == 7 && q.FailedTotal == 2
	})
	got, err := Source{Layout: Asynq}.Throughput(t.Context(), rdb, []string{"idle", "work"}, 5, serverNow(t, rdb))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("throughput %+v, want the two queues", got)
	}
	for _, tp := range got {
		info, err := insp.GetQueueInfo(tp.Queue)
		if err != nil {
			t.Fatal(err)
		}
		if tp.Processed != int64(info.ProcessedTotal) || tp.Failed != int64(info.FailedTotal) {
			t.Errorf("%s: %d processed, %d failed; asynq says %d, %d", tp.Queue, tp.Processed, tp.Failed, info.ProcessedTotal, info.FailedTotal)
		}
		hist, err := insp.History(tp.Queue, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != len(tp.Days) {
			t.Fatalf("%s: %d days, asynq's History has %d", tp.Queue, len(tp.Days), len(hist))
		}
		for i, d := range tp.Days {
			h := hist[i]
			if d.Day != h.Date.UTC().Format("2006-01-02") || d.Processed != int64(h.Processed) || d.Failed != int64(h.Failed) {
				t.Errorf("%s day %d: %+v; asynq's History: %s %d %d", tp.Queue, i, d, h.Date.UTC().Format("2006-01-02"), h.Processed, h.Failed)
			}
		}
		if tp.Days[0].Processed != int64(info.Processed) || tp.Days[0].Failed != int64(info.Failed) {
			t.Errorf("%s today: %+v; GetQueueInfo: %d processed, %d failed", tp.Queue, tp.Days[0], info.Processed, info.Failed)
		}
	}
}

// TestBullMQThroughputIsGetMetrics: a queue whose Worker kept metrics reads as getMetrics reports
// it (processed: completed and failed together; today: every job, the points and what came
// since the last); a queue whose Worker kept none is Absent with why, not 0.
func TestBullMQThroughputIsGetMetrics(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	for _, prefix := range []string{"", "acme"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			type metrics struct {
				Meta struct{ Count, PrevTS, PrevCount int64 }
				Data []int64
			}
			var rep struct {
				Queues map[string]struct{ Completed, Failed metrics }
			}
			redistest.RunFixture(t, node, redistest.NodeDir(), &rep, "metrics.mjs", "redis://"+srv.Addr, prefix)
			now := serverNow(t, rdb)
			got, err := Source{Layout: BullMQ, Prefix: prefix}.Throughput(t.Context(), rdb, []string{"counted", "silent"}, 3, now)
			if err != nil {
				t.Fatal(err)
			}
			counted, silent := got[0], got[1]
			c, f := rep.Queues["counted"].Completed, rep.Queues["counted"].Failed
			if c.Meta.Count != 12 || f.Meta.Count != 5 {
				t.Fatalf("BullMQ counted %d completed, %d failed; the fixture ran 12 and 5", c.Meta.Count, f.Meta.Count)
			}
			if counted.Processed != c.Meta.Count+f.Meta.Count || counted.Failed != f.Meta.Count {
				t.Errorf("counted: %d processed, %d failed; getMetrics: %d completed, %d failed", counted.Processed, counted.Failed, c.Meta.Count, f.Meta.Count)
			}
			var today int64
			for _, d := range counted.Days {
				today += d.Processed
			}
			if today != counted.Processed || counted.Days[0].Day != now.UTC().Format("2006-01-02") || counted.Days[len(counted.Days)-1].From.IsZero() {
				t.Errorf("counted's days %+v: want the %d jobs by day up to today, the first day marked from its first point", counted.Days, counted.Processed)
			}
			if silent.Processed != Absent || silent.Failed != Absent || silent.Note == "" || silent.Days != nil {
				t.Errorf("a queue without metrics: %+v; want Absent with why", silent)
			}
		})
	}
}

// TestRQThroughputIsItsWorkersCounts: while a real `rq worker` runs jobs (4 succeeding, 2
// failing), the totals are the live workers' counts as RQ's Worker.all() reads them.
func TestRQThroughputIsItsWorkersCounts(t *testing.T) {
	py := redistest.Interpreter(t, "python3", "rq", "redis")
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	url := "redis://" + srv.Addr + "/0"
	dir, err := filepath.Abs("testdata/rq")
	if err != nil {
		t.Fatal(err)
	}
	worker := exec.Command(py, "-m", "rq.cli", "worker", "--url", url, "--name", "counted", "--path", dir, "-q", "work")
	worker.Dir = dir
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Process.Kill(); worker.Wait() })
	var ids struct{ IDs []string }
	redistest.RunFixture(t, py, "testdata/rq", &ids, "throughput.py", url, "enqueue", "work", "4", "2")
	type counts struct{ Successful, Failed int64 }
	var rep struct{ Workers map[string]counts }
	redistest.Eventually(t, "the worker ran the six jobs", 30*time.Second, func() bool {
		redistest.RunFixture(t, py, "testdata/rq", &rep, "throughput.py", url, "read")
		w := rep.Workers["counted"]
		return w.Successful+w.Failed == 6
	})
	got, err := Source{Layout: RQ}.Throughput(t.Context(), rdb, nil, 7, serverNow(t, rdb))
	if err != nil {
		t.Fatal(err)
	}
	var want counts
	for _, w := range rep.Workers {
		want.Successful, want.Failed = want.Successful+w.Successful, want.Failed+w.Failed
	}
	if len(got) != 1 || got[0].Processed != want.Successful+want.Failed || got[0].Failed != want.Failed || got[0].Days != nil {
		t.Fatalf("throughput %+v; RQ's workers: %+v (and no daily counts)", got, want)
	}
	if want.Failed != 2 {
		t.Fatalf("the worker failed %d jobs, the fixture enqueued 2 failing", want.Failed)
	}
}

// TestCeleryKeepsNoThroughput: Celery's counts are not in Redis, and the reason is given.
func TestCeleryKeepsNoThroughput(t *testing.T) {
	if per, none := (Source{Layout: Celery}).ThroughputKept(); per || none == "" {
		t.Fatalf("Celery: per queue %v, why none %q", per, none)
	}
	for _, l := range []Layout{Sidekiq, BullMQ, RQ, Asynq} {
		if _, none := (Source{Layout: l}).ThroughputKept(); none != "" {
			t.Errorf("%s keeps counts, yet: %s", l, none)
		}
	}
}
