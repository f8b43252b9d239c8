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

// rqQueueReport is one queue as store/jobs/testdata/rq/fixture.py prints it: RQ's own counts at the
// fixture's now, and RQ's own counts again with its clock at its later (now + 5 s).
type rqQueueReport struct {
	Count        int64 `json:"count"` // Queue.count
	Len          int64 `json:"len"`   // len(queue)
	Started      int64 `json:"started"`
	Scheduled    int64 `json:"scheduled"`
	Deferred     int64 `json:"deferred"`
	Finished     int64 `json:"finished"`
	Failed       int64 `json:"failed"`
	Canceled     int64 `json:"canceled"`
	ScheduledDue int64 `json:"scheduled_due"` // ScheduledJobRegistry.get_jobs_to_schedule(now)
	Later        struct {
		ScheduledDue int64 `json:"scheduled_due"`
		Started      int64 `json:"started"`
		Finished     int64 `json:"finished"`
		Failed       int64 `json:"failed"`
	} `json:"later"`
	IDs  map[string][]string `json:"ids"` // queued, scheduled, started, failed: job ids as RQ lists them
	Jobs map[string]struct {
		Description string   `json:"description"`
		Enqueued    float64  `json:"enqueued"` // enqueued_at or created_at, seconds
		Due         *float64 `json:"due"`      // a scheduled job's ScheduledJobRegistry.get_scheduled_time
		Deadline    *float64 `json:"deadline"` // a started job's StartedJobRegistry.get_expiration_time
	} `json:"jobs"`
}

type rqReport struct {
	Now       float64                  `json:"now"`
	Later     float64                  `json:"later"`
	Queues    map[string]rqQueueReport `json:"queues"` // Queue.all()
	Workers   int64                    `json:"workers"`
	Suspended bool                     `json:"suspended"`
	Job       string                   `json:"job"` // the id of the job a worker runs
}

func rqFixture(t *testing.T) (*redis.Client, rqReport) {
	t.Helper()
	py := redistest.Interpreter(t, "python3", "rq")
	srv := redistest.Start(t)
	var rep rqReport
	redistest.RunFixture(t, py, "testdata/rq", &rep, "fixture.py", "redis://"+srv.Addr+"/0")
	if len(rep.Queues) != 3 {
		t.Fatalf("fixture reported %d queues, want 3: %+v", len(rep.Queues), rep)
	}
	return srv.Client(t), rep
}

// TestRQStatsMatchRQ reads the queues RQ wrote and holds every number to RQ's own, at the moment
// the fixture counted and again 5 s on, when more scheduled jobs are due and a result has expired.
func TestRQStatsMatchRQ(t *testing.T) {
	rdb, rep := rqFixture(t)
	ctx := t.Context()
	for _, prefix := range []string{"", "rq"} { // "" is RQ's own "rq"
		src := Source{Layout: RQ, Prefix: prefix}
		names, err := src.Registered(ctx, rdb, src.Registries()[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Sorted(maps.Keys(rep.Queues)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
			t.Errorf("registered %v, RQ's Queue.all %v", names, want)
		}
	}
	src := Source{Layout: RQ}
	now, later := unixSeconds(rep.Now), unixSeconds(rep.Later)
	var sawDue, sawExpiry bool
	for name, q := range rep.Queues {
		st, err := src.Stats(ctx, rdb, name, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: rq %+v; hourglass %v, due %d", name, q, st.States, st.Schedule.Due)
		want := map[string]int64{"queued": q.Count, "started": q.Started, "scheduled": q.Scheduled,
			"deferred": q.Deferred, "finished": q.Finished, "failed": q.Failed, "canceled": q.Canceled}
		if !maps.Equal(st.States, want) || q.Len != q.Count {
			t.Errorf("%s: states %v, RQ's %v", name, st.States, want)
		}
		counts := [6]int64{q.Count, q.Started, q.Scheduled + q.Deferred, Absent, q.Failed, q.Finished}
		if jobCountsOf(st) != counts {
			t.Errorf("%s: %v, want %v", name, jobCountsOf(st), counts)
		}
		if s := st.Schedule; !s.Timed || s.Unit != store.Seconds || s.Depth != q.Scheduled || s.Due != q.ScheduledDue {
			t.Errorf("%s: schedule %+v, want depth %d, due %d", name, *s, q.Scheduled, q.ScheduledDue)
		}
		// RQ keeps no latency of its own: its oldest queued job's enqueued_at, read by RQ, is it.
		latency := 0.0
		if ids := q.IDs["queued"]; len(ids) > 0 {
			latency = rep.Now - q.Jobs[ids[0]].Enqueued
		}
		qs, err := src.Queue(name).Stats(ctx, rdb, now)
		if err != nil {
			t.Fatal(err)
		}
		checkLatency(t, name, *qs.Job, latency)

		lst, err := src.Stats(ctx, rdb, name, later)
		if err != nil {
			t.Fatal(err)
		}
		l := q.Later
		if lst.Schedule.Due != l.ScheduledDue || lst.Active != l.Started || lst.Completed != l.Finished || lst.Dead != l.Failed {
			t.Errorf("%s 5 s later: due %d, started %d, finished %d, failed %d; RQ's %+v",
				name, lst.Schedule.Due, lst.Active, lst.Completed, lst.Dead, l)
		}
		sawDue = sawDue || l.ScheduledDue > q.ScheduledDue
		sawExpiry = sawExpiry || l.Finished < q.Finished
	}
	if !sawDue || !sawExpiry {
		t.Errorf("5 s on, no scheduled job fell due (%v) or no result expired (%v): the fixture no longer tests the clock", sawDue, sawExpiry)
	}

	sh, err := src.Shared(ctx, rdb, now)
	if err != nil || sh == nil {
		t.Fatalf("shared %v: %v", sh, err)
	}
	if sh.States["workers"] != rep.Workers || sh.Paused != rep.Suspended || jobCountsOf(*sh) != [6]int64{Absent, Absent, Absent, Absent, Absent, Absent} {
		t.Errorf("shared %+v, RQ's workers %d, suspended %v", *sh, rep.Workers, rep.Suspended)
	}
	checkRQClassify(t, src, rdb, rep)
}

func checkRQClassify(t *testing.T, src Source, rdb *redis.Client, rep rqReport) {
	t.Helper()
	for k := range scanKeys(t, rdb) {
		if _, ok := src.Classify(k); !ok {
			t.Errorf("Classify does not claim RQ's key %q", k)
		}
	}
	cases := []struct {
		key  string
		want Key
		ok   bool
	}{
		{"rq:queues", Key{Registry: true}, true},
		{"rq:queue:mail", Key{Queue: "mail"}, true},
		{"rq:scheduled:mail", Key{Queue: "mail"}, true},
		{"rq:deferred:mail", Key{Queue: "mail"}, true},
		{"rq:wip:default", Key{Queue: "default"}, true},
		{"rq:finished:work", Key{Queue: "work"}, true},
		{"rq:failed:work", Key{Queue: "work"}, true},
		{"rq:canceled:mail", Key{Queue: "mail"}, true},
		{"rq:workers:default", Key{Queue: "default"}, true},
		{"rq:clean_registries:work", Key{Queue: "work"}, true},
		{"rq:queue:_compact:0b7e", Key{}, true},
		{"rq:workers", Key{}, true},
		{"rq:worker:busy-worker", Key{}, true},
		{"rq:job:" + rep.Job, Key{}, true},
		{"rq:results:" + rep.Job, Key{}, true},
		{"rq:suspended", Key{}, true},
		{"rq:queue:", Key{}, false},
		{"rq:limits:api", Key{}, false},
		{"queue:mail", Key{}, false},
		{"sidekiq:rq:queue:mail", Key{}, false},
	}
	for _, c := range cases {
		if got, ok := src.Classify(c.key); ok != c.ok || got != c.want {
			t.Errorf("Classify(%q) = %+v, %v; want %+v, %v", c.key, got, ok, c.want, c.ok)
		}
	}
}

// TestRQCountsLikeItsCleanupWithoutWriting: a started, a finished and a failed entry whose time
// has passed are not counted (RQ's count would clean them up first), and reading leaves them in
// place.
func TestRQCountsLikeItsCleanupWithoutWriting(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	now := time.Unix(1_800_000_000, 500_000_000)
	for _, reg := range []string{"rq:wip:q", "rq:finished:q", "rq:failed:q"} {
		// RQ's scores are whole seconds: the one of now itself has expired, as its cleanup takes
		// the score now (truncated) with it; +inf is a job kept for ever (ttl -1).
		for _, m := range []redis.Z{{Score: 1_799_999_000, Member: "old"}, {Score: 1_800_000_000, Member: "now"},
			{Score: 1_800_000_001, Member: "next"}, {Score: 1_800_000_900, Member: "later"}} {
			rdb.ZAdd(ctx, reg, m)
		}
		rdb.ZAdd(ctx, reg, redis.Z{Score: math.Inf(1), Member: "kept"})
	}
	st, err := Source{Layout: RQ}.Stats(ctx, rdb, "q", now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Active != 3 || st.Completed != 3 || st.Dead != 3 {
		t.Errorf("started %d, finished %d, failed %d; want 3 each (next, later, kept)", st.Active, st.Completed, st.Dead)
	}
	if n := rdb.ZCard(ctx, "rq:wip:q").Val(); n != 5 {
		t.Errorf("the read left %d started entries, want all 5", n)
	}
}
