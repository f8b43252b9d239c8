package jobs

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRQTasksMatchRQ pages through every section of the queues RQ wrote and holds the job ids and
// their order to what RQ's own Queue and registries list (the failed registry turned around: the
// newest first), and each job's description, enqueue time, due time and deadline to RQ's Job and
// registries.
func TestRQTasksMatchRQ(t *testing.T) {
	rdb, rep := rqFixture(t)
	src := Source{Layout: RQ}
	now := unixSeconds(rep.Now)
	if got := src.Queue("mail").Sections(); !slices.Equal(got, []TaskSection{SectionWaiting, SectionLater, SectionInFlight, SectionDead}) {
		t.Errorf("sections %v", got)
	}
	var listed int
	for name, q := range rep.Queues {
		failed := slices.Clone(q.IDs["failed"])
		slices.Reverse(failed)
		want := map[TaskSection][]string{SectionWaiting: q.IDs["queued"], SectionLater: q.IDs["scheduled"], SectionInFlight: q.IDs["started"], SectionDead: failed}
		keys := map[TaskSection]string{SectionWaiting: "rq:queue:", SectionLater: "rq:scheduled:", SectionInFlight: "rq:wip:", SectionDead: "rq:failed:"}
		for sec, ids := range want {
			tasks, page := jobTaskPages(t, src, rdb, name, sec, 2, now)
			listed += len(tasks)
			if got := taskIDs(tasks); page.Key != keys[sec]+name || !slices.Equal(got, ids) && len(got)+len(ids) > 0 {
				t.Errorf("%s %s: %s %v, RQ lists %v", name, sec, page.Key, got, ids)
			}
			for _, task := range tasks {
				job := q.Jobs[task.ID]
				var due, deadline time.Time
				if job.Due != nil {
					due = unixSeconds(*job.Due)
				}
				if job.Deadline != nil {
					deadline = unixSeconds(*job.Deadline)
				}
				if task.Member != task.ID || task.Payload != job.Description || task.PayloadBytes != int64(len(job.Description)) ||
					!task.Enqueued.Equal(unixSeconds(job.Enqueued)) || !task.Due.Equal(due) || !task.Deadline.Equal(deadline) || task.Note != "" {
					t.Errorf("%s %s: %+v; RQ's %+v", name, sec, task, job)
				}
			}
		}
	}
	if listed != 12 {
		t.Errorf("listed %d jobs, want the fixture's 4 queued, 5 scheduled, 1 started and 2 failed", listed)
	}
	if _, err := src.Queue("mail").Tasks(t.Context(), rdb, SectionRetry, 0, 10, now); !errors.Is(err, ErrNotSupported) {
		t.Errorf("retry: %v, want ErrNotSupported", err)
	}
}

// TestRQTasksLeaveOutExpiredEntries: once a started job's claim and a failure have expired, the
// sections leave them out, as RQ's listing (after its cleanup) and the queue's counts do, without
// writing; a started entry RQ scores +inf has no deadline and says so.
func TestRQTasksLeaveOutExpiredEntries(t *testing.T) {
	rdb, rep := rqFixture(t)
	src := Source{Layout: RQ}
	ctx := t.Context()
	started, failed := rep.Queues["default"].IDs["started"], rep.Queues["work"].IDs["failed"]
	if len(started) != 1 || len(failed) != 2 {
		t.Fatalf("the fixture left started %v, failed %v", started, failed)
	}
	deadline := *rep.Queues["default"].Jobs[started[0]].Deadline
	failedUntil, err := rdb.ZScore(ctx, "rq:failed:work", failed[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		queue string
		sec   TaskSection
		at    float64
		want  int
	}{
		{"default", SectionInFlight, deadline - 1, 1}, {"default", SectionInFlight, deadline, 0},
		{"work", SectionDead, failedUntil - 1, 2}, {"work", SectionDead, failedUntil + 0.9, 0},
	} {
		now := unixSeconds(c.at)
		p, err := src.Queue(c.queue).Tasks(ctx, rdb, c.sec, 0, 10, now)
		st, serr := src.Stats(ctx, rdb, c.queue, now)
		if err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		counted := map[TaskSection]int64{SectionInFlight: st.Active, SectionDead: st.Dead}[c.sec]
		if len(p.Tasks) != c.want || p.Total != int64(c.want) || counted != p.Total {
			t.Errorf("%s %s at %v: %d tasks, total %d, the stats count %d; want %d", c.queue, c.sec, now, len(p.Tasks), p.Total, counted, c.want)
		}
	}
	if n := rdb.ZCard(ctx, "rq:wip:default").Val() + rdb.ZCard(ctx, "rq:failed:work").Val(); n != 3 {
		t.Errorf("reading left %d entries of 3", n)
	}
	rdb.ZAdd(ctx, "rq:wip:default", redis.Z{Score: math.Inf(1), Member: started[0]})
	p, err := src.Queue("default").Tasks(ctx, rdb, SectionInFlight, 0, 10, unixSeconds(rep.Now))
	if err != nil || len(p.Tasks) != 1 || !p.Tasks[0].Deadline.IsZero() || p.Tasks[0].Note != "no deadline: the job runs without a timeout" {
		t.Errorf("a started job scored +inf: %+v %v", p, err)
	}
}
