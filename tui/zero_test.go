package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/go-redis/redis_rate/v10"
	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/theme"
)

// zeroStatuses fills a server for each config (limits only, rate-limiter-flexible only, redis_rate
// only, job libraries only), each library writing its own keys, and returns each one's status
// after a complete sweep.
func zeroStatuses(t *testing.T) map[string]snapshot.Status {
	py := redistest.Interpreter(t, "python3", "limits", "redis", "rq")
	node := redistest.Interpreter(t, "node", "rate-limiter-flexible", "ioredis")
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	out := map[string]snapshot.Status{}
	lim := redistest.Start(t)
	redistest.RunFixture(t, py, "../store/limits/testdata/limits", nil, "fixture.py", "redis://"+lim.Addr+"/0")
	out["limits"] = sweptStatus(t, lim, "[[limiter]]\nname = \"py\"\nlayout = \"limits\"\n")
	rl := redistest.Start(t)
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "rlflex.mjs", "redis://"+rl.Addr)
	out["rate-limiter-flexible"] = sweptStatus(t, rl, "[[limiter]]\nname = \"api\"\nlayout = \"rate-limiter-flexible\"\nlimit = 5\nwindow = \"60s\"\n\n"+
		"[[limiter]]\nname = \"login\"\nlayout = \"rate-limiter-flexible\"\npattern = \"login:<user>\"\nlimit = 5\nwindow = \"60s\"\n")
	gr := redistest.Start(t)
	rrl := redis_rate.NewLimiter(gr.Client(t))
	for name, n := range map[string]int{"under": 3, "at": 10, "over": 13} {
		for range n {
			if _, err := rrl.Allow(t.Context(), name, redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Hour}); err != nil {
				t.Fatal(err)
			}
		}
	}
	out["redis_rate"] = sweptStatus(t, gr, "[[limiter]]\nname = \"go\"\nlayout = \"redis_rate\"\nlimit = 10\nwindow = \"1h\"\n")
	jobs := redistest.Start(t)
	redistest.RunFixture(t, ruby, "../store/jobs/testdata/sidekiq", nil, "fixture.rb", "redis://"+jobs.Addr+"/0", "")
	redistest.RunFixture(t, py, "../store/jobs/testdata/rq", nil, "fixture.py", "redis://"+jobs.Addr+"/0")
	out["jobs"] = sweptStatus(t, jobs, "[[job_queue]]\nname = \"sk\"\nlayout = \"sidekiq\"\n\n[[job_queue]]\nname = \"rq\"\nlayout = \"rq\"\n")
	out["bullmq, celery and asynq"] = queueLibrariesStatus(t, py)
	out["bloom"] = sweptBloomStatus(t)
	return out
}

// sweptBloomStatus is a swept server holding a Bloom filter that scaled twice, written by the store,
// and a hash under its pattern that is not one.
func sweptBloomStatus(t *testing.T) snapshot.Status {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	f, err := store.New(rdb, store.Options{}).Bloom("bf:ids", store.BloomOptions{Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		ids := make([]string, 64)
		for j := range ids {
			ids[j] = fmt.Sprint("id", i*64+j)
		}
		if _, err := f.AddMany(t.Context(), ids...); err != nil {
			t.Fatal(err)
		}
	}
	rdb.HSet(t.Context(), "bf:other", "field", "1")
	return sweptStatus(t, srv, "[[bloom]]\nname = \"ids\"\npattern = \"bf:<name>\"\n")
}

// queueLibrariesStatus lets BullMQ, Celery and asynq each write their queues on one server, and
// sweeps it with a config of the three.
func queueLibrariesStatus(t *testing.T, py string) snapshot.Status {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	redistest.Interpreter(t, "python3", "celery")
	srv := redistest.Start(t)
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "bullmq.mjs", "redis://"+srv.Addr)
	redistest.RunFixture(t, py, "../store/jobs/testdata/celery", nil, "fixture.py", "redis://"+srv.Addr+"/0")
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: srv.Addr})
	defer client.Close()
	for _, in := range []time.Duration{0, 0, time.Hour} {
		if _, err := client.Enqueue(asynq.NewTask("send", nil), asynq.Queue("mail"), asynq.ProcessIn(in)); err != nil {
			t.Fatal(err)
		}
	}
	return sweptStatus(t, srv, "[[job_queue]]\nname = \"bq\"\nlayout = \"bullmq\"\n\n[[job_queue]]\nname = \"cel\"\nlayout = \"celery\"\n\n"+
		"[[job_queue]]\nname = \"aq\"\nlayout = \"asynq\"\n")
}

// sweptStatus sweeps srv with conf until a sweep completes, and returns that poll's status.
func sweptStatus(t *testing.T, srv *redistest.Server, conf string) snapshot.Status {
	t.Helper()
	cfg, err := config.Parse("zero.toml", []byte(conf), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	w := watch.New(srv.Client(t), cfg.Counters, cfg.SweepOptions(true))
	var st snapshot.Status
	if !redistest.Until(20*time.Second, func() bool {
		var err error
		st, err = w.Poll(t.Context(), time.Second, "")
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return st.Sweep.Completed
	}) {
		t.Fatal("no sweep completed in 20 s")
	}
	return st
}

// zeroScreens are the key presses that open each view, and each level the Snapshot alone fills
// (a limiter's keys; the second limiter's too).
var zeroScreens = [][]string{{"1"}, {"2"}, {"3"}, {"4"}, {"5"}, {"5", "enter"}, {"5", "down"}, {"5", "down", "enter"}, {"6"}, {"7"}}

// TestViewsShowNoZeroThatIsNotKnown renders every view of the console over data the real
// libraries wrote (a limits-only, a rate-limiter-flexible-only, a redis_rate-only and two
// job-library-only configs) and Bloom filters the store wrote,
// and checks each figure cell: a table's 0 only where the Snapshot's field it shows is 0 (the
// JSON test of internal/cli holds those to the libraries' own answers), "—" where the field is
// null; an Overview panel's 0 only where some structure keeps the figure and their sum is 0.
func TestViewsShowNoZeroThatIsNotKnown(t *testing.T) {
	for name, st := range zeroStatuses(t) {
		doc := snapshotDoc(t, st.Snapshot)
		for _, keys := range zeroScreens {
			m := New(Options{Target: "127.0.0.1", Mode: "standalone", Source: &fakeSource{status: st}, Refresh: time.Second,
				Now: func() time.Time { return clock }, Location: time.UTC, ReadOnlyWhy: "read-only"}, theme.New(theme.Dark))
			m.Update(tea.WindowSizeMsg{Width: 220, Height: 60})
			poll(t, m)
			press(m, keys...)
			s := screen(m)
			where := fmt.Sprintf("%s %v", name, keys)
			checkTables(t, where, s, doc)
			checkPanels(t, where, s, st.Snapshot)
		}
	}
}
