package jobs

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBullMQTasksMatchBullMQ pages through every section of the queues BullMQ wrote, at several
// page sizes (so that pages run from wait or paused into prioritized), and holds the job ids and
// their order to what BullMQ's own getRanges lists, and each job's payload, enqueue time, due
// time and lock deadline to what BullMQ reported and keeps.
func TestBullMQTasksMatchBullMQ(t *testing.T) {
	rdb, rep := bullmqFixture(t)
	src := Source{Layout: BullMQ}
	now := time.Now() // the lock deadlines are PTTLs read against now: the clock of this machine's server
	if got := src.Queue("work").Sections(); !slices.Equal(got, []TaskSection{SectionWaiting, SectionLater, SectionInFlight, SectionDead}) {
		t.Errorf("sections %v", got)
	}
	for name, q := range rep.Queues {
		want := map[TaskSection][]string{
			SectionWaiting:  slices.Concat(q.IDs["wait"], q.IDs["paused"], q.IDs["prioritized"]),
			SectionLater:    q.IDs["delayed"],
			SectionInFlight: q.IDs["active"],
			SectionDead:     q.IDs["failed"],
		}
		for sec, ids := range want {
			for _, size := range []int{1, 2, 3, MaxTaskPage} {
				tasks, page := jobTaskPages(t, src, rdb, name, sec, size, now)
				if got := taskIDs(tasks); !slices.Equal(got, ids) && (len(got) != 0 || len(ids) != 0) {
					t.Errorf("%s %s by %d: %v, BullMQ lists %v", name, sec, size, got, ids)
				}
				if wantKey := map[TaskSection]string{SectionWaiting: "wait", SectionLater: "delayed", SectionInFlight: "active", SectionDead: "failed"}[sec]; page.Key != "bull:"+name+":"+wantKey {
					t.Errorf("%s %s: key %q", name, sec, page.Key)
				}
				for i, task := range tasks {
					job := q.Jobs[task.ID]
					body := job.Name + " " + job.Data
					if task.Member != task.ID || task.PayloadBytes != int64(len(body)) || !strings.HasPrefix(body, task.Payload) ||
						len(task.Payload) != min(len(body), PayloadCap) || task.Enqueued.UnixMilli() != job.Timestamp || task.Note != "" {
						t.Errorf("%s %s: %q (%d bytes, enqueued %v, %q), BullMQ's %q at %d", name, sec, cut(task.Payload), task.PayloadBytes, task.Enqueued, task.Note, cut(body), job.Timestamp)
					}
					switch {
					case sec == SectionLater && task.Due.UnixMilli() != q.DelayedAt[i]:
						t.Errorf("%s #%d due %v, BullMQ's %d", name, i, task.Due, q.DelayedAt[i])
					case sec == SectionInFlight && (task.Deadline.Before(now) || task.Deadline.After(now.Add(30*time.Second))):
						t.Errorf("%s: deadline %v, not within the 30 s lock BullMQ's worker takes from %v", name, task.Deadline, now)
					case sec != SectionLater && !task.Due.IsZero() || sec != SectionInFlight && !task.Deadline.IsZero():
						t.Errorf("%s %s: due %v, deadline %v", name, sec, task.Due, task.Deadline)
					}
				}
			}
		}
	}
	if n := len(rep.Queues["work"].IDs["active"]) + len(rep.Queues["later"].IDs["delayed"]) + len(rep.Queues["held"].IDs["paused"]); n != 10 {
		t.Errorf("the fixture should leave 1 active job, 5 delayed and 4 paused: %d", n)
	}
	for _, c := range []struct {
		queue string
		sec   TaskSection
	}{{"work", SectionRetry}, {"work", SectionDue}, {"", SectionWaiting}} {
		if _, err := src.Queue(c.queue).Tasks(t.Context(), rdb, c.sec, 0, 10, now); !errors.Is(err, ErrNotSupported) {
			t.Errorf("%q %s: %v, want ErrNotSupported", c.queue, c.sec, err)
		}
	}
}

// TestBullMQTasksHostileAndGone: a job whose name holds escape sequences comes back byte for byte,
// a 1 MB job is cut to PayloadCap with its whole size, and a job whose hash is gone (removed
// since its id was read) says so instead of showing an empty payload.
func TestBullMQTasksHostileAndGone(t *testing.T) {
	rdb, rep := bullmqFixture(t)
	src := Source{Layout: BullMQ}
	held := rep.Queues["held"]
	tasks, _ := jobTaskPages(t, src, rdb, "held", SectionWaiting, MaxTaskPage, time.Now())
	var sawEscapes, sawBig bool
	for _, task := range tasks {
		job := held.Jobs[task.ID]
		switch job.Name {
		case "\x1b]0;title\x07\x1b[2Jwipe":
			sawEscapes = task.Payload == "\x1b]0;title\x07\x1b[2Jwipe "+`{"text":"bell\u0007"}`
		case "big":
			sawBig = len(job.Data) > 1<<20 && task.PayloadBytes == int64(len("big ")+len(job.Data)) &&
				len(task.Payload) == PayloadCap && task.Payload == ("big " + job.Data)[:PayloadCap]
		}
	}
	if !sawEscapes || !sawBig {
		t.Errorf("escapes kept %v, 1 MB cut %v: %d tasks", sawEscapes, sawBig, len(tasks))
	}

	gone := rep.Queues["work"].IDs["wait"][0]
	if err := rdb.Del(t.Context(), "bull:work:"+gone).Err(); err != nil {
		t.Fatal(err)
	}
	p, err := src.Queue("work").Tasks(t.Context(), rdb, SectionWaiting, 0, 1, time.Now())
	if err != nil || len(p.Tasks) != 1 {
		t.Fatalf("%+v %v", p, err)
	}
	if task := p.Tasks[0]; task.ID != gone || task.Member != gone || task.PayloadBytes != -1 || task.Note != "job hash gone" || task.Payload != "" {
		t.Errorf("a job whose hash is gone: %+v", task)
	}
}

// cut is at most the first 80 bytes of s, for a failure's message.
func cut(s string) string { return s[:min(len(s), 80)] }
