package jobs

import (
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// sidekiqReport is what store/jobs/testdata/sidekiq/fixture.rb prints: Sidekiq's own counts, taken at
// Now (float seconds).
type sidekiqReport struct {
	Now   float64 `json:"now"`
	Stats struct {
		Enqueued      int64 `json:"enqueued"`
		ScheduledSize int64 `json:"scheduled_size"`
		RetrySize     int64 `json:"retry_size"`
		DeadSize      int64 `json:"dead_size"`
		ProcessesSize int64 `json:"processes_size"`
		WorkersSize   int64 `json:"workers_size"`
		Processed     int64 `json:"processed"`
		Failed        int64 `json:"failed"`
	} `json:"stats"` // Sidekiq::Stats
	Queues       map[string]int64   `json:"queues"`    // Sidekiq::Stats#queues
	Sizes        map[string]int64   `json:"sizes"`     // Sidekiq::Queue.new(name).size
	Latencies    map[string]float64 `json:"latencies"` // Sidekiq::Queue.new(name).latency, in seconds
	ScheduledDue int64              `json:"scheduled_due"`
	DueIn5s      int64              `json:"scheduled_due_in_5s"` // ScheduledSet entries due by Now + 5 s
	Process      string             `json:"process"`             // the identity of the process it ran
	Jobs         struct {
		Queues                map[string][]string `json:"queues"` // Sidekiq::Queue's jids, the newest first
		Schedule, Retry, Dead [][3]any            // [jid, score, enqueued_at or created_at], the highest score first
	} `json:"jobs"`
}

// unixSeconds is a fixture's clock reading (float seconds since the epoch), to the microsecond.
func unixSeconds(s float64) time.Time { return time.UnixMicro(int64(math.Round(s * 1e6))) }

// scanKeys is every key of the test's own server (SCAN, as the scanner would).
func scanKeys(t *testing.T, rdb *redis.Client) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	it := rdb.Scan(t.Context(), 0, "*", 100).Iterator()
	for it.Next(t.Context()) {
		keys[it.Val()] = true
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// jobCountsOf is a Stats' counts in order: Waiting, Active, Scheduled, Retry, Dead, Completed.
func jobCountsOf(st Stats) [6]int64 {
	return [6]int64{st.Waiting, st.Active, st.Scheduled, st.Retry, st.Dead, st.Completed}
}

// sidekiqFixture starts a redis-server and lets Sidekiq itself fill it, under namespace ns when
// it is not "" (with redis-namespace).
func sidekiqFixture(t *testing.T, ns string) (*redis.Client, sidekiqReport) {
	t.Helper()
	mods := []string{"sidekiq"}
	if ns != "" {
		mods = append(mods, "redis/namespace")
	}
	ruby := redistest.Interpreter(t, "ruby", mods...)
	srv := redistest.Start(t)
	var rep sidekiqReport
	redistest.RunFixture(t, ruby, "testdata/sidekiq", &rep, "fixture.rb", "redis://"+srv.Addr+"/0", ns)
	if len(rep.Queues) != 3 || rep.Stats.RetrySize == 0 || rep.Stats.DeadSize == 0 || rep.Stats.WorkersSize == 0 {
		t.Fatalf("fixture did not fill three queues, retry, dead and a busy process: %+v", rep)
	}
	return srv.Client(t), rep
}

// TestSidekiqStatsMatchSidekiq reads what Sidekiq wrote, bare and under a redis-namespace, and
// holds every number to Sidekiq::Stats, Sidekiq::Queue#size and the ScheduledSet's due entries.
func TestSidekiqStatsMatchSidekiq(t *testing.T) {
	for _, ns := range []string{"", "myapp"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			rdb, rep := sidekiqFixture(t, ns)
			src := Source{Layout: Sidekiq, Prefix: ns}
			ctx, now := t.Context(), unixSeconds(rep.Now)

			regs := src.Registries()
			if len(regs) != 1 {
				t.Fatalf("registries %v, want the queues set", regs)
			}
			names, err := src.Registered(ctx, rdb, regs[0])
			if err != nil {
				t.Fatal(err)
			}
			if want := slices.Sorted(maps.Keys(rep.Queues)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
				t.Errorf("registered %v, Sidekiq's queues %v", names, want)
			}
			for _, q := range names {
				st, err := src.Stats(ctx, rdb, q, now)
				if err != nil {
					t.Fatal(err)
				}
				want := [6]int64{rep.Sizes[q], Absent, Absent, Absent, Absent, Absent}
				if jobCountsOf(st) != want || st.States["size"] != rep.Queues[q] || st.Schedule != nil {
					t.Errorf("%s: %v %v, want %v (Sidekiq::Queue#size %d)", q, jobCountsOf(st), st.States, want, rep.Sizes[q])
				}
				// The snapshot reads a queue through its jobs.Queue: the same figures, and the
				// latency Sidekiq's Queue#latency gives at the same instant.
				qs, err := src.Queue(q).Stats(ctx, rdb, now)
				if err != nil || qs.Job == nil || jobCountsOf(*qs.Job) != want {
					t.Fatalf("%s through its Queue: %+v, %v; want %v", q, qs.Job, err, want)
				}
				checkLatency(t, q, *qs.Job, rep.Latencies[q])
			}
			// A queue a registry names "" (no Sidekiq writes one, another writer might) is a queue
			// with nothing in it, not the shared sets: those are SharedQueue's.
			if qs, err := src.Queue("").Stats(ctx, rdb, now); err != nil || qs.Job == nil || qs.Job.Waiting != 0 || qs.Job.States["size"] != 0 {
				t.Errorf(`the queue "" read %+v, %v; want an empty queue`, qs.Job, err)
			}
			if qs, err := src.SharedQueue().Stats(ctx, rdb, now); err != nil || qs.Job == nil || qs.Job.States["retry_size"] != rep.Stats.RetrySize {
				t.Errorf("the shared sets through SharedQueue: %+v, %v; Sidekiq's retry size %d", qs.Job, err, rep.Stats.RetrySize)
			}
			checkSidekiqShared(t, src, rdb, rep, now)
			checkSidekiqClassify(t, src, rdb, rep)
		})
	}
}

func checkSidekiqShared(t *testing.T, src Source, rdb *redis.Client, rep sidekiqReport, now time.Time) {
	t.Helper()
	ctx := t.Context()
	sh, err := src.Shared(ctx, rdb, now)
	if err != nil || sh == nil {
		t.Fatalf("shared %v: %v", sh, err)
	}
	s := rep.Stats
	t.Logf("sidekiq %+v, due %d (%d 5 s later); hourglass %v due %d", s, rep.ScheduledDue, rep.DueIn5s, sh.States, sh.Schedule.Due)
	wantStates := map[string]int64{
		"enqueued": s.Enqueued, "scheduled_size": s.ScheduledSize, "retry_size": s.RetrySize, "dead_size": s.DeadSize,
		"processes_size": s.ProcessesSize, "workers_size": s.WorkersSize, "processed": s.Processed, "failed": s.Failed,
	}
	if !maps.Equal(sh.States, wantStates) {
		t.Errorf("shared states %v, Sidekiq::Stats %v", sh.States, wantStates)
	}
	want := [6]int64{s.Enqueued, s.WorkersSize, s.ScheduledSize, s.RetrySize, s.DeadSize, Absent}
	if jobCountsOf(*sh) != want {
		t.Errorf("shared %v, want %v", jobCountsOf(*sh), want)
	}
	sc := sh.Schedule
	if sc == nil || !sc.Timed || sc.Unit != store.Seconds || sc.Depth != s.ScheduledSize || sc.Due != rep.ScheduledDue {
		t.Fatalf("schedule %+v, want timed in seconds, depth %d, due %d", sc, s.ScheduledSize, rep.ScheduledDue)
	}
	// Five seconds on, the jobs due within them are due too: nothing moved them, only the clock.
	later, err := src.Shared(ctx, rdb, now.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if later.Schedule.Due != rep.DueIn5s || rep.DueIn5s <= rep.ScheduledDue {
		t.Errorf("5 s later %d due, Sidekiq's ScheduledSet %d (and %d now)", later.Schedule.Due, rep.DueIn5s, rep.ScheduledDue)
	}
}

// checkSidekiqClassify holds Classify to every key Sidekiq left (all of them Sidekiq's) and to
// keys that are not its.
func checkSidekiqClassify(t *testing.T, src Source, rdb *redis.Client, rep sidekiqReport) {
	t.Helper()
	p := ""
	if src.Prefix != "" {
		p = src.Prefix + ":"
	}
	for k := range scanKeys(t, rdb) {
		if _, ok := src.Classify(k); !ok {
			t.Errorf("Classify does not claim Sidekiq's key %q", k)
		}
	}
	cases := []struct {
		key  string
		want Key
		ok   bool
	}{
		{p + "queues", Key{Registry: true}, true},
		{p + "queue:mail", Key{Queue: "mail"}, true},
		{p + "queue:default", Key{Queue: "default"}, true},
		{p + "schedule", Key{}, true},
		{p + "retry", Key{}, true},
		{p + "dead", Key{}, true},
		{p + "processes", Key{}, true},
		{p + rep.Process, Key{}, true},
		{p + rep.Process + ":workers", Key{}, true},
		{p + "stat:processed", Key{}, true},
		{p + "stat:failed:2024-01-31", Key{}, true},
		{p + "orders:pending", Key{}, false},
		{p + "queue:", Key{}, false},
		{"hg:c:1h:clicks:2024013112", Key{}, false},
	}
	if p != "" {
		cases = append(cases, struct {
			key  string
			want Key
			ok   bool
		}{"queue:mail", Key{}, false}) // outside the namespace
	}
	for _, c := range cases {
		if got, ok := src.Classify(c.key); ok != c.ok || got != c.want {
			t.Errorf("Classify(%q) = %+v, %v; want %+v, %v", c.key, got, ok, c.want, c.ok)
		}
	}
}

// TestSidekiqRQCeleryReadAnEmptyRedis: before a library has written anything, every queue and
// the shared stats read as empty (not as errors), and a schedule that is not there yet is no
// warning: Redis deletes an emptied sorted set.
func TestSidekiqRQCeleryReadAnEmptyRedis(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	now := time.Unix(1_800_000_000, 0)
	for _, src := range []Source{{Layout: Sidekiq}, {Layout: Sidekiq, Prefix: "myapp"}, {Layout: RQ}, {Layout: Celery}, {Layout: Celery, Prefix: "myapp:"}} {
		names, err := src.Registered(t.Context(), rdb, src.Registries()[0])
		if err != nil || len(names) != 0 {
			t.Errorf("%+v: registered %v, %v", src, names, err)
		}
		st, err := src.Stats(t.Context(), rdb, "default", now)
		if err != nil || st.Waiting != 0 || st.Schedule != nil && (st.Schedule.Missing || st.Schedule.Depth != 0) {
			t.Errorf("%+v: stats %+v, %v", src, st, err)
		}
		sh, err := src.Shared(t.Context(), rdb, now)
		if err != nil || sh == nil || sh.Schedule != nil && sh.Schedule.Missing {
			t.Errorf("%+v: shared %+v, %v", src, sh, err)
		}
		for _, c := range jobCountsOf(st) {
			if c != 0 && c != Absent {
				t.Errorf("%+v: counts %v on an empty server", src, jobCountsOf(st))
			}
		}
	}
}
