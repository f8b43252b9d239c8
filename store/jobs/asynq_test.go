package jobs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// asynqFixture is asynq's own layout, written by asynq itself (Client, Server, Inspector) into a
// redis-server of its own, and the documentation of that layout by example:
//
//	work   a Server (concurrency 1) completed 2 tasks (kept by Retention), failed one with retries
//	       left (retry, due again in an hour), failed one with MaxRetry(0) (archived), and holds
//	       one (active); 2 more wait behind it (pending).
//	later  no server: 2 pending; scheduled tasks due in 1 ms (asynq scores whole seconds, so they
//	       are due at once: only a server's forwarder would move them to pending), 2 s, 1 min and
//	       2 h; and 2 tasks in a group (aggregating).
//	held   paused, with 2 pending.
type asynqFixture struct {
	rdb  *redis.Client
	insp *asynq.Inspector
	// before is a moment before any scheduled task was enqueued: none is due at it.
	before time.Time
}

func newAsynqFixture(t *testing.T) asynqFixture {
	t.Helper()
	srv := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	enqueue := func(typ string, opts ...asynq.Option) {
		t.Helper()
		if _, err := client.Enqueue(asynq.NewTask(typ, nil), opts...); err != nil {
			t.Fatal(err)
		}
	}
	fx := asynqFixture{rdb: srv.Client(t), insp: insp, before: time.Now()}
	later := asynq.Queue("later")
	enqueue("ok", later)
	enqueue("ok", later)
	for _, in := range []time.Duration{time.Millisecond, time.Millisecond, 2 * time.Second, 2 * time.Second, time.Minute, 2 * time.Hour} {
		enqueue("ok", later, asynq.ProcessIn(in))
	}
	enqueue("ok", later, asynq.Group("batch"))
	enqueue("ok", later, asynq.Group("batch"))
	enqueue("ok", asynq.Queue("held"))
	enqueue("ok", asynq.Queue("held"))
	if err := insp.PauseQueue("held"); err != nil {
		t.Fatal(err)
	}

	work := asynq.Queue("work")
	startServer(t, opt)
	enqueue("ok", work, asynq.Retention(time.Hour))
	enqueue("ok", work, asynq.Retention(time.Hour))
	enqueue("fail", work, asynq.MaxRetry(3))
	enqueue("fail", work, asynq.MaxRetry(0))
	fx.waitFor(t, "work", func(q *asynq.QueueInfo) bool {
		return q.Completed == 2 && q.Retry == 1 && q.Archived == 1 && q.Pending == 0 && q.Active == 0
	})
	enqueue("block", work)
	fx.waitFor(t, "work", func(q *asynq.QueueInfo) bool { return q.Active == 1 && q.Pending == 0 })
	enqueue("ok", work)
	enqueue("ok", work)
	return fx
}

// startServer runs an asynq Server on the queue "work" with one worker until the test ends: it
// completes "ok", fails "fail" (retrying in an hour while retries are left), and holds "block"
// until the test ends.
func startServer(t *testing.T, opt asynq.RedisClientOpt) {
	t.Helper()
	release := make(chan struct{})
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency:    1,
		Queues:         map[string]int{"work": 1},
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour },
		LogLevel:       asynq.FatalLevel,
	})
	handler := asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		switch task.Type() {
		case "fail":
			return errors.New("fails")
		case "block":
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	})
	if err := srv.Start(handler); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(release)
		srv.Shutdown()
	})
}

// waitFor polls asynq's GetQueueInfo until cond holds, failing the test after 30 s.
func (fx asynqFixture) waitFor(t *testing.T, queue string, cond func(*asynq.QueueInfo) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		q, err := fx.insp.GetQueueInfo(queue)
		if err == nil && cond(q) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("asynq queue %s did not reach the state wanted in 30 s: %+v %v", queue, q, err)
		}
		<-tick.C
	}
}

// dueAt counts the queue's scheduled tasks whose NextProcessAt, as asynq lists them, is at or
// before now.
func (fx asynqFixture) dueAt(t *testing.T, queue string, now time.Time) int64 {
	t.Helper()
	tasks, err := fx.insp.ListScheduledTasks(queue, asynq.PageSize(1000))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, task := range tasks {
		if !task.NextProcessAt.After(now) {
			n++
		}
	}
	return n
}

// TestAsynqStatsMatchAsynq reads the queues asynq wrote and holds every number to asynq's own
// Inspector.GetQueueInfo.
func TestAsynqStatsMatchAsynq(t *testing.T) {
	fx := newAsynqFixture(t)
	src := Source{Layout: Asynq}
	for _, name := range []string{"work", "later", "held"} {
		info, err := fx.insp.GetQueueInfo(name)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		st, err := src.Stats(t.Context(), fx.rdb, name, now)
		if err != nil {
			t.Fatal(err)
		}
		lib := map[string]int64{
			"pending": int64(info.Pending), "active": int64(info.Active), "scheduled": int64(info.Scheduled),
			"retry": int64(info.Retry), "archived": int64(info.Archived), "completed": int64(info.Completed),
			"aggregating": int64(info.Aggregating),
		}
		due := fx.dueAt(t, name, now)
		t.Logf("%s: asynq %v size=%d paused=%v scheduled due %d; hourglass %v paused=%v due %d of %d",
			name, lib, info.Size, info.Paused, due, st.States, st.Paused, st.Schedule.Due, st.Schedule.Depth)
		if !maps.Equal(st.States, lib) {
			t.Errorf("%s: States %v, asynq's QueueInfo %v", name, st.States, lib)
		}
		var size int64
		for _, n := range st.States {
			size += n
		}
		if size != int64(info.Size) {
			t.Errorf("%s: the states sum to %d, asynq's Size is %d", name, size, info.Size)
		}
		want := jobCounts{
			Waiting: lib["pending"], Active: lib["active"], Scheduled: lib["scheduled"], Retry: lib["retry"],
			Dead: lib["archived"], Completed: lib["completed"], Paused: info.Paused,
		}
		if got := countsOf(st); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		s := st.Schedule
		if !s.Timed || s.Missing || s.Unit != store.Seconds || s.Depth != lib["scheduled"] || s.Due != due {
			t.Errorf("%s: schedule %+v, want timed, depth %d, due %d", name, *s, lib["scheduled"], due)
		}
		qs, err := src.Queue(name).Stats(t.Context(), fx.rdb, now)
		if err != nil {
			t.Fatal(err)
		}
		checkLatency(t, name, *qs.Job, info.Latency.Seconds())
	}
	if due := fx.dueAt(t, "later", time.Now()); due < 2 || due == 6 {
		t.Errorf("the fixture should leave some scheduled tasks due and some not: %d of 6 due", due)
	}
	st, err := src.Stats(t.Context(), fx.rdb, "nosuch", time.Now())
	if err != nil || !st.Schedule.Missing {
		t.Errorf("a queue asynq does not know: %+v %v, want Missing", st.Schedule, err)
	}
}

// TestAsynqLaterNowMakesScheduledDue moves now past the scheduled tasks' due times: those asynq
// scheduled for then count as due.
func TestAsynqLaterNowMakesScheduledDue(t *testing.T) {
	fx := newAsynqFixture(t)
	src := Source{Layout: Asynq}
	prev := int64(-1)
	for _, d := range []time.Duration{0, 5 * time.Second, 3 * time.Minute, 3 * time.Hour} {
		now := fx.before.Add(d)
		st, err := src.Stats(t.Context(), fx.rdb, "later", now)
		if err != nil {
			t.Fatal(err)
		}
		want := fx.dueAt(t, "later", now)
		if st.Schedule.Due != want || st.Schedule.Due <= prev {
			t.Errorf("at +%v: due %d, want asynq's %d, more than %d before", d, st.Schedule.Due, want, prev)
		}
		prev = st.Schedule.Due
	}
	if prev != 6 {
		t.Errorf("three hours on, %d scheduled tasks due, want all 6", prev)
	}
}

// TestAsynqRegisteredAndClassify reads asynq's registry of queues and claims every key asynq
// wrote, for its queue, and no other key.
func TestAsynqRegisteredAndClassify(t *testing.T) {
	fx := newAsynqFixture(t)
	src := Source{Layout: Asynq}
	if r := src.Registries(); !slices.Equal(r, []string{"asynq:queues"}) {
		t.Fatalf("Registries = %v", r)
	}
	names, err := src.Registered(t.Context(), fx.rdb, "asynq:queues")
	if want, _ := fx.insp.Queues(); err != nil || !slices.Equal(names, []string{"held", "later", "work"}) || len(want) != 3 {
		t.Errorf("Registered = %v %v, asynq's Queues %v", names, err, want)
	}
	keys := scanAll(t, fx.rdb, "*")
	if len(keys) < 25 {
		t.Fatalf("asynq wrote only %d keys: %v", len(keys), keys)
	}
	for _, k := range []string{"asynq:queues", "asynq:servers"} { // the registry, a server's heartbeat
		if !slices.Contains(keys, k) {
			t.Errorf("asynq wrote no %s: %v", k, keys)
		}
	}
	for _, k := range keys {
		var want Key
		switch {
		case k == "asynq:queues":
			want.Registry = true
		case strings.HasPrefix(k, "asynq:{"):
			want.Queue = k[len("asynq:{"):strings.Index(k, "}")]
		}
		if got, ok := src.Classify(k); !ok || got != want {
			t.Errorf("Classify(%q) = %+v %v, want %+v", k, got, ok, want)
		}
	}
	odd := map[string]Key{
		"asynq:{a}:b}:pending":              {Queue: "a}:b"},
		"asynq:{work}:processed:2026-01-02": {Queue: "work"},
		"asynq:{work}:g:batch:set-id":       {Queue: "work"},
		"asynq:servers:{host:1:id}":         {},
		"asynq:scheduler_history:entry":     {},
	}
	for k, want := range odd {
		if got, ok := src.Classify(k); !ok || got != want {
			t.Errorf("Classify(%q) = %+v %v, want %+v", k, got, ok, want)
		}
	}
	for _, k := range []string{"asynq", "asynq:", "asynq:other", "asynq:{work}:nonsense", "asynq:{work}:t:", "asynq:{work}", "myapp:{work}:pending", "bull:work:wait"} {
		if got, ok := src.Classify(k); ok {
			t.Errorf("Classify(%q) = %+v, want not asynq's", k, got)
		}
	}
}
