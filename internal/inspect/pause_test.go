package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TestPauseQueue: the drill-down pauses an asynq queue a Snapshot's row opens, asynq's own
// Inspector then says it is paused and the next Snapshot's row does too; resumed, both say it is
// not. A Sidekiq queue's row is refused with the reason, and writes nothing.
func TestPauseQueue(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue("hq")); err != nil {
		t.Fatal(err)
	}
	rdb.LPush(ctx, "queue:default", `{"class":"Job","args":[],"jid":"j1","enqueued_at":1}`)
	rdb.SAdd(ctx, "queues", "default")
	w := watching(rdb, nil, scanner.Options{Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{
		{Name: "aq", Source: jobs.Source{Layout: jobs.Asynq}},
		{Name: "sk", Source: jobs.Source{Layout: jobs.Sidekiq}},
	}}})
	ref := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "aq", Queue: "hq"})
	if why := w.PauseRefusal(ref); why != "" {
		t.Fatalf("asynq refused: %s", why)
	}
	line, err := w.SetQueuePaused(ctx, ref, true)
	if err != nil || !strings.Contains(line, "paused") {
		t.Fatalf("pause: %q %v", line, err)
	}
	if info, err := insp.GetQueueInfo("hq"); err != nil || !info.Paused {
		t.Fatalf("asynq after the pause: %+v %v", info, err)
	}
	if paused, err := w.QueuePaused(ctx, ref); err != nil || !paused {
		t.Errorf("QueuePaused: %v %v", paused, err)
	}
	pausedRow(t, w, "aq", "hq")
	if _, err := w.SetQueuePaused(ctx, ref, false); err != nil {
		t.Fatal(err)
	}
	if info, err := insp.GetQueueInfo("hq"); err != nil || info.Paused {
		t.Fatalf("asynq after the resume: %+v %v", info, err)
	}
	sk := opened(t, w, snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "sk", Queue: "default"})
	before := keysOf(t, rdb)
	why := w.PauseRefusal(sk)
	if _, err := w.SetQueuePaused(ctx, sk, true); err == nil || !strings.Contains(why, "Sidekiq Pro") || err.Error() != why {
		t.Errorf("Sidekiq: refusal %q, error %v", why, err)
	}
	if after := keysOf(t, rdb); len(after) != len(before) {
		t.Errorf("a refused pause wrote: %d keys, %d before", len(after), len(before))
	}
}

// pausedRow waits for a Snapshot whose row of queue of job entry name says paused.
func pausedRow(t *testing.T, w drilled, name, queue string) {
	t.Helper()
	redistest.Eventually(t, "a Snapshot that shows "+queue+" paused", 10*time.Second, func() bool {
		st, err := w.Poll(t.Context(), 50*time.Millisecond, "")
		if err != nil || st.Snapshot == nil {
			return false
		}
		for _, e := range st.Snapshot.JobQueues {
			for _, q := range e.Queues {
				if e.Name == name && q.Queue == queue && q.Paused {
					return true
				}
			}
		}
		return false
	})
}
