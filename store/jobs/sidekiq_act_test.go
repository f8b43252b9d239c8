package jobs

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// sidekiqJob is a job as store/jobs/testdata/sidekiq/read.rb prints it, from Sidekiq's own API.
type sidekiqJob struct {
	JID        string          `json:"jid"`
	Class      string          `json:"class"`
	Args       json.RawMessage `json:"args"`
	Queue      string          `json:"queue"`
	RetryCount *int64          `json:"retry_count"`
	EnqueuedAt *float64        `json:"enqueued_at"`
}

// sidekiqView is what Sidekiq's API sees: each queue's jobs (the next to run first) and the sets'.
type sidekiqView struct {
	Queues   map[string][]sidekiqJob `json:"queues"`
	Schedule []sidekiqJob            `json:"schedule"`
	Retry    []sidekiqJob            `json:"retry"`
	Dead     []sidekiqJob            `json:"dead"`
}

func readSidekiq(t *testing.T, rdb *redis.Client, ns string) sidekiqView {
	t.Helper()
	mods := []string{"sidekiq"}
	if ns != "" {
		mods = append(mods, "redis/namespace")
	}
	var v sidekiqView
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", mods...), "testdata/sidekiq", &v,
		"read.rb", "redis://"+rdb.Options().Addr+"/0", ns)
	return v
}

// jidsOf are the jobs' jids, in order.
func jidsOf(jobs []sidekiqJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.JID
	}
	return out
}

// sidekiqEntry finds the entry of the sorted set (as a page reads it: the member as stored) whose
// job has args; the test fails when there is none.
func sidekiqEntry(t *testing.T, rdb *redis.Client, key, args string) (Task, sidekiqJob) {
	t.Helper()
	for _, m := range rdb.ZRange(t.Context(), key, 0, -1).Val() {
		var j sidekiqJob
		if json.Unmarshal([]byte(m), &j) == nil && string(j.Args) == args {
			return Task{Member: m}, j
		}
	}
	t.Fatalf("no job with args %s in %s", args, key)
	return Task{}, sidekiqJob{}
}

// TestSidekiqActsAsSidekiq: jobs Sidekiq itself scheduled, retried and killed are run now and
// deleted, and Sidekiq's own API then sees each where Sidekiq's add_to_queue, retry and delete
// would leave it: in its queue, next to run, with enqueued_at now and a retry's retry_count
// counted back; acting on a job no longer there writes nothing.
func TestSidekiqActsAsSidekiq(t *testing.T) {
	for _, ns := range []string{"", "myapp"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			rdb, _ := sidekiqFixture(t, ns)
			src := Source{Layout: Sidekiq, Prefix: ns}
			ctx, now := t.Context(), time.Now()
			key := func(k string) string { return sidekiqJobs{ns: ns}.key(k) }

			later, laterJob := sidekiqEntry(t, rdb, key("schedule"), `["later"]`)
			retry, retryJob := sidekiqEntry(t, rdb, key("retry"), `["again"]`)
			dead, deadJob := sidekiqEntry(t, rdb, key("dead"), `["bounced"]`)
			never, _ := sidekiqEntry(t, rdb, key("dead"), `["never"]`)
			for _, c := range []struct {
				sec  TaskSection
				task Task
			}{{SectionLater, later}, {SectionRetry, retry}, {SectionDead, dead}} {
				line, err := src.SharedQueue().Act(ctx, rdb, c.sec, c.task, ActionRunNow, now)
				if err != nil || !strings.Contains(line, "is in queue") {
					t.Fatalf("run now %s: %q %v", c.sec, line, err)
				}
			}
			// The waiting job as the console's page lists it: the next to run first.
			page, err := src.Queue("default").Tasks(ctx, rdb, SectionWaiting, 0, 1, now)
			if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID == "" {
				t.Fatalf("default's first page: %+v %v", page, err)
			}
			waiting := page.Tasks[0].Member
			if _, err := src.Queue("default").Act(ctx, rdb, SectionWaiting, page.Tasks[0], ActionDelete, now); err != nil {
				t.Fatal(err)
			}
			if _, err := src.SharedQueue().Act(ctx, rdb, SectionDead, never, ActionDelete, now); err != nil {
				t.Fatal(err)
			}

			v := readSidekiq(t, rdb, ns)
			mail, work := v.Queues["mail"], v.Queues["work"]
			if jids := jidsOf(mail); len(jids) != 4 || !slices.Contains(jids, laterJob.JID) || !slices.Contains(jids, deadJob.JID) {
				t.Fatalf("mail %v, want the two waiting, the scheduled and the dead job", jids)
			}
			if len(work) != 1 || work[0].JID != retryJob.JID || *work[0].RetryCount != *retryJob.RetryCount-1 {
				t.Fatalf("work %+v, want the retried job with retry_count %d", work, *retryJob.RetryCount-1)
			}
			for _, j := range append(mail[2:], work...) {
				if j.EnqueuedAt == nil || time.Since(time.Unix(int64(*j.EnqueuedAt), 0)) > time.Minute {
					t.Errorf("%s enqueued_at %v, want now", j.JID, j.EnqueuedAt)
				}
			}
			if slices.Contains(jidsOf(v.Schedule), laterJob.JID) || len(v.Retry) != 0 || len(v.Dead) != 0 || len(v.Queues["default"]) != 2 {
				t.Fatalf("sets after: schedule %v retry %v dead %v default %v", jidsOf(v.Schedule), jidsOf(v.Retry), jidsOf(v.Dead), jidsOf(v.Queues["default"]))
			}

			before := dumpKeys(t, rdb)
			for _, c := range []struct {
				sec  TaskSection
				task Task
				a    TaskAction
			}{{SectionLater, later, ActionRunNow}, {SectionRetry, retry, ActionRunNow}, {SectionDead, never, ActionDelete},
				{SectionWaiting, Task{Member: waiting}, ActionDelete}} {
				_, err := src.Queue("default").Act(ctx, rdb, c.sec, c.task, c.a, now)
				wantGone(t, rdb, before, string(c.a)+" "+string(c.sec)+" again", err)
			}
			for _, c := range []struct {
				sec TaskSection
				a   TaskAction
			}{{SectionInFlight, ActionReturn}, {SectionInFlight, ActionDelete}, {SectionWaiting, ActionRunNow}} {
				if _, err := src.Queue("mail").Act(ctx, rdb, c.sec, Task{Member: mail[0].JID}, c.a, now); !errors.Is(err, ErrNotSupported) {
					t.Errorf("%s on %s: %v, want ErrNotSupported", c.a, c.sec, err)
				}
			}
			wantUnchanged(t, rdb, before, "refused actions")
		})
	}
}

// TestSidekiqRunNowRefusesWhatPushWouldRefuse: an entry Sidekiq's push would fail on (not JSON,
// no args, an "at" that schedules it again) is left in its set, not removed and lost.
func TestSidekiqRunNowRefusesWhatPushWouldRefuse(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	for _, m := range []string{`not json`, `{"class":"X","jid":"a"}`, `{"class":"X","args":[],"at":1700000000}`, `{"class":"X","args":[],"queue":""}`, `{"class":null,"args":[]}`} {
		rdb.ZAdd(ctx, "schedule", redis.Z{Score: 1, Member: m})
	}
	before := dumpKeys(t, rdb)
	for _, m := range rdb.ZRange(ctx, "schedule", 0, -1).Val() {
		if _, err := (Source{Layout: Sidekiq}).SharedQueue().Act(ctx, rdb, SectionLater, Task{Member: m}, ActionRunNow, time.Now()); err == nil {
			t.Errorf("%s was pushed", m)
		}
	}
	wantUnchanged(t, rdb, before, "refused pushes")
}

// TestSidekiqPushedKeepsTheJob: the job pushed keeps every value exactly as stored (big numbers,
// unicode escapes, <, > and &), fills what push fills, and counts a retry's retry_count back.
func TestSidekiqPushedKeepsTheJob(t *testing.T) {
	now := time.UnixMicro(1700000000123456)
	entry := `{"class":"A<b>&c","args":[12345678901234567890,1.0e2,"\u00e9"],"retry_count":0,"jid":"j1","created_at":1.5}`
	job, queue, err := sidekiqPushed(entry, true, now)
	want := `{"args":[12345678901234567890,1.0e2,"\u00e9"],"class":"A<b>&c","created_at":1.5,"enqueued_at":1700000000.123456,"jid":"j1","queue":"default","retry":true,"retry_count":-1}`
	if err != nil || job != want || queue != "default" {
		t.Fatalf("pushed %s (%q, %v)\nwant   %s", job, queue, err, want)
	}
	job, _, _ = sidekiqPushed(`{"class":"A","args":[],"queue":"q","retry":false,"jid":null}`, false, now)
	var j map[string]any
	if json.Unmarshal([]byte(job), &j) != nil || j["retry"] != false || len(j["jid"].(string)) != 24 || j["created_at"] != 1700000000.123456 {
		t.Fatalf("pushed %s, want retry kept false, a new 24-hex jid, created_at now", job)
	}
}
