package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// sidekiqStats is what store/jobs/testdata/sidekiq/fixture.rb prints of Sidekiq::Stats.
type sidekiqStats struct {
	Stats struct {
		Enqueued  int64 `json:"enqueued"`
		Scheduled int64 `json:"scheduled_size"`
		Retry     int64 `json:"retry_size"`
		Dead      int64 `json:"dead_size"`
		Workers   int64 `json:"workers_size"`
	} `json:"stats"`
}

// bullmqCounts is what store/testdata/node/bullmq.mjs prints: each queue's getJobCounts().
type bullmqCounts struct {
	Queues map[string]struct {
		Counts map[string]int64 `json:"counts"`
	} `json:"queues"`
}

// Real Sidekiq and BullMQ keys on a server whose maxmemory-policy is allkeys-lru: the health
// line names the policy, each library's jobs at risk (as many as the library's own API counts
// waiting, active, scheduled, retrying and dead) and each library's own requirement. Set to noeviction, nothing is at risk.
func TestEvictionRiskNamesSidekiqAndBullMQ(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t, "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru")
	var sk sidekiqStats
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &sk, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	var bq bullmqCounts
	redistest.RunFixture(t, node, redistest.NodeDir(), &bq, "bullmq.mjs", "redis://"+srv.Addr)

	specs := []scanner.JobQueueSpec{{Name: "sk", Source: jobs.Source{Layout: jobs.Sidekiq}}, {Name: "bq", Source: jobs.Source{Layout: jobs.BullMQ, Prefix: "bull"}}}
	w := New(srv.Client(t), nil, scanner.Options{Count: 500, Location: shanghai, Structures: scanner.Structures{JobQueues: specs}})
	st := pollUntilSwept(t, w)
	r := st.Server.Eviction
	if r == nil {
		t.Fatalf("no eviction risk under allkeys-lru: %+v", st.Server)
	}
	if r.Policy != "allkeys-lru" || r.Scope != "any key" || r.NoLimit || len(r.Nodes) != 1 || r.Nodes[0] != srv.Addr {
		t.Errorf("the risk: %+v", r)
	}
	s := sk.Stats
	wantBull := int64(0)
	for _, q := range bq.Queues {
		for state, n := range q.Counts {
			// Done jobs are not counted, nor a flow's parents waiting for their children, which
			// the queues view shows only among BullMQ's own states.
			if state != "completed" && state != "waiting-children" {
				wantBull += n
			}
		}
	}
	want := map[string]int64{"sk": s.Enqueued + s.Workers + s.Scheduled + s.Retry + s.Dead, "bq": wantBull}
	got := map[string]int64{}
	for _, k := range r.AtRisk {
		if k.Kind == "job_queue" && k.Unit == "jobs" {
			got[k.Name] = k.Count
		}
	}
	if len(r.AtRisk) != 2 || got["sk"] != want["sk"] || got["bq"] != want["bq"] {
		t.Errorf("at risk: %+v, want the libraries' own counts %v", r.AtRisk, want)
	}
	var who []string
	for _, q := range r.Requirements {
		who = append(who, q.Who)
		if !strings.Contains(q.Says, "noeviction") || q.Source == "" {
			t.Errorf("%s's requirement: %+v", q.Who, q)
		}
	}
	if strings.Join(who, ",") != "Sidekiq,BullMQ" {
		t.Errorf("requirements of %v, want Sidekiq's and BullMQ's", who)
	}

	if err := srv.Client(t).ConfigSet(t.Context(), "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	w.server.every = 0
	st, err := w.Poll(t.Context(), 50*time.Millisecond, "")
	if err != nil || st.Server.Eviction != nil || st.Server.Nodes[0].Policy != "noeviction" {
		t.Errorf("under noeviction: %v, risk %+v, policy %q", err, st.Server.Eviction, st.Server.Nodes[0].Policy)
	}
}

// pollUntilSwept polls w until a sweep has completed, and returns that Poll's status.
func pollUntilSwept(t *testing.T, w *Watcher) snapshot.Status {
	t.Helper()
	var st snapshot.Status
	redistest.Eventually(t, "a sweep completes", 30*time.Second, func() bool {
		var err error
		st, err = w.Poll(t.Context(), 200*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		return st.Snapshot != nil
	})
	return st
}
