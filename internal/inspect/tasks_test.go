package inspect

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// queueWatcher watches a delay queue by key, a delay queue pattern, a list queue without a
// processing list and Sidekiq's queues, keeping to keysPerSecond (0: no cap).
func queueWatcher(t *testing.T, rdb redis.UniversalClient, keysPerSecond int) drilled {
	return watching(rdb, nil, scanner.Options{KeysPerSecond: keysPerSecond, Structures: scanner.Structures{
		DelayQueues: []scanner.DelayQueueSpec{
			{Name: "orders", Key: "dq:orders", Unit: store.Milliseconds},
			{Name: "tenants", Pattern: pattern(t, "dq:tenant:<id>"), Unit: store.AutoUnit},
		},
		ListQueues: []scanner.ListQueueSpec{{Name: "mail", Key: "lq:mail", Processing: store.ParseCompanion("")}},
		JobQueues:  []scanner.JobQueueSpec{{Name: "sk", Source: jobs.Source{Layout: jobs.Sidekiq}}},
	}})
}

// TestTasksOfOurQueues: the watcher lists the sections each queue keeps and reads their pages as
// the store does, for a queue by key and one a pattern covers, hostile payloads raw; a queue no
// entry covers is refused; a page is held to the sweep's keys per second.
func TestTasksOfOurQueues(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	s := store.New(rdb, store.Options{})
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	hostile := "\x1b[2J\x1b[31mboom\n\x00\xff"
	orders := s.DelayQueue("dq:orders", store.Milliseconds)
	if err := orders.Enqueue(ctx, s.Now().Add(-time.Minute), hostile, "b", "c"); err != nil {
		t.Fatal(err)
	}
	if err := orders.Enqueue(ctx, s.Now().Add(time.Hour), "later"); err != nil {
		t.Fatal(err)
	}
	if _, err := orders.Claim(ctx, 1, time.Minute); err != nil { // claims hostile: the oldest member by lex
		t.Fatal(err)
	}
	tenant := s.DelayQueue("dq:tenant:7", store.Seconds)
	if err := tenant.Enqueue(ctx, s.Now().Add(-time.Second), "t1"); err != nil {
		t.Fatal(err)
	}
	if err := s.ListQueue("lq:mail").Push(ctx, "m1", "m2", "m3"); err != nil {
		t.Fatal(err)
	}
	w := queueWatcher(t, rdb, 0)

	ordersRef := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "orders", Key: "dq:orders"})
	if got := w.TaskSections(ordersRef); !slices.Equal(got, []snapshot.TaskSection{snapshot.SectionDue, snapshot.SectionLater, snapshot.SectionInFlight}) {
		t.Errorf("orders' sections %v", got)
	}
	p, err := w.Tasks(ctx, ordersRef, snapshot.SectionDue, 0, 10)
	if err != nil || fmt.Sprint(pagePayloads(p)) != "[b c]" || p.Total != 2 {
		t.Errorf("orders due: %q %v", pagePayloads(p), err)
	}
	p, err = w.Tasks(ctx, ordersRef, snapshot.SectionInFlight, 0, 10)
	if err != nil || len(p.Tasks) != 1 || p.Tasks[0].Payload != hostile || p.Tasks[0].Deadline.IsZero() || p.Key != orders.InFlight {
		t.Errorf("orders in flight: %+v %v", p, err)
	}
	p, err = w.Tasks(ctx, opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "tenants", Key: "dq:tenant:7"}), snapshot.SectionDue, 0, 10)
	if err != nil || fmt.Sprint(pagePayloads(p)) != "[t1]" || p.Tasks[0].Due.IsZero() {
		t.Errorf("a tenant's queue, its unit found: %+v %v", p, err)
	}
	mail := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueList, Name: "mail", Key: "lq:mail"})
	if got := w.TaskSections(mail); !slices.Equal(got, []snapshot.TaskSection{snapshot.SectionWaiting}) {
		t.Errorf("mail's sections %v", got)
	}
	if p, err = w.Tasks(ctx, mail, snapshot.SectionWaiting, 1, 10); err != nil || fmt.Sprint(pagePayloads(p)) != "[m2 m3]" || p.Total != 3 {
		t.Errorf("mail waiting: %q %v", pagePayloads(p), err)
	}
	if _, err = w.Tasks(ctx, mail, snapshot.SectionInFlight, 0, 10); !errors.Is(err, jobs.ErrNotSupported) {
		t.Errorf("mail has no processing list: %v", err)
	}

	for _, ref := range []snapshot.QueueRef{
		{Kind: snapshot.QueueDelay, Name: "orders", Key: "dq:other"},
		{Kind: snapshot.QueueDelay, Name: "tenants", Key: "dq:tenant:7:inflight"},
		{Kind: snapshot.QueueList, Name: "orders", Key: "dq:orders"},
	} {
		if _, err := w.Tasks(ctx, ref, snapshot.SectionDue, 0, 10); err == nil || w.TaskSections(ref) != nil {
			t.Errorf("%+v was read", ref)
		}
	}

	for range 20 {
		if err := s.ListQueue("lq:mail").Push(ctx, "more"); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := queueWatcher(t, rdb, 5).Tasks(ctx, mail, snapshot.SectionWaiting, 0, 100); err != nil || len(p.Tasks) != 5 {
		t.Errorf("at 5 keys a second a page holds %d tasks (%v), want 5", len(p.Tasks), err)
	}
}

// TestTasksOfAJobLibrary: what Sidekiq itself wrote is listed as Sidekiq's own API lists it:
// each queue's waiting jobs in the order a process takes them (Sidekiq::Queue lists the newest
// first) with its size, the schedule and retry sets the next due first with their scores as due
// times, the dead set the newest first; sections Sidekiq does not keep are refused.
func TestTasksOfAJobLibrary(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	rep := fillSidekiq(t, srv)
	w := queueWatcher(t, rdb, 0)
	for q, jids := range rep.Jobs.Queues {
		ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk", Queue: q})
		if got := w.TaskSections(ref); !slices.Equal(got, []snapshot.TaskSection{snapshot.SectionWaiting}) {
			t.Errorf("%s's sections %v, want waiting alone", q, got)
		}
		want := slices.Clone(jids)
		slices.Reverse(want)
		p, err := w.Tasks(ctx, ref, snapshot.SectionWaiting, 0, 10)
		if err != nil || !slices.Equal(taskIDs(p.Tasks), want) || p.Total != rep.Sizes[q] || p.Key != "queue:"+q {
			t.Errorf("%s: %s %v of %d (%v), want %v of Sidekiq::Queue#size %d", q, p.Key, taskIDs(p.Tasks), p.Total, err, want, rep.Sizes[q])
		}
		for _, sec := range []snapshot.TaskSection{snapshot.SectionDue, snapshot.SectionLater, snapshot.SectionInFlight} {
			if _, err := w.Tasks(ctx, ref, sec, 0, 10); !errors.Is(err, jobs.ErrNotSupported) {
				t.Errorf("%s %s: %v, want it not supported", q, sec, err)
			}
		}
	}
	shared := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk"})
	if got, want := w.TaskSections(shared), []snapshot.TaskSection{snapshot.SectionLater, snapshot.SectionRetry, snapshot.SectionDead}; !slices.Equal(got, want) {
		t.Errorf("the shared sections %v, want %v", got, want)
	}
	for _, c := range []struct {
		sec    snapshot.TaskSection
		key    string
		listed [][3]any
	}{
		{snapshot.SectionLater, "schedule", rep.Jobs.Schedule},
		{snapshot.SectionRetry, "retry", rep.Jobs.Retry},
		{snapshot.SectionDead, "dead", rep.Jobs.Dead},
	} {
		want := slices.Clone(c.listed)
		if c.sec != snapshot.SectionDead { // the next due first
			slices.Reverse(want)
		}
		p, err := w.Tasks(ctx, shared, c.sec, 0, 10)
		if err != nil || p.Key != c.key || len(p.Tasks) != len(want) || p.Total != int64(len(want)) {
			t.Errorf("%s: %s %v of %d (%v), Sidekiq lists %v", c.sec, p.Key, taskIDs(p.Tasks), p.Total, err, c.listed)
			continue
		}
		for i, task := range p.Tasks {
			jid, _ := want[i][0].(string)
			score, _ := want[i][1].(float64)
			due := unixSeconds(score)
			if c.sec == snapshot.SectionDead {
				due = time.Time{}
			}
			if task.ID != jid || !task.Due.Equal(due) {
				t.Errorf("%s #%d: %s due %v, Sidekiq's %s at %v", c.sec, i, task.ID, task.Due, jid, due)
			}
		}
	}
}

// taskIDs are the tasks' IDs in order.
func taskIDs(ts []snapshot.Task) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// TestTasksRefusedNamesCommandKeyAndUser: a user who may not range over sorted sets gets one
// error naming the command, the key and the user.
func TestTasksRefusedNamesCommandKeyAndUser(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	admin.ZAdd(ctx, "dq:orders", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "a"})
	if err := admin.Do(ctx, "ACL", "SETUSER", "norange", "on", ">pw", "~*", "+@all", "-zrangebyscore").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "norange", Password: "pw"})
	t.Cleanup(func() { _ = c.Close() })
	w := queueWatcher(t, c, 0)
	_, err := w.Tasks(ctx, opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "orders", Key: "dq:orders"}), snapshot.SectionDue, 0, 10)
	var ce *store.CommandError
	if !errors.As(err, &ce) || ce.Command != "ZRANGEBYSCORE" || ce.Key != "dq:orders" || ce.User != "norange" || !store.Permanent(err) {
		t.Fatalf("refused: %v", err)
	}
}

// pagePayloads are a page's payloads, in order.
func pagePayloads(p snapshot.TaskPage) []string {
	out := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		out[i] = t.Payload
	}
	return out
}

// opened is the ref that the row for ref's queue carries in a Snapshot of w, after a sweep: the
// only refs the drill-down opens (ref itself opens nothing).
func opened(t *testing.T, w drilled, ref snapshot.QueueRef) snapshot.QueueRef {
	t.Helper()
	var snap *snapshot.Snapshot
	for deadline := time.Now().Add(10 * time.Second); snap == nil; {
		st, err := w.Poll(t.Context(), 50*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Sweep.Completed {
			snap = st.Snapshot
		} else if time.Now().After(deadline) {
			t.Fatal("no sweep completed")
		}
	}
	var refs []snapshot.QueueRef
	for _, q := range snap.DelayQueues {
		refs = append(refs, q.Ref)
	}
	for _, q := range snap.ListQueues {
		refs = append(refs, q.Ref)
	}
	for _, e := range snap.JobQueues {
		for _, q := range e.Queues {
			refs = append(refs, q.Ref)
		}
		if e.Shared != nil {
			refs = append(refs, e.Shared.Ref)
		}
	}
	for _, r := range refs {
		if r.Kind == ref.Kind && r.Name == ref.Name && r.Key == ref.Key && r.Queue == ref.Queue {
			return r
		}
	}
	t.Fatalf("no row of the Snapshot shows %+v", ref)
	return ref
}
