package jobs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

type bullmqPauseState struct {
	Paused bool             `json:"paused"`
	Counts map[string]int64 `json:"counts"`
}

func bullmqPauseFixture(t *testing.T, rdb *redis.Client, out any, args ...string) {
	t.Helper()
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	redistest.RunFixture(t, node, redistest.NodeDir(), out, append([]string{"bullmq_pause.mjs", "redis://" + rdb.Options().Addr}, args...)...)
}

// TestBullMQPauseAsBullMQ pauses a queue BullMQ filled, and BullMQ's own Queue.isPaused() says
// paused, its counts say the waiting jobs are paused, and a BullMQ Worker started meanwhile looks
// for a job and takes none; resumed, isPaused() says no and the same Worker completes every job
// that waited. Pausing twice writes as Queue.pause() does and says it was paused already.
func TestBullMQPauseAsBullMQ(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	bullmqPauseFixture(t, rdb, nil, "setup", "pq")
	p, err := PauserOf(Source{Layout: BullMQ}.Queue("pq"))
	if err != nil {
		t.Fatal(err)
	}
	line, err := p.Pause(ctx, rdb, time.Now())
	if err != nil || !strings.Contains(line, "paused") {
		t.Fatalf("pause: %q %v", line, err)
	}
	var st bullmqPauseState
	bullmqPauseFixture(t, rdb, &st, "state", "pq")
	if !st.Paused || st.Counts["paused"] != 3 || st.Counts["wait"] != 0 || st.Counts["prioritized"] != 1 || st.Counts["delayed"] != 1 {
		t.Fatalf("BullMQ after hourglass paused: %+v", st)
	}
	if again, err := p.Pause(ctx, rdb, time.Now()); err != nil || !strings.Contains(again, "already") {
		t.Errorf("pause again: %q %v", again, err)
	}
	if paused, err := p.Paused(ctx, rdb); err != nil || !paused {
		t.Errorf("Paused: %v %v", paused, err)
	}
	if ev := rdb.XRevRangeN(ctx, "bull:pq:events", "+", "-", 1).Val(); len(ev) != 1 || ev[0].Values["event"] != "paused" {
		t.Errorf("the last event %v, want paused", ev)
	}

	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	cmd := exec.CommandContext(ctx, node, "bullmq_pause.mjs", "redis://"+rdb.Options().Addr, "work", "pq", "4")
	cmd.Dir = redistest.NodeDir()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	var seen struct {
		Drained   bool     `json:"drained"`
		Completed []string `json:"completed"`
		Paused    bool     `json:"paused"`
	}
	readLine := func() {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the worker printed no line: %v\n%s", lines.Err(), stderr.String())
		}
		if err := json.Unmarshal(lines.Bytes(), &seen); err != nil {
			t.Fatalf("worker said %q: %v", lines.Text(), err)
		}
	}
	readLine()
	if !seen.Drained || len(seen.Completed) != 0 || !seen.Paused {
		t.Fatalf("a BullMQ Worker on the paused queue: %+v, want drained with nothing completed", seen)
	}
	bullmqPauseFixture(t, rdb, &st, "state", "pq")
	if st.Counts["paused"] != 3 || st.Counts["active"] != 0 || st.Counts["completed"] != 0 {
		t.Fatalf("the paused queue after a Worker looked: %+v", st)
	}
	if line, err := p.Resume(ctx, rdb); err != nil || !strings.Contains(line, "resumed") {
		t.Fatalf("resume: %q %v", line, err)
	}
	readLine()
	slices.Sort(seen.Completed)
	if !slices.Equal(seen.Completed, []string{"p4", "w1", "w2", "w3"}) {
		t.Errorf("the Worker completed %v after the resume, want the 4 jobs that waited", seen.Completed)
	}
	bullmqPauseFixture(t, rdb, &st, "state", "pq")
	if st.Paused || st.Counts["completed"] != 4 || st.Counts["delayed"] != 1 {
		t.Errorf("BullMQ after hourglass resumed: %+v", st)
	}
	if again, err := p.Resume(ctx, rdb); err != nil || !strings.Contains(again, "already") {
		t.Errorf("resume again: %q %v", again, err)
	}
}

// TestBullMQPauseSameAsBullMQ holds what hourglass's pause writes key by key to what BullMQ's own
// Queue.pause() writes on a twin queue, and the same for resume (the marker, the lists, meta).
func TestBullMQPauseSameAsBullMQ(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	bullmqPauseFixture(t, rdb, nil, "setup", "ours")
	bullmqPauseFixture(t, rdb, nil, "setup", "theirs")
	p, err := PauserOf(Source{Layout: BullMQ}.Queue("ours"))
	if err != nil {
		t.Fatal(err)
	}
	dump := func(q string) string {
		t.Helper()
		var b strings.Builder
		for _, k := range []string{"wait", "paused", "prioritized", "delayed"} {
			b.WriteString(k + "=" + strings.Join(rdb.LRange(ctx, "bull:"+q+":"+k, 0, -1).Val(), ",") +
				strings.Join(rdb.ZRange(ctx, "bull:"+q+":"+k, 0, -1).Val(), ",") + " ")
		}
		marker := rdb.ZRangeWithScores(ctx, "bull:"+q+":marker", 0, -1).Val()
		meta := rdb.HGetAll(ctx, "bull:"+q+":meta").Val()
		delete(meta, "version")
		raw, _ := json.Marshal([]any{marker, meta})
		return b.String() + string(raw)
	}
	for _, pause := range []bool{true, false} {
		verb := map[bool]string{true: "pause", false: "resume"}[pause]
		if pause {
			_, err = p.Pause(ctx, rdb, time.Now())
		} else {
			_, err = p.Resume(ctx, rdb)
		}
		if err != nil {
			t.Fatal(err)
		}
		bullmqQueueCall(t, rdb, "theirs", verb)
		if ours, theirs := dump("ours"), strings.ReplaceAll(dump("theirs"), "theirs", "ours"); ours != theirs {
			t.Errorf("after %s: hourglass wrote\n%s\nBullMQ wrote\n%s", verb, ours, theirs)
		}
	}
}

// bullmqQueueCall runs BullMQ's Queue.<verb>() on queue.
func bullmqQueueCall(t *testing.T, rdb *redis.Client, queue, verb string) {
	t.Helper()
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	script := "import { Queue } from 'bullmq'; const q = new Queue(process.argv[1], { connection: { host: '" +
		rdb.Options().Addr[:strings.LastIndexByte(rdb.Options().Addr, ':')] + "', port: " +
		rdb.Options().Addr[strings.LastIndexByte(rdb.Options().Addr, ':')+1:] + " } }); await q." + verb + "(); await q.close(); console.log('{}');"
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "--input-type=module", "-e", script, queue)
}

// TestAsynqPauseAsAsynq pauses a queue asynq filled: asynq's Inspector says paused and a running
// asynq server processes none of its tasks (it processes another queue's task meanwhile, so it
// was polling); resumed, the Inspector says not paused and the server processes them.
func TestAsynqPauseAsAsynq(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	client := asynq.NewClient(opt)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	for range 3 {
		if _, err := client.Enqueue(asynq.NewTask("held", nil), asynq.Queue("hq")); err != nil {
			t.Fatal(err)
		}
	}
	p, err := PauserOf(Source{Layout: Asynq}.Queue("hq"))
	if err != nil {
		t.Fatal(err)
	}
	if line, err := p.Pause(ctx, rdb, time.Now()); err != nil || !strings.Contains(line, "paused") {
		t.Fatalf("pause: %q %v", line, err)
	}
	if info, err := insp.GetQueueInfo("hq"); err != nil || !info.Paused {
		t.Fatalf("asynq's Inspector after hourglass paused: %+v %v", info, err)
	}
	if line, _ := p.Pause(ctx, rdb, time.Now()); !strings.Contains(line, "already") {
		t.Errorf("pause again: %q", line)
	}
	var held, other atomic.Int64
	mux := asynq.NewServeMux()
	mux.HandleFunc("held", func(context.Context, *asynq.Task) error { held.Add(1); return nil })
	mux.HandleFunc("other", func(context.Context, *asynq.Task) error { other.Add(1); return nil })
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"hq": 1, "oq": 1},
		LogLevel: asynq.FatalLevel})
	if err := server.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	for i := range 3 { // the server takes from both queues at random: three of the other's prove it polls
		if _, err := client.Enqueue(asynq.NewTask("other", nil), asynq.Queue("oq")); err != nil {
			t.Fatal(err)
		}
		redistest.Eventually(t, "the other queue's task processed", 10*time.Second, func() bool { return other.Load() == int64(i+1) })
	}
	if n := held.Load(); n != 0 {
		t.Fatalf("the asynq server processed %d tasks of the paused queue", n)
	}
	if info, _ := insp.GetQueueInfo("hq"); info.Pending != 3 {
		t.Fatalf("the paused queue holds %d pending, want 3", info.Pending)
	}
	if line, err := p.Resume(ctx, rdb); err != nil || !strings.Contains(line, "resumed") {
		t.Fatalf("resume: %q %v", line, err)
	}
	if info, err := insp.GetQueueInfo("hq"); err != nil || info.Paused {
		t.Fatalf("asynq's Inspector after hourglass resumed: %+v %v", info, err)
	}
	redistest.Eventually(t, "the resumed queue's tasks processed", 10*time.Second, func() bool { return held.Load() == 3 })
	if line, _ := p.Resume(ctx, rdb); !strings.Contains(line, "not paused") {
		t.Errorf("resume again: %q", line)
	}
}

// TestPauseRefusedWhereTheLibraryHasNone: Sidekiq, RQ, Celery, the shared sets and hourglass's
// own queues have no pause, each with its reason.
func TestPauseRefusedWhereTheLibraryHasNone(t *testing.T) {
	for _, c := range []struct {
		q    Queue
		want string
	}{
		{Source{Layout: Sidekiq}.Queue("default"), "Sidekiq Pro"},
		{Source{Layout: Sidekiq}.SharedQueue(), "no queue"},
		{Source{Layout: RQ}.Queue("default"), "RQ keeps no paused state"},
		{Source{Layout: Celery}.Queue("celery"), "Celery keeps no paused state"},
		{Source{Layout: BullMQ}.SharedQueue(), "own queues"},
		{DelayQueueOf("dq", "", store.Milliseconds), "own queues"},
		{ListQueueOf("lq", ""), "own queues"},
	} {
		_, err := PauserOf(c.q)
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: %v, want ErrNotSupported naming %q", c.q, err, c.want)
		}
	}
}
