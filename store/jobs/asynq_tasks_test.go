package jobs

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestAsynqTasksMatchAsynq pages through every section of the queues asynq wrote and holds the
// task ids, their order, types and payloads, due times and leases to what asynq's own Inspector
// lists (its archived tasks turned around: the newest first).
func TestAsynqTasksMatchAsynq(t *testing.T) {
	fx := newAsynqFixture(t)
	src := Source{Layout: Asynq}
	if got := src.Queue("work").Sections(); !slices.Equal(got, []TaskSection{SectionWaiting, SectionLater, SectionRetry, SectionInFlight, SectionDead}) {
		t.Errorf("sections %v", got)
	}
	lists := map[TaskSection]func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
		SectionWaiting: fx.insp.ListPendingTasks, SectionLater: fx.insp.ListScheduledTasks, SectionRetry: fx.insp.ListRetryTasks,
		SectionInFlight: fx.insp.ListActiveTasks, SectionDead: fx.insp.ListArchivedTasks,
	}
	// Two of later's pending tasks archived by asynq a second apart: the newer is listed first.
	pending, err := fx.insp.ListPendingTasks("later")
	if err != nil || len(pending) != 2 {
		t.Fatalf("later's pending tasks %v %v", pending, err)
	}
	for _, task := range pending {
		start := time.Now().Unix()
		if err := fx.insp.ArchiveTask("later", task.ID); err != nil {
			t.Fatal(err)
		}
		// Archived scores are whole seconds: the next is archived in the next second.
		redistest.Eventually(t, "the clock to pass into the next second", 5*time.Second, func() bool { return time.Now().Unix() != start })
	}
	suffix := map[TaskSection]string{SectionWaiting: "pending", SectionLater: "scheduled", SectionRetry: "retry", SectionInFlight: "active", SectionDead: "archived"}
	seen := map[TaskSection]int{}
	for _, queue := range []string{"work", "later", "held"} {
		for sec, list := range lists {
			infos, err := list(queue, asynq.PageSize(1000))
			if err != nil {
				t.Fatal(err)
			}
			if sec == SectionDead {
				slices.Reverse(infos) // asynq lists the oldest first
			}
			now := time.Now()
			tasks, page := jobTaskPages(t, src, fx.rdb, queue, sec, 2, now)
			seen[sec] += len(tasks)
			if page.Key != "asynq:{"+queue+"}:"+suffix[sec] || len(tasks) != len(infos) {
				t.Fatalf("%s %s: %s %v, asynq lists %d", queue, sec, page.Key, taskIDs(tasks), len(infos))
			}
			for i, info := range infos {
				checkAsynqTask(t, queue, sec, tasks[i], info, fx.before, now)
			}
		}
	}
	if want := map[TaskSection]int{SectionWaiting: 4, SectionLater: 6, SectionRetry: 1, SectionInFlight: 1, SectionDead: 3}; !maps.Equal(seen, want) {
		t.Errorf("listed %v, want the fixture's %v", seen, want)
	}
	for _, c := range []struct {
		queue string
		sec   TaskSection
	}{{"work", SectionDue}, {"", SectionWaiting}} {
		if _, err := src.Queue(c.queue).Tasks(t.Context(), fx.rdb, c.sec, 0, 10, time.Now()); !errors.Is(err, ErrNotSupported) {
			t.Errorf("%q %s: %v, want ErrNotSupported", c.queue, c.sec, err)
		}
	}
}

// checkAsynqTask holds one listed task to asynq's TaskInfo of it.
func checkAsynqTask(t *testing.T, queue string, sec TaskSection, task Task, info *asynq.TaskInfo, before, now time.Time) {
	t.Helper()
	body := info.Type + " " + string(info.Payload)
	if task.ID != info.ID || task.Member != info.ID || task.Payload != body || task.PayloadBytes != int64(len(body)) || task.Note != "" {
		t.Errorf("%s %s: %+v; asynq's %s %q", queue, sec, task, info.ID, body)
	}
	var due time.Time
	if sec == SectionLater || sec == SectionRetry {
		due = info.NextProcessAt
	}
	if !task.Due.Equal(due) {
		t.Errorf("%s %s %s: due %v, asynq's next process at %v", queue, sec, task.ID, task.Due, info.NextProcessAt)
	}
	// asynq keeps pending_since while a task is pending, and drops it when a server takes the
	// task (an archived pending task keeps it); a lease lasts 30 s from its last extension, in
	// whole seconds.
	if enqueued := !task.Enqueued.IsZero(); enqueued != (sec == SectionWaiting || sec == SectionDead && queue == "later") ||
		enqueued && (task.Enqueued.Before(before) || task.Enqueued.After(now)) {
		t.Errorf("%s %s %s: enqueued %v", queue, sec, task.ID, task.Enqueued)
	}
	if leased := !task.Deadline.IsZero(); leased != (sec == SectionInFlight) ||
		leased && (task.Deadline.Before(before) || task.Deadline.After(now.Add(31*time.Second)) || info.IsOrphaned) {
		t.Errorf("%s %s %s: deadline %v (orphaned %v)", queue, sec, task.ID, task.Deadline, info.IsOrphaned)
	}
}

// TestAsynqTasksHostile: task types and payloads holding escape sequences and binary come back
// byte for byte, a 1 MB payload is cut to PayloadCap with its whole size, a task whose hash is
// gone says so, and a message that is not asynq's protobuf is shown as stored, with why.
func TestAsynqTasksHostile(t *testing.T) {
	srv := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MB
	for _, task := range []*asynq.Task{
		asynq.NewTask("\x1b]0;title\x07\x1b[2J", []byte("\x00\xff\x1b[31mred\x80\r\n")),
		asynq.NewTask("big", big),
		asynq.NewTask("gone", nil),
		asynq.NewTask("garbled", nil),
	} {
		if _, err := client.Enqueue(task, asynq.Queue("odd")); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := insp.ListPendingTasks("odd")
	if err != nil || len(infos) != 4 {
		t.Fatalf("%v %v", infos, err)
	}
	rdb := srv.Client(t)
	rdb.Del(t.Context(), "asynq:{odd}:t:"+infos[2].ID)
	rdb.HSet(t.Context(), "asynq:{odd}:t:"+infos[3].ID, "msg", "\x0a\x50only a few bytes")
	p, err := Source{Layout: Asynq}.Queue("odd").Tasks(t.Context(), rdb, SectionWaiting, 0, 10, time.Now())
	if err != nil || len(p.Tasks) != 4 {
		t.Fatalf("%+v %v", p, err)
	}
	escapes, wantBig := p.Tasks[0], "big "+string(big)
	if escapes.Payload != "\x1b]0;title\x07\x1b[2J \x00\xff\x1b[31mred\x80\r\n" || escapes.ID != infos[0].ID {
		t.Errorf("escapes and binary: %q", escapes.Payload)
	}
	if b := p.Tasks[1]; b.PayloadBytes != int64(len(wantBig)) || b.Payload != wantBig[:PayloadCap] || b.Note != "" {
		t.Errorf("1 MB: %d bytes of %d, %q", len(b.Payload), b.PayloadBytes, b.Note)
	}
	if g := p.Tasks[2]; g.ID != infos[2].ID || g.PayloadBytes != -1 || g.Note != "job hash gone" {
		t.Errorf("a task whose hash is gone: %+v", g)
	}
	if g := p.Tasks[3]; g.Payload != "\x0a\x50only a few bytes" || !strings.Contains(g.Note, "not asynq's protobuf") {
		t.Errorf("a garbled message: %+v", g)
	}
}
