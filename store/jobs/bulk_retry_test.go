package jobs

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestBulkRidesOutALostReply: a chunk whose reply is lost after Redis ran it (the connection cut
// on its way back) is sent again, finds its jobs gone and writes nothing more; every job of
// Sidekiq's retry set is deleted once, the figures say a chunk was sent again, and the undo
// recorded before the first send puts every key back byte for byte.
func TestBulkRidesOutALostReply(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fillSidekiqFailures(t, rdb, 300, 0)
	before := dumpKeys(t, rdb)
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	via := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: -1})
	defer via.Close()
	var undo []UndoTask
	chunks := 0
	res, err := RunBulk(t.Context(), via, Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionDelete, rdb.Time(t.Context()).Val(), BulkOptions{
		Chunk: 50, MaxCall: -1,
		Wait: func(ctx context.Context, _ int) error {
			if chunks++; chunks == 3 {
				proxy.DropReplies(1) // the third chunk's script runs; its answer is lost
			}
			return nil
		},
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
	})
	if err != nil || res.Done+res.Gone != 300 || res.Gone != 50 || res.Resent != 1 || res.Fault != "" || rdb.Exists(t.Context(), "retry").Val() != 0 {
		t.Fatalf("delete all through a lost reply: %+v, %v", res, err)
	}
	if ur, err := Undo(t.Context(), rdb, undo, 100, nil); err != nil || ur.Restored != 300 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	wantUnchanged(t, rdb, before, "a delete all through a lost reply, undone")
}

// TestBulkRidesOutARestart: Redis goes down (its data kept on disk) while a retry all of
// Sidekiq's retry set runs, and comes back once the run has said it is waiting: the run goes on
// where it was, and every job is moved once.
func TestBulkRidesOutARestart(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := srv.Client(t)
	fillSidekiqFailures(t, rdb, 300, 0)
	chunks, faults := 0, 0
	restart := func() { srv.Restart(t, "--appendonly", "yes", "--appendfsync", "always") }
	res, err := RunBulk(t.Context(), rdb, Source{Layout: Sidekiq}.SharedQueue(), SectionRetry, ActionRunNow, rdb.Time(t.Context()).Val(), BulkOptions{
		Chunk: 50, MaxCall: -1,
		Wait: func(ctx context.Context, _ int) error {
			if chunks++; chunks == 3 {
				srv.Stop() // the chunk about to be sent finds no server
			}
			return nil
		},
		Progress: func(r BulkResult) {
			if r.Fault != "" {
				if faults++; faults == 1 {
					restart() // back once the run says it waits
				}
			}
		},
	})
	queued := rdb.LLen(t.Context(), "queue:default").Val() + rdb.LLen(t.Context(), "queue:mail").Val()
	if err != nil || res.Done+res.Gone != 300 || queued != 300 || rdb.Exists(t.Context(), "retry").Val() != 0 || faults == 0 {
		t.Fatalf("retry all through a restart: %+v, %v; %d queued, %d faults told", res, err, queued, faults)
	}
}

// TestBulkListRidesOutALostReply: a delete all of a Sidekiq queue whose third chunk's reply is
// lost sends it again, which finds those jobs gone; as it cannot tell them from jobs a worker
// took, it records none of them as not done, so the undo puts every job back, in order.
func TestBulkListRidesOutALostReply(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), "testdata/sidekiq", nil,
		"bulk.rb", "push", "redis://"+srv.Addr+"/0", "mail", "300")
	was := rdb.LRange(t.Context(), "queue:mail", 0, -1).Val()
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	via := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: -1})
	defer via.Close()
	var undo []UndoTask
	chunks := 0
	res, err := RunBulk(t.Context(), via, Source{Layout: Sidekiq}.Queue("mail"), SectionWaiting, ActionDelete, rdb.Time(t.Context()).Val(), BulkOptions{
		Chunk: 50, MaxCall: -1,
		Wait: func(ctx context.Context, _ int) error {
			if chunks++; chunks == 3 {
				proxy.DropReplies(1)
			}
			return nil
		},
		Record: func(u []UndoTask) error { undo = append(undo, u...); return nil },
	})
	if err != nil || res.Done+res.Gone != 300 || res.Resent != 1 || rdb.Exists(t.Context(), "queue:mail").Val() != 0 {
		t.Fatalf("delete all through a lost reply: %+v, %v", res, err)
	}
	if ur, err := Undo(t.Context(), rdb, undo, 100, nil); err != nil || ur.Restored != 300 {
		t.Fatalf("undo: %+v, %v", ur, err)
	}
	if got := rdb.LRange(t.Context(), "queue:mail", 0, -1).Val(); !slices.Equal(got, was) {
		t.Fatalf("undone, the queue holds %d jobs, not the %d it held in their order", len(got), len(was))
	}
}
