package jobs

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// jobTaskPages reads a job section page by page, size tasks a page, and checks that every page
// says the same key, section and total, starts where it was asked to and is full but the last.
func jobTaskPages(t *testing.T, src Source, rdb redis.Cmdable, queue string, sec TaskSection, size int, now time.Time) ([]Task, TaskPage) {
	t.Helper()
	var all []Task
	var first TaskPage
	for offset := int64(0); ; offset += int64(size) {
		p, err := src.Queue(queue).Tasks(t.Context(), rdb, sec, offset, size, now)
		if err != nil {
			t.Fatalf("%s %q %s at %d: %v", src.Layout, queue, sec, offset, err)
		}
		if offset == 0 {
			first = p
		}
		if p.Section != sec || p.Offset != offset || p.Key != first.Key || p.Total != first.Total || !p.ReadAt.Equal(now) {
			t.Fatalf("%s %q %s at %d: page %+v, first page %+v", src.Layout, queue, sec, offset, p, first)
		}
		all = append(all, p.Tasks...)
		if len(p.Tasks) < size {
			if int64(len(all)) != p.Total {
				t.Errorf("%s %q %s: %d tasks over the pages, total %d", src.Layout, queue, sec, len(all), p.Total)
			}
			return all, first
		}
		if offset > 10_000 {
			t.Fatalf("%s %q %s: no end in sight", src.Layout, queue, sec)
		}
	}
}

// taskIDs are the tasks' IDs in order.
func taskIDs(ts []Task) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// TestSidekiqTasksMatchSidekiq pages through every section of what Sidekiq wrote, bare and under
// a redis-namespace, and holds the order, the jids, the due times and the enqueue times to what
// Sidekiq's own API lists: a queue in the order a process takes it (Sidekiq::Queue lists the
// newest first), the schedule and retry sets the next due first, the dead set the newest first.
func TestSidekiqTasksMatchSidekiq(t *testing.T) {
	for _, ns := range []string{"", "myapp"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			rdb, rep := sidekiqFixture(t, ns)
			src := Source{Layout: Sidekiq, Prefix: ns}
			now := unixSeconds(rep.Now)
			p := ""
			if ns != "" {
				p = ns + ":"
			}
			if got := src.Queue("default").Sections(); !slices.Equal(got, []TaskSection{SectionWaiting}) {
				t.Errorf("a queue's sections %v", got)
			}
			if got := src.SharedQueue().Sections(); !slices.Equal(got, []TaskSection{SectionLater, SectionRetry, SectionDead}) {
				t.Errorf("the shared sections %v", got)
			}
			if len(rep.Jobs.Queues) != 3 || len(rep.Jobs.Queues["default"]) != 3 || len(rep.Jobs.Queues["mail"]) != 2 {
				t.Fatalf("Sidekiq listed %v, want 3 jobs in default and 2 in mail", rep.Jobs.Queues)
			}
			for q, jids := range rep.Jobs.Queues {
				tasks, page := jobTaskPages(t, src, rdb, q, SectionWaiting, 2, now)
				want := slices.Clone(jids)
				slices.Reverse(want)
				if page.Key != p+"queue:"+q || !slices.Equal(taskIDs(tasks), want) || page.Total != rep.Sizes[q] {
					t.Errorf("%s: %s %v (total %d), want %v taken first to last (Sidekiq lists %v)", q, page.Key, taskIDs(tasks), page.Total, want, jids)
				}
				for _, task := range tasks {
					if !strings.Contains(task.Member, `"jid":"`+task.ID+`"`) || task.Payload != task.Member ||
						task.PayloadBytes != int64(len(task.Member)) || task.Enqueued.IsZero() || task.Enqueued.After(now) {
						t.Errorf("%s: task %+v", q, task)
					}
				}
			}
			checkSidekiqSet(t, src, rdb, SectionLater, p+"schedule", rep.Jobs.Schedule, now)
			checkSidekiqSet(t, src, rdb, SectionRetry, p+"retry", rep.Jobs.Retry, now)
			checkSidekiqSet(t, src, rdb, SectionDead, p+"dead", rep.Jobs.Dead, now)
			for _, c := range []struct {
				queue string
				sec   TaskSection
			}{{"default", SectionLater}, {"default", SectionInFlight}, {"", SectionWaiting}, {"", SectionInFlight}} {
				if _, err := src.Queue(c.queue).Tasks(t.Context(), rdb, c.sec, 0, 10, now); !errors.Is(err, ErrNotSupported) {
					t.Errorf("%q %s: %v, want ErrNotSupported", c.queue, c.sec, err)
				}
			}
		})
	}
}

// checkSidekiqSet pages through a shared set, three tasks a page, against what Sidekiq listed
// of it: [jid, score, enqueued_at or created_at], the highest score first.
func checkSidekiqSet(t *testing.T, src Source, rdb redis.Cmdable, sec TaskSection, key string, listed [][3]any, now time.Time) {
	t.Helper()
	if len(listed) == 0 {
		t.Fatalf("%s: Sidekiq listed nothing", sec)
	}
	want := slices.Clone(listed)
	if sec != SectionDead { // the next due first
		slices.Reverse(want)
	}
	tasks, page := jobTaskPages(t, src, rdb, "", sec, 3, now)
	if page.Key != key || len(tasks) != len(want) {
		t.Fatalf("%s: %s %v, Sidekiq lists %v", sec, page.Key, taskIDs(tasks), listed)
	}
	for i, task := range tasks {
		jid, _ := want[i][0].(string)
		score, _ := want[i][1].(float64)
		var enqueued time.Time
		if at, ok := want[i][2].(float64); ok {
			enqueued = unixSeconds(at)
		}
		wantDue := unixSeconds(score)
		if sec == SectionDead {
			wantDue = time.Time{}
		}
		if task.ID != jid || !task.Due.Equal(wantDue) || !task.Enqueued.Equal(enqueued) || task.Note != "" {
			t.Errorf("%s #%d: %s due %v enqueued %v (%q), Sidekiq's %s at %v enqueued %v",
				sec, i, task.ID, task.Due, task.Enqueued, task.Note, jid, wantDue, enqueued)
		}
	}
}

// TestJobTasksNameTheRefusedKey: a key of the wrong type ends the page with the command Redis
// refused and that key, also when it is not the first of its section's keys (kombu's priority
// list after the queue's own), and in the job hashes read after the entries.
func TestJobTasksNameTheRefusedKey(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	rdb.Set(ctx, "queue:bad", "a string", 0)
	rdb.LPush(ctx, "mail", `{"headers": {"id": "1"}}`)
	rdb.Set(ctx, "mail\x06\x163", "a string", 0)
	rdb.LPush(ctx, "bull:work:wait", "7")
	rdb.Set(ctx, "bull:work:7", "a string, not a job hash", 0)
	for _, c := range []struct {
		src          Source
		queue        string
		sec          TaskSection
		command, key string
	}{
		{Source{Layout: Sidekiq}, "bad", SectionWaiting, "LLEN", "queue:bad"},
		{Source{Layout: Celery}, "mail", SectionWaiting, "LLEN", "mail\x06\x163"},
		{Source{Layout: BullMQ}, "work", SectionWaiting, "HMGET", "bull:work:7"},
	} {
		_, err := c.src.Queue(c.queue).Tasks(ctx, rdb, c.sec, 0, 10, time.Now())
		var ce *store.CommandError
		if !errors.As(err, &ce) || ce.Command != c.command || ce.Key != c.key || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("%s %q: %v, want %s on %q refused with WRONGTYPE", c.src.Layout, c.queue, err, c.command, c.key)
		}
	}
}
