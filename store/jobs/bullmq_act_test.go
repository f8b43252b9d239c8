package jobs

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// bullmqActs runs store/testdata/node/bullmq_act.mjs with args and decodes what it prints.
func bullmqActs(t *testing.T, rdb *redis.Client, out any, args ...string) {
	t.Helper()
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	redistest.RunFixture(t, node, redistest.NodeDir(), out, append([]string{"bullmq_act.mjs", "redis://" + rdb.Options().Addr}, args...)...)
}

// bullmqRead is what bullmq_act.mjs read prints: each queue's getJobCounts() and each job's
// getState() (nil: BullMQ has no such job).
type bullmqRead struct {
	Counts map[string]map[string]int64 `json:"counts"`
	States map[string]*string          `json:"states"`
}

// bullmqEvents are the events of a queue's stream about job id, each "event/prev".
func bullmqEvents(t *testing.T, rdb *redis.Client, queue, id string) []string {
	t.Helper()
	var out []string
	for _, m := range rdb.XRange(t.Context(), "bull:"+queue+":events", "-", "+").Val() {
		if m.Values["jobId"] == id {
			out = append(out, fmt.Sprint(m.Values["event"], "/", m.Values["prev"]))
		}
	}
	return out
}

// TestBullMQActsAsBullMQ: of twin jobs BullMQ made, hourglass promotes and removes one of each and
// BullMQ's own Job.promote() and Job.remove() the other; the two end alike (state, hash, priority,
// events, deduplication key, markers) and BullMQ's getJobCounts and getState see hourglass's as
// its own. A job of a flow, an active job, a failed job to retry and a queue of another BullMQ
// major version are refused; a job no longer there is ErrTaskGone; neither writes anything.
func TestBullMQActsAsBullMQ(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx, now := t.Context(), time.Now()
	src := Source{Layout: BullMQ}
	bullmqActs(t, rdb, nil, "setup")
	ops := []struct {
		queue, twin string
		sec         TaskSection
		a           TaskAction
	}{
		{"acts", "p0", SectionLater, ActionRunNow}, {"acts", "p5", SectionLater, ActionRunNow},
		{"acts-held", "h", SectionLater, ActionRunNow}, {"acts", "w", SectionWaiting, ActionDelete},
		{"acts", "d", SectionLater, ActionDelete}, {"acts-fail", "x", SectionDead, ActionDelete},
	}
	var theirs, refs []string
	for _, op := range ops {
		id := op.twin + "-ours"
		if line, err := src.Queue(op.queue).Act(ctx, rdb, op.sec, Task{Member: id, ID: id}, op.a, now); err != nil {
			t.Fatalf("%s %s: %q %v", op.a, id, line, err)
		}
		verb := map[TaskAction]string{ActionRunNow: "promote", ActionDelete: "remove"}[op.a]
		theirs = append(theirs, verb+":"+op.queue+":"+op.twin+"-theirs")
		refs = append(refs, op.queue+":"+op.twin+"-ours", op.queue+":"+op.twin+"-theirs")
	}
	bullmqActs(t, rdb, nil, append([]string{"do"}, theirs...)...)

	var read bullmqRead
	bullmqActs(t, rdb, &read, append([]string{"read"}, refs...)...)
	for i := 0; i < len(refs); i += 2 {
		ours, their := read.States[refs[i]], read.States[refs[i+1]]
		if (ours == nil) != (their == nil) || ours != nil && *ours != *their {
			t.Errorf("%s is %v, BullMQ's twin %v", refs[i], deref(ours), deref(their))
		}
	}
	for _, op := range ops {
		ours, their := "bull:"+op.queue+":"+op.twin+"-ours", "bull:"+op.queue+":"+op.twin+"-theirs"
		a, b := rdb.HGetAll(ctx, ours).Val(), rdb.HGetAll(ctx, their).Val()
		delete(a, "timestamp")
		delete(b, "timestamp")
		for k := range b { // the twins' ids (and deduplication ids) differ by name alone
			a[k] = strings.ReplaceAll(a[k], "-ours", "-twin")
			b[k] = strings.ReplaceAll(b[k], "-theirs", "-twin")
		}
		if !maps.Equal(a, b) {
			t.Errorf("%s's hash %v, BullMQ's twin %v", ours, a, b)
		}
		if e1, e2 := bullmqEvents(t, rdb, op.queue, op.twin+"-ours"), bullmqEvents(t, rdb, op.queue, op.twin+"-theirs"); strings.Join(e1, ",") != strings.Join(e2, ",") {
			t.Errorf("%s's events %v, BullMQ's twin %v", ours, e1, e2)
		}
	}
	if s1, s2 := rdb.ZScore(ctx, "bull:acts:prioritized", "p5-ours").Val(), rdb.ZScore(ctx, "bull:acts:prioritized", "p5-theirs").Val(); math.Floor(s1/(1<<32)) != 5 || math.Floor(s2/(1<<32)) != 5 {
		t.Errorf("prioritized scores %v and BullMQ's %v, want priority 5 in both", s1, s2)
	}
	if rdb.Exists(ctx, "bull:acts:de:dd-ours", "bull:acts:de:dd-theirs").Val() != 0 {
		t.Error("a removed job's deduplication key was kept")
	}
	if rdb.ZScore(ctx, "bull:acts-held:marker", "0").Err() != redis.Nil || rdb.ZScore(ctx, "bull:acts:marker", "0").Err() != nil {
		t.Error("a paused queue got a ready marker, or a running one none")
	}
	for q, counts := range read.Counts {
		st, err := src.Stats(ctx, rdb, q, time.Now())
		if err != nil || !maps.Equal(st.States, counts) {
			t.Errorf("%s: stats %v (%v), getJobCounts %v", q, st.States, err, counts)
		}
	}
	checkBullMQRefusals(t, rdb, src)
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// checkBullMQRefusals: what BullMQ's own API would not do, or would do otherwise, and jobs no
// longer there, each without a write.
func checkBullMQRefusals(t *testing.T, rdb *redis.Client, src Source) {
	t.Helper()
	ctx, now := t.Context(), time.Now()
	task := func(id string) Task { return Task{Member: id, ID: id} }
	before := dumpKeys(t, rdb)
	for _, c := range []struct {
		queue, id string
		sec       TaskSection
		a         TaskAction
		want      error
	}{
		{"acts", "p0-ours", SectionLater, ActionRunNow, ErrTaskGone},
		{"acts", "w-ours", SectionWaiting, ActionDelete, ErrTaskGone},
		{"acts", "f-child", SectionWaiting, ActionDelete, ErrNotSupported},
		{"acts", "p0-ours", SectionInFlight, ActionDelete, ErrNotSupported},
		{"acts", "p0-ours", SectionInFlight, ActionReturn, ErrNotSupported},
		{"acts-fail", "x-ours", SectionDead, ActionRunNow, ErrNotSupported},
		{"acts", "p0-ours", SectionWaiting, ActionRunNow, ErrNotSupported},
	} {
		_, err := src.Queue(c.queue).Act(ctx, rdb, c.sec, task(c.id), c.a, now)
		if !errors.Is(err, c.want) {
			t.Errorf("%s %s %s: %v, want %v", c.a, c.sec, c.id, err, c.want)
		}
	}
	wantUnchanged(t, rdb, before, "refusals")
	rdb.HSet(ctx, "bull:acts:meta", "version", "bullmq:4.17.0")
	before = dumpKeys(t, rdb)
	for _, a := range []TaskAction{ActionRunNow, ActionDelete} {
		_, err := src.Queue("acts").Act(ctx, rdb, SectionLater, task("p0-theirs"), a, now) // promoted: waiting now, but the version is read first
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "BullMQ 5") {
			t.Errorf("%s on a BullMQ 4 queue: %v", a, err)
		}
	}
	wantUnchanged(t, rdb, before, "a BullMQ 4 queue")
}
