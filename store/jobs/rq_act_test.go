package jobs

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// rqView is what store/jobs/testdata/rq/read.py prints: each queue's ids as RQ lists them, and the
// jobs asked for as Job.fetch reads them (nil: RQ cannot fetch it).
type rqView struct {
	Queues map[string]map[string][]string `json:"queues"`
	Jobs   map[string]*struct {
		Status     string  `json:"status"`
		Origin     string  `json:"origin"`
		EnqueuedAt *string `json:"enqueued_at"`
		StartedAt  *string `json:"started_at"`
		ExcInfo    *string `json:"exc_info"`
	} `json:"jobs"`
}

func readRQ(t *testing.T, rdb *redis.Client, args ...string) rqView {
	t.Helper()
	var v rqView
	redistest.RunFixture(t, redistest.Interpreter(t, "python3", "rq"), "testdata/rq", &v,
		append([]string{"read.py", "redis://" + rdb.Options().Addr + "/0"}, args...)...)
	return v
}

// rqJobID finds the id of the job whose description the fixture reported, in a queue's list or
// registry.
func rqJobID(t *testing.T, rep rqReport, queue, listed, description string) string {
	t.Helper()
	q := rep.Queues[queue]
	for _, id := range q.IDs[listed] {
		if q.Jobs[id].Description == description {
			return id
		}
	}
	t.Fatalf("no %s job %q in %s: %+v", listed, description, queue, q.IDs)
	return ""
}

// TestRQActsAsRQ: jobs RQ itself scheduled, failed and started are run now, requeued and deleted,
// and RQ's own API then finds each where its scheduler, its requeue and Job.delete leave it: a
// scheduled job run now is run by RQ's worker; a failed or started job requeued is queued with its
// failure cleared; a deleted job cannot be fetched and is listed nowhere. Acting on a job no
// longer where the page showed it writes nothing.
func TestRQActsAsRQ(t *testing.T) {
	rdb, rep := rqFixture(t)
	src := Source{Layout: RQ}
	ctx, now := t.Context(), time.Now()
	later := rqJobID(t, rep, "mail", "scheduled", "jobs.send('later')")
	failed := rqJobID(t, rep, "work", "failed", "jobs.fail('once')")
	doomed := rqJobID(t, rep, "work", "failed", "jobs.fail('twice')")
	muchLater := rqJobID(t, rep, "default", "scheduled", "jobs.send('much-later')")
	queued := rep.Queues["default"].IDs["queued"][0]
	started := rep.Queues["default"].IDs["started"][0]
	task := func(id string) Task { return Task{Member: id, ID: id} }
	for _, c := range []struct {
		queue string
		sec   TaskSection
		id    string
		a     TaskAction
	}{
		{"mail", SectionLater, later, ActionRunNow},
		{"work", SectionDead, failed, ActionRunNow},
		{"default", SectionInFlight, started, ActionReturn},
		{"work", SectionDead, doomed, ActionDelete},
		{"default", SectionLater, muchLater, ActionDelete},
		{"default", SectionWaiting, queued, ActionDelete},
	} {
		if line, err := src.Queue(c.queue).Act(ctx, rdb, c.sec, task(c.id), c.a, now); err != nil {
			t.Fatalf("%s %s %s: %q %v", c.a, c.sec, c.id, line, err)
		}
	}

	v := readRQ(t, rdb, "--work", "mail", later, failed, started, doomed, muchLater, queued)
	if j := v.Jobs[later]; j == nil || j.Status != "finished" || !slices.Contains(v.Queues["mail"]["finished"], later) {
		t.Errorf("the scheduled job run now: %+v, want run by RQ's worker (finished)", j)
	}
	for _, id := range []string{failed, started} {
		j := v.Jobs[id]
		if j == nil || j.Status != "queued" || j.StartedAt != nil || j.ExcInfo != nil && *j.ExcInfo != "" || j.EnqueuedAt == nil {
			t.Errorf("%s requeued: %+v, want queued, started_at and exc_info cleared, enqueued_at set", id, j)
		}
	}
	if !slices.Contains(v.Queues["work"]["queued"], failed) || slices.Contains(v.Queues["work"]["failed"], failed) ||
		!slices.Contains(v.Queues["default"]["queued"], started) || slices.Contains(v.Queues["default"]["started"], started) {
		t.Errorf("requeued jobs are not where RQ's requeue leaves them: %v", v.Queues)
	}
	for _, id := range []string{doomed, muchLater, queued} {
		if v.Jobs[id] != nil {
			t.Errorf("deleted job %s can still be fetched: %+v", id, v.Jobs[id])
		}
		for q, lists := range v.Queues {
			for name, ids := range lists {
				if slices.Contains(ids, id) {
					t.Errorf("deleted job %s is still in %s's %s", id, q, name)
				}
			}
		}
	}

	before := dumpKeys(t, rdb)
	for _, c := range []struct {
		queue string
		sec   TaskSection
		id    string
		a     TaskAction
	}{
		{"mail", SectionLater, later, ActionRunNow},
		{"work", SectionDead, failed, ActionRunNow},
		{"default", SectionInFlight, started, ActionReturn},
		{"work", SectionDead, doomed, ActionDelete},
		{"default", SectionWaiting, queued, ActionDelete},
	} {
		_, err := src.Queue(c.queue).Act(ctx, rdb, c.sec, task(c.id), c.a, now)
		wantGone(t, rdb, before, string(c.a)+" "+c.id+" again", err)
	}
	if _, err := src.Queue("default").Act(ctx, rdb, SectionWaiting, task(started), ActionRunNow, now); !errors.Is(err, ErrNotSupported) {
		t.Errorf("run now of a queued job: %v, want ErrNotSupported", err)
	}
	wantUnchanged(t, rdb, before, "refusal")
}

// TestRQRunNowLeavesAJobRQCannotFetch: a scheduled id whose hash is gone is left where it is, as
// RQ's scheduler leaves it; deleting it removes only the id.
func TestRQRunNowLeavesAJobRQCannotFetch(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	rdb.ZAdd(ctx, "rq:scheduled:q", redis.Z{Score: 2e9, Member: "lost"})
	before := dumpKeys(t, rdb)
	src := Source{Layout: RQ}
	if _, err := src.Queue("q").Act(ctx, rdb, SectionLater, Task{Member: "lost", ID: "lost"}, ActionRunNow, time.Now()); err == nil || errors.Is(err, ErrTaskGone) {
		t.Fatalf("run now of an id without its job: %v, want a refusal naming the missing hash", err)
	}
	wantUnchanged(t, rdb, before, "run now of an id without its job")
	if line, err := src.Queue("q").Act(ctx, rdb, SectionLater, Task{Member: "lost", ID: "lost"}, ActionDelete, time.Now()); err != nil || rdb.Exists(ctx, "rq:scheduled:q").Val() != 0 {
		t.Fatalf("delete of an id without its job: %q %v", line, err)
	}
}

// TestRQRequeueMatchesRQsOwn: of two jobs that failed alike, one requeued by hourglass and one
// by RQ's FailedJobRegistry.requeue end with the same fields (but their ids and times), both at
// the back of their queue.
func TestRQRequeueMatchesRQsOwn(t *testing.T) {
	rdb, rep := rqFixture(t)
	ctx := t.Context()
	ours := rqJobID(t, rep, "work", "failed", "jobs.fail('once')")
	theirs := rqJobID(t, rep, "work", "failed", "jobs.fail('twice')")
	if _, err := (Source{Layout: RQ}).Queue("work").Act(ctx, rdb, SectionDead, Task{Member: ours, ID: ours}, ActionRunNow, time.Now()); err != nil {
		t.Fatal(err)
	}
	readRQ(t, rdb, "--requeue", "work", theirs)
	a, b := rdb.HGetAll(ctx, "rq:job:"+ours).Val(), rdb.HGetAll(ctx, "rq:job:"+theirs).Val()
	for _, f := range []string{"created_at", "enqueued_at", "data", "description", "last_heartbeat", "worker_name"} {
		if a[f] == "" && f == "enqueued_at" || (a[f] == "") != (b[f] == "") {
			t.Errorf("%s: ours %q, RQ's %q", f, a[f], b[f])
		}
		delete(a, f)
		delete(b, f)
	}
	t.Logf("fields compared: %q", slices.Sorted(maps.Keys(a)))
	if !maps.Equal(a, b) {
		t.Errorf("requeued job fields differ:\nours %q\nRQ's %q", a, b)
	}
	if q := rdb.LRange(ctx, "rq:queue:work", 0, -1).Val(); !slices.Equal(q, []string{ours, theirs}) {
		t.Errorf("queue %v, want both requeued at the back, ours first", q)
	}
}
