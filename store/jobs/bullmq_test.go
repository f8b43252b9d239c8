package jobs

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"

	"github.com/redis/go-redis/v9"
)

// bullmqReport is what store/testdata/node/bullmq.mjs prints: BullMQ's own counts of each queue
// it wrote, at one moment.
type bullmqReport struct {
	Now    int64 `json:"now"` // ms
	Queues map[string]struct {
		Counts     map[string]int64    `json:"counts"` // Queue.getJobCounts()
		Paused     bool                `json:"paused"`
		DelayedAt  []int64             `json:"delayedAt"` // each delayed job's timestamp + delay, ms
		DelayedDue int64               `json:"delayedDue"`
		IDs        map[string][]string `json:"ids"` // each state's job ids as BullMQ lists them
		Jobs       map[string]struct {
			Name      string `json:"name"`
			Data      string `json:"data"`
			Timestamp int64  `json:"timestamp"`
		} `json:"jobs"`
	} `json:"queues"`
}

// bullmqFixture starts a redis-server, lets BullMQ itself write three queues into it, and returns
// a client and what BullMQ reported.
func bullmqFixture(t *testing.T) (*redis.Client, bullmqReport) {
	t.Helper()
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t)
	var rep bullmqReport
	redistest.RunFixture(t, node, redistest.NodeDir(), &rep, "bullmq.mjs", "redis://"+srv.Addr)
	if len(rep.Queues) != 3 {
		t.Fatalf("fixture reported %d queues, want 3: %+v", len(rep.Queues), rep)
	}
	return srv.Client(t), rep
}

// jobCounts are Stats' normalized fields, comparable.
type jobCounts struct {
	Waiting, Active, Scheduled, Retry, Dead, Completed int64
	Paused                                             bool
}

func countsOf(s Stats) jobCounts {
	return jobCounts{s.Waiting, s.Active, s.Scheduled, s.Retry, s.Dead, s.Completed, s.Paused}
}

// dueBy counts the due times at or before now.
func dueBy(at []int64, now time.Time) int64 {
	var n int64
	for _, ms := range at {
		if ms <= now.UnixMilli() {
			n++
		}
	}
	return n
}

// TestBullMQStatsMatchBullMQ reads the queues BullMQ wrote and holds every number to BullMQ's own.
func TestBullMQStatsMatchBullMQ(t *testing.T) {
	rdb, rep := bullmqFixture(t)
	src := Source{Layout: BullMQ}
	now := time.UnixMilli(rep.Now)
	for name, q := range rep.Queues {
		st, err := src.Stats(t.Context(), rdb, name, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: bullmq %v paused=%v delayed due %d of %d; hourglass %v paused=%v due %d of %d",
			name, q.Counts, q.Paused, q.DelayedDue, len(q.DelayedAt), st.States, st.Paused, st.Schedule.Due, st.Schedule.Depth)
		if !maps.Equal(st.States, q.Counts) {
			t.Errorf("%s: States %v, BullMQ's getJobCounts %v", name, st.States, q.Counts)
		}
		c := q.Counts
		want := jobCounts{
			Waiting: c["waiting"] + c["paused"] + c["prioritized"], Active: c["active"], Scheduled: c["delayed"],
			Retry: Absent, Dead: c["failed"], Completed: c["completed"], Paused: q.Paused,
		}
		if got := countsOf(st); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		s := st.Schedule
		if !s.Timed || s.Missing || s.Unit != store.BullMQScore || s.Depth != int64(len(q.DelayedAt)) || s.Due != q.DelayedDue {
			t.Errorf("%s: schedule %+v, want timed, depth %d, due %d", name, *s, len(q.DelayedAt), q.DelayedDue)
		}
		// BullMQ keeps no latency of its own: the next waiting job's timestamp, as BullMQ lists
		// the waiting jobs, is it.
		latency := 0.0
		if ids := slices.Concat(q.IDs["wait"], q.IDs["paused"], q.IDs["prioritized"]); len(ids) > 0 {
			latency = float64(rep.Now-q.Jobs[ids[0]].Timestamp) / 1000
		}
		qs, err := src.Queue(name).Stats(t.Context(), rdb, now)
		if err != nil {
			t.Fatal(err)
		}
		checkLatency(t, name, *qs.Job, latency)
	}
	later := rep.Queues["later"]
	if later.DelayedDue < 1 || later.DelayedDue == int64(len(later.DelayedAt)) {
		t.Errorf("the fixture should leave some delayed jobs due and some not: %+v", later)
	}
	st, err := src.Stats(t.Context(), rdb, "nosuch", now)
	if err != nil || !st.Schedule.Missing {
		t.Errorf("a queue BullMQ never wrote: %+v %v, want Missing", st.Schedule, err)
	}
}

// TestBullMQLaterNowMakesDelayedJobsDue moves now past the next due times: the jobs BullMQ
// scheduled for then count as due, and lag and next due follow.
func TestBullMQLaterNowMakesDelayedJobsDue(t *testing.T) {
	rdb, rep := bullmqFixture(t)
	at := rep.Queues["later"].DelayedAt
	src := Source{Layout: BullMQ}
	base := time.UnixMilli(rep.Now)
	prev := int64(-1)
	for _, d := range []time.Duration{0, 3 * time.Second, 2 * time.Minute, 3 * time.Hour} {
		now := base.Add(d)
		st, err := src.Stats(t.Context(), rdb, "later", now)
		if err != nil {
			t.Fatal(err)
		}
		s := st.Schedule
		if want := dueBy(at, now); s.Due != want {
			t.Errorf("at +%v: due %d, want %d (due times %v)", d, s.Due, want, at)
		}
		if s.Due <= prev {
			t.Errorf("at +%v: due %d, not more than %d before", d, s.Due, prev)
		}
		prev = s.Due
		if lag := now.Sub(time.UnixMilli(at[0])); s.Lag != lag {
			t.Errorf("at +%v: lag %v, want %v", d, s.Lag, lag)
		}
		var sched int64
		for _, n := range s.Schedule {
			sched += n
		}
		if sched+s.Due != s.Depth {
			t.Errorf("at +%v: due %d + scheduled %v != depth %d", d, s.Due, s.Schedule, s.Depth)
		}
	}
}

// TestBullMQClassify claims every key BullMQ wrote for its queue, and keys of a queue whose name
// holds ':' (older BullMQ allowed it), and no other key.
func TestBullMQClassify(t *testing.T) {
	rdb, rep := bullmqFixture(t)
	src := Source{Layout: BullMQ}
	keys := scanAll(t, rdb, "*")
	if len(keys) < 30 {
		t.Fatalf("BullMQ wrote only %d keys: %v", len(keys), keys)
	}
	for _, k := range keys {
		got, ok := src.Classify(k)
		// BullMQ 5 refuses ':' in a queue name: the queue is the key's second segment.
		want := Key{Queue: strings.Split(k, ":")[1]}
		if _, known := rep.Queues[want.Queue]; !ok || got != want || !known {
			t.Errorf("Classify(%q) = %+v %v, want %+v", k, got, ok, want)
		}
	}
	cases := map[string]string{
		"bull:mail:eu:wait":                    "mail:eu",
		"bull:mail:eu:waiting-children":        "mail:eu",
		"bull:mail:eu:metrics:failed:data":     "mail:eu",
		"bull:mail:eu:17":                      "mail:eu",
		"bull:mail:eu:17:logs":                 "mail:eu",
		"bull:mail:eu:17:failed":               "mail:eu",
		"bull:mail:eu:de:order:9":              "mail:eu",
		"bull:mail:eu:repeat:abc:1700000000":   "mail:eu",
		"bull:work:repeat:abc:1700000000:lock": "work",
		"bull:work:6bd4c3e0-uuid":              "work",
	}
	for k, q := range cases {
		if got, ok := src.Classify(k); !ok || got != (Key{Queue: q}) {
			t.Errorf("Classify(%q) = %+v %v, want queue %q", k, got, ok, q)
		}
	}
	// A queue before BullMQ 5 may be named "mail:eu"; a flow's parent "eu" in queue "mail" keeps
	// its failed children there too: the sweep tells which (Key.Else).
	if got, ok := src.Classify("bull:mail:eu:failed"); !ok || got != (Key{Queue: "mail:eu", Else: "mail"}) {
		t.Errorf(`Classify("bull:mail:eu:failed") = %+v %v, want queue mail:eu, else mail`, got, ok)
	}
	for _, k := range []string{"bull", "bull:", "bull:work", "bull:work:", "bullish:work:wait", "other:work:wait", "sidekiq:queue:work"} {
		if got, ok := src.Classify(k); ok {
			t.Errorf("Classify(%q) = %+v, want not BullMQ's", k, got)
		}
	}
	custom := Source{Layout: BullMQ, Prefix: "{app}:bull"}
	if got, ok := custom.Classify("{app}:bull:work:delayed"); !ok || got.Queue != "work" {
		t.Errorf("with prefix {app}:bull: %+v %v", got, ok)
	}
	if _, ok := custom.Classify("bull:work:delayed"); ok {
		t.Error("with prefix {app}:bull, claimed a key of the default prefix")
	}
	if r := src.Registries(); len(r) != 0 {
		t.Errorf("Registries = %v, want none", r)
	}
}

// scanAll lists the keys matching pattern with SCAN.
func scanAll(t *testing.T, rdb *redis.Client, pattern string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(t.Context(), 0, pattern, 100).Iterator()
	for iter.Next(t.Context()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}
