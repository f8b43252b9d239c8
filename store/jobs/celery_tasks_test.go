package jobs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// celeryDelivered is what store/jobs/testdata/celery/drain.py prints: each queue's messages in the
// order kombu's consumer took them.
type celeryDelivered map[string][]struct {
	ID, Task, Body string
	ETA            *string
}

// TestCeleryTasksMatchKombu pages through each queue Celery sent to (its own list and its
// priority lists), then lets kombu's consumer take every message: the pages hold the same
// messages in the order kombu took them, each with its task id, its name and decoded arguments,
// and a countdown task's ETA. The messages a consumer holds unacknowledged are listed the oldest
// delivery first, with the delivery kombu recorded plus its visibility timeout as the deadline.
func TestCeleryTasksMatchKombu(t *testing.T) {
	for _, prefix := range []string{"", "myapp:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			rdb, rep := celeryFixture(t, prefix)
			src := Source{Layout: Celery, Prefix: prefix}
			now := unixSeconds(rep.Now)
			if !slices.Equal(src.Queue("mail").Sections(), []TaskSection{SectionWaiting}) || !slices.Equal(src.SharedQueue().Sections(), []TaskSection{SectionInFlight}) {
				t.Errorf("sections %v and %v", src.Queue("mail").Sections(), src.SharedQueue().Sections())
			}
			pages := map[string][]Task{}
			for _, q := range []string{"celery", "mail"} {
				for _, size := range []int{1, 2} {
					tasks, page := jobTaskPages(t, src, rdb, q, SectionWaiting, size, now)
					if page.Key != prefix+q || page.Total != rep.Queues[q].MessageCount {
						t.Errorf("%s: key %q, total %d; kombu's message_count %d", q, page.Key, page.Total, rep.Queues[q].MessageCount)
					}
					pages[q] = tasks
				}
			}
			checkCeleryUnacked(t, src, rdb, rep, now)

			py := redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis")
			var took celeryDelivered
			redistest.RunFixture(t, py, "testdata/celery", &took, "drain.py", "redis://"+rdb.Options().Addr+"/0", prefix, "celery", "mail")
			var etas int
			for q, msgs := range took {
				if len(pages[q]) != len(msgs) || len(msgs) == 0 {
					t.Fatalf("%s: listed %d, kombu took %d", q, len(pages[q]), len(msgs))
				}
				for i, m := range msgs {
					var body bytes.Buffer
					if err := json.Compact(&body, []byte(m.Body)); err != nil {
						t.Fatal(err)
					}
					task, want := pages[q][i], m.Task+" "+body.String()
					var eta time.Time
					if m.ETA != nil {
						eta, _ = time.Parse(time.RFC3339Nano, *m.ETA)
						etas++
					}
					if task.ID != m.ID || task.Payload != want || task.PayloadBytes != int64(len(want)) || !task.Due.Equal(eta) ||
						!strings.Contains(task.Member, `"id": "`+m.ID+`"`) || task.Note != "" {
						t.Errorf("%s #%d: %s %q due %v (%q); kombu took %s %q due %v", q, i, task.ID, task.Payload, task.Due, task.Note, m.ID, want, eta)
					}
				}
			}
			if etas != 1 {
				t.Errorf("%d tasks with an ETA, want the fixture's countdown task", etas)
			}
			for _, q := range []string{"celery", "mail"} {
				if p, err := src.Queue(q).Tasks(t.Context(), rdb, SectionWaiting, 0, 5, now); err != nil || p.Total != 0 || len(p.Tasks) != 0 {
					t.Errorf("%s after kombu took every message: %+v %v", q, p, err)
				}
			}
		})
	}
}

// checkCeleryUnacked holds the in-flight section to the messages the fixture's consumer holds,
// and a message no longer in the unacked hash to a note.
func checkCeleryUnacked(t *testing.T, src Source, rdb *redis.Client, rep celeryReport, now time.Time) {
	t.Helper()
	held := slices.Clone(rep.Held)
	slices.SortFunc(held, func(a, b celeryHeld) int { return cmp.Compare(a.Delivered, b.Delivered) })
	tasks, page := jobTaskPages(t, src, rdb, "", SectionInFlight, 1, now)
	if page.Key != src.Prefix+"unacked_index" || len(tasks) != len(held) || len(held) != 2 {
		t.Fatalf("in flight %s %+v, kombu holds %+v", page.Key, tasks, held)
	}
	for i, h := range held {
		task := tasks[i]
		if task.Member != h.Tag || task.ID != h.ID || !strings.HasPrefix(task.Payload, h.Task+" [[") ||
			!task.Deadline.Equal(unixSeconds(h.Delivered).Add(time.Hour)) || task.Note != "" {
			t.Errorf("in flight #%d: %+v; kombu holds %+v", i, task, h)
		}
	}
	if err := rdb.HDel(t.Context(), src.Prefix+"unacked", held[0].Tag).Err(); err != nil {
		t.Fatal(err)
	}
	p, err := src.SharedQueue().Tasks(t.Context(), rdb, SectionInFlight, 0, 5, now)
	if err != nil || len(p.Tasks) != 2 || p.Tasks[0].PayloadBytes != -1 || !strings.HasPrefix(p.Tasks[0].Note, "message gone from unacked") || p.Tasks[1].Note != "" {
		t.Errorf("a message gone from unacked: %+v %v", p, err)
	}
	for _, c := range []struct {
		queue string
		sec   TaskSection
	}{{"mail", SectionInFlight}, {"mail", SectionLater}, {"", SectionWaiting}} {
		if _, err := src.Queue(c.queue).Tasks(t.Context(), rdb, c.sec, 0, 10, now); !errors.Is(err, ErrNotSupported) {
			t.Errorf("%q %s: %v, want ErrNotSupported", c.queue, c.sec, err)
		}
	}
}
