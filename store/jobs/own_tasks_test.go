package jobs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// payloads reads the pages' payloads, in order.
func payloads(p TaskPage) []string {
	out := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		out[i] = t.Payload
	}
	return out
}

func wantPayloads(t *testing.T, what string, p TaskPage, total int64, want ...string) {
	t.Helper()
	if got := payloads(p); fmt.Sprint(got) != fmt.Sprint(want) || p.Total != total {
		t.Fatalf("%s: got %q (total %d), want %q (total %d)", what, got, p.Total, want, total)
	}
}

// TestDelayQueueTasksPages: tasks written by the queue itself, some due, some later, some
// claimed, page through each section in its order with the right totals, due times and
// deadlines; what a page reads is what Claim would take next.
func TestDelayQueueTasksPages(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.DelayQueue("dq:{orders}", store.Milliseconds)
	now := s.Now().Truncate(time.Millisecond)
	for i := range 6 {
		if err := q.Enqueue(ctx, now.Add(time.Duration(i-6)*time.Minute), fmt.Sprint("due-", i)); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, now.Add(time.Duration(6-i)*time.Hour), fmt.Sprint("later-", 5-i)); err != nil { // the last due first
			t.Fatal(err)
		}
	}
	c, err := q.Claim(ctx, 2, 30*time.Second)
	if err != nil || len(c.Tasks) != 2 {
		t.Fatalf("claim: %v %v", c, err)
	}
	read := func(sec TaskSection, offset int64, count int) TaskPage {
		t.Helper()
		p, err := DelayQueueOf(q.Key, q.InFlight, store.Milliseconds).Tasks(ctx, rdb, sec, offset, count, s.Now())
		if err != nil {
			t.Fatalf("%s at %d: %v", sec, offset, err)
		}
		return p
	}
	p := read(SectionDue, 0, 3)
	wantPayloads(t, "due, first page", p, 4, "due-2", "due-3", "due-4")
	for i, task := range p.Tasks {
		if want := now.Add(time.Duration(i-4) * time.Minute); !task.Due.Equal(want) || task.Note != "" {
			t.Errorf("%s: due %v, want %v (note %q)", task.Payload, task.Due, want, task.Note)
		}
	}
	wantPayloads(t, "due, second page", read(SectionDue, 3, 3), 4, "due-5")
	wantPayloads(t, "due, past the end", read(SectionDue, 4, 3), 4)
	wantPayloads(t, "later", read(SectionLater, 2, 10), 6, "later-2", "later-3", "later-4", "later-5")
	if got := read(SectionLater, 0, 1).Tasks[0]; !got.Due.Equal(now.Add(time.Hour)) || got.Member != "later-0" {
		t.Errorf("the next due: %+v", got)
	}

	fl := read(SectionInFlight, 0, 10)
	wantPayloads(t, "in flight", fl, 2, "due-0", "due-1")
	for _, task := range fl.Tasks {
		if task.Member != c.ID+"|"+task.Payload || !task.Due.IsZero() {
			t.Errorf("in-flight member %q, due %v", task.Member, task.Due)
		}
		if d := task.Deadline.Sub(now.Add(30 * time.Second)); d < 0 || d > 5*time.Second {
			t.Errorf("%s: deadline %v, want 30 s after %v", task.Payload, task.Deadline, now)
		}
	}
	if fl.Key != q.InFlight || fl.Section != SectionInFlight {
		t.Errorf("in-flight page of %q, section %s", fl.Key, fl.Section)
	}

	// What the due page shows first is what a worker takes next.
	next, err := q.Claim(ctx, 1, time.Second)
	if err != nil || len(next.Tasks) != 1 || next.Tasks[0] != "due-2" {
		t.Fatalf("the next claim took %v (%v), the page showed due-2 first", next.Tasks, err)
	}
}

// TestDelayQueueTasksBodies: a 1 MB task comes back cut to PayloadCap with its whole size, its
// member whole for the actions; a binary one raw; a score that is no time says so; count is
// held to 1..MaxTaskPage.
func TestDelayQueueTasksBodies(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.DelayQueue("dq:bodies", store.Milliseconds)
	now := s.Now()
	big := strings.Repeat("x", 1<<20)
	binary := "\x00\xff\x1b[31mred\n\xe2\x80\xae"
	if err := q.Enqueue(ctx, now.Add(-2*time.Second), big); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, now.Add(-time.Second), binary); err != nil {
		t.Fatal(err)
	}
	rdb.ZAdd(ctx, q.Key, redis.Z{Score: 5, Member: "epoch"}) // 5 ms after 1970: no due time
	p, err := DelayQueueOf(q.Key, q.InFlight, store.Milliseconds).Tasks(ctx, rdb, SectionDue, 0, 10, now)
	if err != nil || len(p.Tasks) != 3 {
		t.Fatalf("page: %+v %v", p, err)
	}
	if e := p.Tasks[0]; e.Member != "epoch" || !e.Due.IsZero() || !strings.Contains(e.Note, "not a due time") {
		t.Errorf("a score of 5 ms: %+v", e)
	}
	if b := p.Tasks[1]; b.PayloadBytes != 1<<20 || len(b.Payload) != PayloadCap || len(b.Member) != 1<<20 {
		t.Errorf("1 MB task: payload %d bytes of %d, member %d", len(b.Payload), b.PayloadBytes, len(b.Member))
	}
	if b := p.Tasks[2]; b.Payload != binary || b.Member != binary || b.PayloadBytes != int64(len(binary)) {
		t.Errorf("binary task: %q", b.Payload)
	}

	for range 250 {
		rdb.ZAdd(ctx, "dq:many", redis.Z{Score: float64(now.Add(time.Hour).UnixMilli()), Member: fmt.Sprint(len(p.Tasks), "-", time.Now().UnixNano())})
	}
	for _, c := range []struct{ ask, want int }{{0, 1}, {-3, 1}, {1000, MaxTaskPage}} {
		p, err := DelayQueueOf("dq:many", "", store.Milliseconds).Tasks(ctx, rdb, SectionLater, 0, c.ask, now)
		if err != nil || len(p.Tasks) != c.want || p.Total != 250 {
			t.Errorf("count %d: %d tasks of %d (%v), want %d", c.ask, len(p.Tasks), p.Total, err, c.want)
		}
	}
}

// TestDelayQueueTasksUnitsAndRefusals: an auto queue's unit is found from its scores; a section
// the queue lacks is not supported; a key of another type names the command and key.
func TestDelayQueueTasksUnitsAndRefusals(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	rdb.ZAdd(ctx, "dq:secs", redis.Z{Score: float64(now.Add(-90*time.Second).UnixMicro()) / 1e6, Member: "a"},
		redis.Z{Score: float64(now.Add(time.Minute).Unix()), Member: "b"})
	p, err := DelayQueueOf("dq:secs", "", store.AutoUnit).Tasks(ctx, rdb, SectionDue, 0, 10, now)
	if err != nil || p.Total != 1 || len(p.Tasks) != 1 || p.Tasks[0].Due.Sub(now.Add(-90*time.Second)).Abs() > time.Millisecond {
		t.Fatalf("auto unit, due: %+v %v", p, err)
	}
	if p, err := DelayQueueOf("dq:empty", "", store.AutoUnit).Tasks(ctx, rdb, SectionDue, 0, 10, now); err != nil || p.Total != 0 || len(p.Tasks) != 0 {
		t.Errorf("an empty auto queue: %+v %v", p, err)
	}
	if _, err := DelayQueueOf("dq:secs", "", store.Seconds).Tasks(ctx, rdb, SectionInFlight, 0, 10, now); !errors.Is(err, ErrNotSupported) {
		t.Errorf("in flight without a set: %v", err)
	}
	if _, err := DelayQueueOf("dq:secs", "", store.Seconds).Tasks(ctx, rdb, SectionWaiting, 0, 10, now); !errors.Is(err, ErrNotSupported) {
		t.Errorf("a waiting section: %v", err)
	}
	rdb.Set(ctx, "dq:string", "x", 0)
	_, err = DelayQueueOf("dq:string", "", store.Seconds).Tasks(ctx, rdb, SectionDue, 0, 10, now)
	var ce *store.CommandError
	if !errors.As(err, &ce) || ce.Command != "ZRANGEBYSCORE" || ce.Key != "dq:string" || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("a string key: %v", err)
	}
}

// TestListQueueTasksPages: the waiting page lists tasks in the order Pop takes them, the
// processing page the longest taken first; offsets past the end give an empty page; bodies are
// cut and kept raw as in a delay queue.
func TestListQueueTasksPages(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := newStore(t, rdb, store.Options{})
	ctx := t.Context()
	q := s.ListQueue("lq:{jobs}")
	for i := range 10 {
		if err := q.Push(ctx, fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, ok, err := q.Pop(ctx, 0); !ok || err != nil {
			t.Fatalf("pop: %v %v", ok, err)
		}
	}
	read := func(sec TaskSection, offset int64, count int) TaskPage {
		t.Helper()
		p, err := ListQueueOf(q.Key, q.Processing).Tasks(ctx, rdb, sec, offset, count, s.Now())
		if err != nil {
			t.Fatalf("%s at %d: %v", sec, offset, err)
		}
		return p
	}
	wantPayloads(t, "waiting, first page", read(SectionWaiting, 0, 4), 7, "t3", "t4", "t5", "t6")
	wantPayloads(t, "waiting, second page", read(SectionWaiting, 4, 4), 7, "t7", "t8", "t9")
	wantPayloads(t, "waiting, past the end", read(SectionWaiting, 7, 4), 7)
	wantPayloads(t, "waiting, far past the end", read(SectionWaiting, 1<<62, 4), 7)
	fl := read(SectionInFlight, 0, 10)
	wantPayloads(t, "processing", fl, 3, "t0", "t1", "t2")
	if fl.Key != q.Processing {
		t.Errorf("processing page of %q", fl.Key)
	}
	if task, _, _ := q.Pop(ctx, 0); task != "t3" {
		t.Errorf("the next pop took %q, the page showed t3 first", task)
	}

	big, binary := strings.Repeat("y", 1<<20), "\x1b]0;title\x07\x00\xfe"
	if err := q.Push(ctx, big, binary); err != nil {
		t.Fatal(err)
	}
	p := read(SectionWaiting, 6, 10)
	if len(p.Tasks) != 2 || p.Tasks[0].PayloadBytes != 1<<20 || len(p.Tasks[0].Payload) != PayloadCap ||
		len(p.Tasks[0].Member) != 1<<20 || p.Tasks[1].Payload != binary {
		t.Errorf("1 MB and binary tasks: %d tasks", len(p.Tasks))
	}
	if _, err := ListQueueOf(q.Key, "").Tasks(ctx, rdb, SectionInFlight, 0, 1, s.Now()); !errors.Is(err, ErrNotSupported) {
		t.Errorf("in flight without a processing list: %v", err)
	}
	rdb.Set(ctx, "lq:string", "x", 0)
	var ce *store.CommandError
	if _, err := ListQueueOf("lq:string", "").Tasks(ctx, rdb, SectionWaiting, 0, 1, s.Now()); !errors.As(err, &ce) || ce.Command != "LRANGE" {
		t.Errorf("a string key: %v", err)
	}
}
