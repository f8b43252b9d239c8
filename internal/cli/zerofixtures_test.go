package cli

import (
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// zeroCase is one config over data the real libraries wrote on a real redis-server, with what
// the libraries themselves answered about that data: the facts a 0 of hourglass's must agree
// with.
type zeroCase struct {
	name, path string
	// keys is how many keys the libraries wrote (each claimed by the config).
	keys int64
	// limitKeys are, per key of a library's limiter, what the library answered: remaining, and
	// the refused attempts its value counts (-1 for a key that keeps no such count).
	limitKeys map[string]limitFacts
	// jobCounts are, per job entry's layout, queue ("" for the shared row) and field of the JSON
	// (a normalized count, or "states.<name>"), what the library counted: when it counted and, for
	// RQ, 5 s later again (a count that moves with time is 0 when either is).
	jobCounts map[[3]string][]int64
}

type limitFacts struct{ remaining, refused int64 }

// limitsCase: python limits' fixed and moving windows, under, at and past their limits.
func limitsCase(t *testing.T) zeroCase {
	py := redistest.Interpreter(t, "python3", "limits", "redis")
	srv := redistest.Start(t)
	var rep struct {
		Keys map[string]struct {
			Strategy  string `json:"strategy"`
			Amount    int64  `json:"amount"`
			Hits      []bool `json:"hits"`
			Remaining int64  `json:"remaining"`
		} `json:"keys"`
	}
	redistest.RunFixture(t, py, "../../store/limits/testdata/limits", &rep, "fixture.py", "redis://"+srv.Addr+"/0")
	c := zeroCase{name: "limits", path: libraryConfig(t, srv.Addr, "[[limiter]]\nname = \"py\"\nlayout = \"limits\"\n"),
		limitKeys: map[string]limitFacts{}}
	for key, k := range rep.Keys {
		f := limitFacts{remaining: k.Remaining, refused: -1}
		if k.Strategy == "fixed" {
			f.refused = max(int64(len(k.Hits))-k.Amount, 0)
		}
		c.limitKeys[key] = f
	}
	c.keys = int64(len(rep.Keys))
	return c
}

// rlflexCase: rate-limiter-flexible's RateLimiterRedis, with and without a block.
func rlflexCase(t *testing.T) zeroCase {
	node := redistest.Interpreter(t, "node", "rate-limiter-flexible", "ioredis")
	srv := redistest.Start(t)
	var rep struct {
		Keys map[string]struct {
			ConsumedPoints  int64 `json:"consumedPoints"`
			RemainingPoints int64 `json:"remainingPoints"`
			Points          int64 `json:"points"`
		} `json:"keys"`
	}
	redistest.RunFixture(t, node, redistest.NodeDir(), &rep, "rlflex.mjs", "redis://"+srv.Addr)
	conf := "[[limiter]]\nname = \"api\"\nlayout = \"rate-limiter-flexible\"\nlimit = 5\nwindow = \"60s\"\n\n" +
		"[[limiter]]\nname = \"login\"\nlayout = \"rate-limiter-flexible\"\npattern = \"login:<user>\"\nlimit = 5\nwindow = \"60s\"\n"
	c := zeroCase{name: "rate-limiter-flexible", path: libraryConfig(t, srv.Addr, conf), limitKeys: map[string]limitFacts{}}
	for key, k := range rep.Keys {
		c.limitKeys[key] = limitFacts{remaining: k.RemainingPoints, refused: max(k.ConsumedPoints-k.Points, 0)}
	}
	c.keys = int64(len(rep.Keys))
	return c
}

// redisRateCase: go-redis/redis_rate's GCRA keys, under, at and past the burst, written by the
// library itself. Its period of an hour refills one hit in 6 minutes: the answers hold while the
// test runs.
func redisRateCase(t *testing.T) zeroCase {
	srv := redistest.Start(t)
	writeRedisRate(t, srv)
	lim, limit := redis_rate.NewLimiter(srv.Client(t)), redisRateLimit
	c := zeroCase{name: "redis_rate", keys: 3, limitKeys: map[string]limitFacts{},
		path: libraryConfig(t, srv.Addr, "[[limiter]]\nname = \"go\"\nlayout = \"redis_rate\"\nlimit = 10\nwindow = \"1h\"\n")}
	for _, name := range []string{"under", "at", "over"} {
		res, err := lim.AllowN(t.Context(), name, limit, 0) // what it answers, consuming nothing
		if err != nil {
			t.Fatal(err)
		}
		c.limitKeys["rate:"+name] = limitFacts{remaining: int64(res.Remaining), refused: -1}
	}
	return c
}

var redisRateLimit = redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Hour}

// writeRedisRate lets redis_rate take 3, 10 and 13 hits of 10 an hour on three keys.
func writeRedisRate(t *testing.T, srv *redistest.Server) {
	lim := redis_rate.NewLimiter(srv.Client(t))
	for name, n := range map[string]int{"under": 3, "at": 10, "over": 13} {
		for range n {
			if _, err := lim.Allow(t.Context(), name, redisRateLimit); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// jobsCase: Sidekiq (with a real Sidekiq process) and RQ (with a real worker) on one server.
func jobsCase(t *testing.T) zeroCase {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	py := redistest.Interpreter(t, "python3", "rq")
	srv := redistest.Start(t)
	var sk struct {
		Stats struct {
			ScheduledSize int64 `json:"scheduled_size"`
			RetrySize     int64 `json:"retry_size"`
			DeadSize      int64 `json:"dead_size"`
			WorkersSize   int64 `json:"workers_size"`
		} `json:"stats"`
		Sizes        map[string]int64 `json:"sizes"`
		ScheduledDue int64            `json:"scheduled_due"`
		DueIn5s      int64            `json:"scheduled_due_in_5s"`
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &sk, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	var rq struct {
		Queues map[string]rqCounts `json:"queues"`
	}
	redistest.RunFixture(t, py, "../../store/jobs/testdata/rq", &rq, "fixture.py", "redis://"+srv.Addr+"/0")
	var skRun struct {
		Processed, Failed int64
		Days              struct{ Processed, Failed map[string]int64 }
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &skRun, "throughput.rb", "redis://"+srv.Addr+"/0", "30", "")
	var rqRun struct {
		Workers map[string]struct{ Successful, Failed int64 }
	}
	redistest.RunFixture(t, py, "../../store/jobs/testdata/rq", &rqRun, "throughput.py", "redis://"+srv.Addr+"/0", "read")
	conf := "[[job_queue]]\nname = \"sk\"\nlayout = \"sidekiq\"\n\n[[job_queue]]\nname = \"rq\"\nlayout = \"rq\"\n"
	c := zeroCase{name: "jobs", path: libraryConfig(t, srv.Addr, conf), keys: -1, jobCounts: map[[3]string][]int64{}}
	add := func(layout, queue, field string, n ...int64) { c.jobCounts[[3]string{layout, queue, field}] = n }
	for q, n := range sk.Sizes {
		add("sidekiq", q, "waiting", n)
		add("sidekiq", q, "states.size", n)
	}
	st := sk.Stats
	add("sidekiq", "", "scheduled", st.ScheduledSize)
	add("sidekiq", "", "retry", st.RetrySize)
	add("sidekiq", "", "dead", st.DeadSize)
	add("sidekiq", "", "active", st.WorkersSize)
	add("sidekiq", "", "due", sk.ScheduledDue, sk.DueIn5s)
	// The jobs run, as Sidekiq::Stats and Stats::History count them, and RQ's live workers.
	add("sidekiq", "", "throughput.processed_total", skRun.Processed)
	add("sidekiq", "", "throughput.failed_total", skRun.Failed)
	for day, n := range skRun.Days.Processed {
		add("sidekiq", "", "throughput.day."+day+".processed", n)
		add("sidekiq", "", "throughput.day."+day+".failed", skRun.Days.Failed[day])
	}
	var ok, failed int64
	for _, w := range rqRun.Workers {
		ok, failed = ok+w.Successful, failed+w.Failed
	}
	add("rq", "", "throughput.processed_total", ok+failed)
	add("rq", "", "throughput.failed_total", failed)
	for name, q := range rq.Queues {
		l := q.Later
		for field, n := range map[string][]int64{"waiting": {q.Count}, "active": {q.Started, l.Started}, "scheduled": {q.Scheduled + q.Deferred},
			"dead": {q.Failed, l.Failed}, "completed": {q.Finished, l.Finished}, "due": {q.ScheduledDue, l.ScheduledDue},
			"states.queued": {q.Count}, "states.started": {q.Started, l.Started}, "states.scheduled": {q.Scheduled},
			"states.deferred": {q.Deferred}, "states.finished": {q.Finished, l.Finished}, "states.failed": {q.Failed, l.Failed},
			"states.canceled": {q.Canceled}} {
			add("rq", name, field, n...)
		}
	}
	return c
}

// queueLibrariesCase: BullMQ (with a worker), Celery (kombu, with messages taken and not
// acknowledged) and asynq on one server.
func queueLibrariesCase(t *testing.T) zeroCase {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	py := redistest.Interpreter(t, "python3", "celery")
	srv := redistest.Start(t)
	var bq struct {
		Queues map[string]struct {
			Counts     map[string]int64 `json:"counts"` // Queue.getJobCounts()
			DelayedDue int64            `json:"delayedDue"`
		} `json:"queues"`
	}
	redistest.RunFixture(t, node, redistest.NodeDir(), &bq, "bullmq.mjs", "redis://"+srv.Addr)
	var cel struct {
		Queues map[string]struct {
			MessageCount int64 `json:"message_count"`
		} `json:"queues"`
		Unacked int64 `json:"unacked"`
	}
	redistest.RunFixture(t, py, "../../store/jobs/testdata/celery", &cel, "fixture.py", "redis://"+srv.Addr+"/0")
	conf := "[[job_queue]]\nname = \"bq\"\nlayout = \"bullmq\"\n\n[[job_queue]]\nname = \"cel\"\nlayout = \"celery\"\n\n" +
		"[[job_queue]]\nname = \"aq\"\nlayout = \"asynq\"\n"
	c := zeroCase{name: "bullmq, celery and asynq", path: libraryConfig(t, srv.Addr, conf), keys: -1, jobCounts: map[[3]string][]int64{}}
	add := func(layout, queue, field string, n ...int64) { c.jobCounts[[3]string{layout, queue, field}] = n }
	for name, q := range bq.Queues {
		n := q.Counts
		for state, count := range n {
			add("bullmq", name, "states."+state, count)
		}
		add("bullmq", name, "waiting", n["waiting"]+n["paused"]+n["prioritized"])
		add("bullmq", name, "active", n["active"])
		add("bullmq", name, "scheduled", n["delayed"])
		add("bullmq", name, "dead", n["failed"])
		add("bullmq", name, "completed", n["completed"])
		add("bullmq", name, "due", q.DelayedDue)
	}
	for name, q := range cel.Queues {
		add("celery", name, "waiting", q.MessageCount)
		add("celery", name, "states.message_count", q.MessageCount)
	}
	add("celery", "", "active", cel.Unacked)
	writeAsynq(t, srv, add)
	return c
}

// writeAsynq lets asynq's own client enqueue tasks (waiting; due in an hour; in a paused queue)
// and adds what asynq's Inspector counts of them.
func writeAsynq(t *testing.T, srv *redistest.Server, add func(layout, queue, field string, n ...int64)) {
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client, insp := asynq.NewClient(opt), asynq.NewInspector(opt)
	defer client.Close()
	defer insp.Close()
	for _, e := range []struct {
		queue string
		in    time.Duration
	}{{"mail", 0}, {"mail", 0}, {"mail", 0}, {"later", 0}, {"later", time.Hour}, {"later", time.Hour}, {"held", 0}, {"held", 0}} {
		if _, err := client.Enqueue(asynq.NewTask("send", nil), asynq.Queue(e.queue), asynq.ProcessIn(e.in)); err != nil {
			t.Fatal(err)
		}
	}
	if err := insp.PauseQueue("held"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"mail", "later", "held"} {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			t.Fatal(err)
		}
		lib := map[string]int64{"pending": int64(info.Pending), "active": int64(info.Active), "scheduled": int64(info.Scheduled),
			"retry": int64(info.Retry), "archived": int64(info.Archived), "completed": int64(info.Completed), "aggregating": int64(info.Aggregating)}
		for state, n := range lib {
			add("asynq", q, "states."+state, n)
		}
		add("asynq", q, "waiting", lib["pending"])
		add("asynq", q, "active", lib["active"])
		add("asynq", q, "scheduled", lib["scheduled"])
		add("asynq", q, "retry", lib["retry"])
		add("asynq", q, "dead", lib["archived"])
		add("asynq", q, "completed", lib["completed"])
		add("asynq", q, "due", 0) // every scheduled task is due in an hour
		add("asynq", q, "throughput.processed_total", int64(info.ProcessedTotal))
		add("asynq", q, "throughput.failed_total", int64(info.FailedTotal))
		hist, err := insp.History(q, 30)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range hist {
			day := d.Date.UTC().Format("2006-01-02")
			add("asynq", q, "throughput.day."+day+".processed", int64(d.Processed))
			add("asynq", q, "throughput.day."+day+".failed", int64(d.Failed))
		}
	}
}

// rqCounts is one queue as store/jobs/testdata/rq/fixture.py prints RQ's own counts: when it counted,
// and with its clock 5 s on.
type rqCounts struct {
	Count, Started, Scheduled, Deferred, Finished, Failed, Canceled int64
	ScheduledDue                                                    int64 `json:"scheduled_due"`
	Later                                                           struct {
		ScheduledDue              int64 `json:"scheduled_due"`
		Started, Finished, Failed int64
	} `json:"later"`
}

// jobCount is what the library counted for a job queue's field; ok is false when the test
// holds no such count.
func (c zeroCase) jobCount(layout, queue, field string) ([]int64, bool) {
	n, ok := c.jobCounts[[3]string{layout, queue, field}]
	return n, ok
}

// anyZero reports whether one of the library's counts is 0.
func anyZero(ns []int64) bool {
	for _, n := range ns {
		if n == 0 {
			return true
		}
	}
	return false
}

// zeroCases fills a server for each config: a limits-only, a rate-limiter-flexible-only, a
// redis_rate-only and two job-library-only ones (Sidekiq and RQ; BullMQ, Celery and asynq).
func zeroCases(t *testing.T) []zeroCase {
	return []zeroCase{limitsCase(t), rlflexCase(t), redisRateCase(t), jobsCase(t), queueLibrariesCase(t)}
}
