package jobs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

// TestAsynqActsAsAsynq: tasks asynq itself scheduled, retried and archived are run now, and
// tasks deleted, and asynq's own Inspector then finds each where its RunTask and DeleteTask
// would leave it (pending; not found, with a unique task's lock released so the same task can be
// enqueued again); acting on a task no longer in the state the page showed writes nothing, and an
// active task is neither deleted nor returned.
func TestAsynqActsAsAsynq(t *testing.T) {
	fx := newAsynqFixture(t)
	rdb, insp := fx.rdb, fx.insp
	src := Source{Layout: Asynq}
	ctx, now := t.Context(), time.Now()
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: rdb.Options().Addr})
	t.Cleanup(func() { client.Close() })
	unique := func() (*asynq.TaskInfo, error) {
		return client.Enqueue(asynq.NewTask("uniq", []byte("once")), asynq.Queue("later"), asynq.Unique(time.Hour))
	}
	uniq, err := unique()
	if err != nil {
		t.Fatal(err)
	}
	list := func(tasks []*asynq.TaskInfo, err error) []*asynq.TaskInfo {
		t.Helper()
		if err != nil || len(tasks) == 0 {
			t.Fatalf("asynq lists %v: %v", tasks, err)
		}
		return tasks
	}
	sched := list(insp.ListScheduledTasks("later"))
	retry := list(insp.ListRetryTasks("work"))[0]
	archived := list(insp.ListArchivedTasks("work"))[0]
	active := list(insp.ListActiveTasks("work"))[0]
	task := func(id string) Task { return Task{Member: id, ID: id} }

	for _, c := range []struct {
		queue string
		sec   TaskSection
		id    string
		a     TaskAction
	}{
		{"later", SectionLater, sched[len(sched)-1].ID, ActionRunNow},
		{"work", SectionRetry, retry.ID, ActionRunNow},
		{"work", SectionDead, archived.ID, ActionRunNow},
		{"later", SectionLater, sched[0].ID, ActionDelete},
		{"later", SectionWaiting, uniq.ID, ActionDelete},
	} {
		line, err := src.Queue(c.queue).Act(ctx, rdb, c.sec, task(c.id), c.a, now)
		if err != nil {
			t.Fatalf("%s %s %s: %v", c.a, c.sec, c.id, err)
		}
		info, ierr := insp.GetTaskInfo(c.queue, c.id)
		switch {
		case c.a == ActionRunNow && (ierr != nil || info.State != asynq.TaskStatePending || !strings.Contains(line, "is pending now")):
			t.Errorf("%s after run now: %v %v (%q), want pending", c.id, info, ierr, line)
		case c.a == ActionDelete && !errors.Is(ierr, asynq.ErrTaskNotFound):
			t.Errorf("%s after delete: %v %v, want not found", c.id, info, ierr)
		}
	}
	if _, err := unique(); err != nil {
		t.Fatalf("the deleted unique task's lock was kept: %v", err)
	}
	for _, q := range []string{"later", "work"} {
		qi, err := insp.GetQueueInfo(q)
		st, serr := src.Stats(ctx, rdb, q, time.Now())
		if err != nil || serr != nil || st.States["pending"] != int64(qi.Pending) || st.States["scheduled"] != int64(qi.Scheduled) ||
			st.States["retry"] != int64(qi.Retry) || st.States["archived"] != int64(qi.Archived) {
			t.Errorf("%s: stats %v (%v), asynq %+v (%v)", q, st.States, serr, qi, err)
		}
	}

	before := dumpKeysMatch(t, rdb, "asynq:{later}:*")
	for _, c := range []struct {
		sec TaskSection
		id  string
		a   TaskAction
	}{
		{SectionLater, sched[len(sched)-1].ID, ActionRunNow}, // pending now
		{SectionLater, sched[0].ID, ActionDelete},            // deleted
		{SectionWaiting, uniq.ID, ActionDelete},
		{SectionLater, "no-such-task", ActionRunNow},
	} {
		_, err := src.Queue("later").Act(ctx, rdb, c.sec, task(c.id), c.a, now)
		if !errors.Is(err, ErrTaskGone) {
			t.Errorf("%s %s %s again: %v, want ErrTaskGone", c.a, c.sec, c.id, err)
		}
	}
	wantUnchangedMatch(t, rdb, "asynq:{later}:*", before, "acting on tasks no longer there")
	for _, a := range []TaskAction{ActionDelete, ActionReturn} {
		if _, err := src.Queue("work").Act(ctx, rdb, SectionInFlight, task(active.ID), a, now); !errors.Is(err, ErrNotSupported) {
			t.Errorf("%s of an active task: %v, want ErrNotSupported", a, err)
		}
	}
	if info, err := insp.GetTaskInfo("work", active.ID); err != nil || info.State != asynq.TaskStateActive {
		t.Fatalf("the active task: %v %v", info, err)
	}
	if _, err := src.Queue("nowhere").Act(ctx, rdb, SectionLater, task(sched[1].ID), ActionRunNow, now); err == nil || !strings.Contains(err.Error(), "no queue") {
		t.Fatalf("a queue asynq does not know: %v", err)
	}
	wantUnchangedMatch(t, rdb, "asynq:{later}:*", before, "refusals")
}
