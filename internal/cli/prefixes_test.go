package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// prefixedKeyspace is what the libraries wrote under their prefixes, as their own APIs counted it.
type prefixedKeyspace struct {
	sidekiq map[string]int64                       // Sidekiq::Queue#size under the namespace "myapp"
	bullmq  map[string]map[string]map[string]int64 // prefix -> queue -> getJobCounts()
	rq      map[string]map[string]int64            // queue -> RQ's counts
	asynq   map[string]*asynq.QueueInfo            // queue -> Inspector.GetQueueInfo
	celery  map[string]int64                       // queue -> kombu's message_count under global_keyprefix "app1:"
}

// writePrefixed lets each library write its keys as deployed: Sidekiq under redis-namespace
// "myapp", BullMQ under two prefixes of its prefix option ("acme", and "{jobs}" as in a cluster),
// RQ and asynq under the prefixes they fix, Celery under kombu's global_keyprefix "app1:". Sidekiq's and asynq's processes leave their daily
// counters. Beside them, an app's keys that look like theirs by name alone, and caches.
func writePrefixed(t *testing.T, srv *redistest.Server) prefixedKeyspace {
	t.Helper()
	ruby := redistest.Interpreter(t, "ruby", "sidekiq", "redis/namespace")
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	py := redistest.Interpreter(t, "python3", "rq")
	url := "redis://" + srv.Addr + "/0"
	var out prefixedKeyspace
	var sk struct {
		Sizes map[string]int64 `json:"sizes"`
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &sk, "fixture.rb", url, "myapp")
	out.sidekiq = sk.Sizes
	out.bullmq = map[string]map[string]map[string]int64{}
	for _, prefix := range []string{"acme", "{jobs}"} {
		var bq struct {
			Queues map[string]struct {
				Counts map[string]int64 `json:"counts"`
			} `json:"queues"`
		}
		redistest.RunFixture(t, node, redistest.NodeDir(), &bq, "bullmq.mjs", url, prefix)
		out.bullmq[prefix] = map[string]map[string]int64{}
		for q, v := range bq.Queues {
			out.bullmq[prefix][q] = v.Counts
		}
	}
	var rq struct {
		Queues map[string]map[string]any `json:"queues"`
	}
	redistest.RunFixture(t, py, "../../store/jobs/testdata/rq", &rq, "fixture.py", url)
	out.rq = map[string]map[string]int64{}
	for q, c := range rq.Queues {
		out.rq[q] = map[string]int64{}
		for _, state := range []string{"count", "scheduled", "deferred", "canceled"} {
			out.rq[q][state] = int64(c[state].(float64))
		}
	}
	out.asynq = asynqQueues(t, srv.Addr)
	var cel struct {
		Queues map[string]struct {
			MessageCount int64 `json:"message_count"`
		} `json:"queues"`
	}
	redistest.RunFixture(t, redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis"), "../../store/jobs/testdata/celery", &cel, "fixture.py", url, "app1:")
	out.celery = map[string]int64{}
	for q, c := range cel.Queues {
		out.celery[q] = c.MessageCount
	}
	lookalikes(t, srv.Client(t))
	return out
}

// asynqQueues has asynq's client and server write two queues, the server completing tasks (its
// daily processed counters), and returns what asynq's Inspector counts of them.
func asynqQueues(t *testing.T, addr string) map[string]*asynq.QueueInfo {
	t.Helper()
	opt := asynq.RedisClientOpt{Addr: addr}
	client := asynq.NewClient(opt)
	defer client.Close()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	enqueue := func(opts ...asynq.Option) {
		if _, err := client.Enqueue(asynq.NewTask("send", []byte(`{"n":1}`)), opts...); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(asynq.Queue("later"))
	enqueue(asynq.Queue("later"), asynq.ProcessIn(2*time.Hour))
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 1, Queues: map[string]int{"work": 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		enqueue(asynq.Queue("work"), asynq.Retention(time.Hour))
	}
	redistest.Eventually(t, "asynq's server to complete its three tasks (its own count)", 20*time.Second, func() bool {
		q, err := insp.GetQueueInfo("work")
		return err == nil && q.Completed == 3
	})
	srv.Shutdown()
	out := map[string]*asynq.QueueInfo{}
	for _, q := range []string{"later", "work"} {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			t.Fatal(err)
		}
		out[q] = info
	}
	return out
}

// lookalikes writes an app's keys named as the libraries name some of theirs: a bare queues set
// and another under "foo", with no queue list or other key of Sidekiq's beside them, and a
// record's meta hash, id and events stream ("app:cfg:…") that BullMQ's Queue did not write.
func lookalikes(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := t.Context()
	p := rdb.Pipeline()
	p.SAdd(ctx, "queues", "default", "mail")
	p.SAdd(ctx, "foo:queues", "a", "b")
	p.HSet(ctx, "app:cfg:meta", "version", "7", "owner", "ops")
	p.Set(ctx, "app:cfg:id", 12, 0)
	p.XAdd(ctx, &redis.XAddArgs{Stream: "app:cfg:events", Values: []any{"event", "created"}})
	for i := range noiseKeys { // enough that the sweep adopts entries on its way, not only at its end
		p.Set(ctx, fmt.Sprintf("cache:page:%d", i), "<p>cached</p>", time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// noiseKeys is how many cache strings lookalikes writes beside the lookalikes themselves.
const noiseKeys = 20_000

// libEntry is a job_queue entry's library and prefix.
func libEntry(e discover.Entry) string { return e.Layout + " " + e.Prefix }

// TestNoConfigFindsLibrariesUnderTheirPrefixes: with the libraries' keys under the prefixes their
// users chose, discover proposes one [[job_queue]] a library and prefix, with its evidence, and
// none for the lookalikes; snapshot with no config adopts them and counts each queue as the
// library's own API does; the libraries' daily counters are theirs, neither unclaimed nor a
// counter family.
func TestNoConfigFindsLibrariesUnderTheirPrefixes(t *testing.T) {
	srv := redistest.Start(t)
	want := writePrefixed(t, srv)
	for _, daily := range []string{"myapp:stat:processed:*", "myapp:stat:failed:*", "asynq:{work}:processed:*"} {
		it := srv.Client(t).Scan(t.Context(), 0, daily, 1000).Iterator()
		if !it.Next(t.Context()) {
			t.Fatalf("no %s key written (%v): the libraries' daily counters are what this test is about", daily, it.Err())
		}
	}
	wantEntries := []string{"asynq ", "bullmq acme", "bullmq {jobs}", "celery app1:", "rq ", "sidekiq myapp"}

	code, out, errOut := hg(t, "discover", "--json", "--addr", srv.Addr)
	if code != exitOK {
		t.Fatalf("discover: exit %d: %s", code, errOut)
	}
	var found discoverJSON
	if err := json.Unmarshal([]byte(out), &found); err != nil {
		t.Fatalf("discover JSON: %v\n%s", err, out)
	}
	var proposed []string
	for _, g := range found.Unclaimed.Groups {
		t.Logf("group %q %s %s %v", g.Pattern, g.Kind, g.Confidence, g.Evidence)
		if g.Entry == nil || g.Confidence == discover.Low {
			continue
		}
		if g.Entry.Table == "job_queue" {
			proposed = append(proposed, libEntry(*g.Entry))
			if g.Confidence != discover.High || len(g.Evidence) < 2 {
				t.Errorf("%s: confidence %s, evidence %q", libEntry(*g.Entry), g.Confidence, g.Evidence)
			}
			if g.Entry.Prefix != "" && !strings.Contains(strings.Join(g.Evidence, "\n"), fmt.Sprintf("%q", g.Entry.Prefix)) {
				t.Errorf("%s: the evidence does not name the prefix: %q", libEntry(*g.Entry), g.Evidence)
			}
		}
		if g.Entry.Table == "counter" {
			t.Errorf("a counter family proposed for %s (%v)", g.Pattern, g.Examples)
		}
	}
	slices.Sort(proposed)
	if fmt.Sprint(proposed) != fmt.Sprint(wantEntries) {
		t.Errorf("job_queue entries proposed %q, want %q", proposed, wantEntries)
	}
	for _, line := range []string{"layout = \"sidekiq\"\nprefix = \"myapp\"\n", "layout = \"bullmq\"\nprefix = \"{jobs}\"\n"} {
		if !strings.Contains(found.Config, line) {
			t.Errorf("the proposed config lacks %q:\n%s", line, found.Config)
		}
	}

	code, out, errOut = hgInferred(t, "snapshot", "--json", "--addr", srv.Addr)
	if code != exitOK {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	var adopted []string
	for _, e := range snap.Inferred.Entries {
		if e.Table == "job_queue" {
			adopted = append(adopted, libEntry(e))
		}
		if e.Table != "job_queue" {
			t.Errorf("%s %s (%s%s) inferred: the libraries' keys are their entries'", e.Table, e.Name, e.Pattern, e.Key)
		}
	}
	slices.Sort(adopted)
	if fmt.Sprint(adopted) != fmt.Sprint(wantEntries) || snap.Inferred.Pending != 0 || len(snap.Counters) != 0 {
		t.Fatalf("adopted %q (%d pending), %d counter families; want %q counted, no family", adopted, snap.Inferred.Pending, len(snap.Counters), wantEntries)
	}
	checkPrefixedCounts(t, snap, want)
	for _, g := range snap.Unclaimed.Groups {
		for _, ex := range g.Examples {
			if strings.Contains(ex, "stat:") || strings.Contains(ex, "processed") || strings.Contains(ex, "myapp:") ||
				strings.HasPrefix(ex, "acme:") || strings.HasPrefix(ex, "{jobs}:") || strings.HasPrefix(ex, "rq:") || strings.HasPrefix(ex, "asynq:") || strings.HasPrefix(ex, "app1:") {
				t.Errorf("%s left unclaimed (group %s, %s)", ex, g.Pattern, g.Kind)
			}
		}
	}
	if keys := srv.Client(t).DBSize(t.Context()).Val(); snap.Unclaimed.Keys != 5+noiseKeys {
		t.Errorf("%d of %d keys unclaimed, want the 5 lookalikes and the caches: %+v", snap.Unclaimed.Keys, keys, snap.Unclaimed.Groups)
	}

	// The proposal, loaded as a config, claims the same: the libraries' keys, their daily
	// counters among them, are their entries'.
	configured := snapshotJSON(t, writeConfig(t, "discovered.toml", found.Config))
	if configured.Inferred != nil || len(configured.JobQueues) != len(wantEntries) || configured.Unclaimed.Keys != 5+noiseKeys {
		t.Errorf("with the proposal as config: %d job queue entries, %d keys unclaimed; want %d, the 5 lookalikes: %+v",
			len(configured.JobQueues), configured.Unclaimed.Keys, len(wantEntries), configured.Unclaimed.Groups)
	}
	checkPrefixedCounts(t, configured, want)
}

// checkPrefixedCounts holds each adopted library's queues to what the library's own API counted.
func checkPrefixedCounts(t *testing.T, snap snapshot.Snapshot, want prefixedKeyspace) {
	t.Helper()
	byEntry := map[string]snapshot.JobQueues{}
	for _, jq := range snap.JobQueues {
		byEntry[jq.Layout+" "+jq.Prefix] = jq
	}
	states := func(entry string) map[string]map[string]int64 {
		out := map[string]map[string]int64{}
		for _, q := range byEntry[entry].Queues {
			out[q.Queue] = q.States
		}
		return out
	}
	got := map[string]int64{}
	for q, st := range states("sidekiq myapp") {
		got[q] = st["size"]
	}
	if fmt.Sprint(got) != fmt.Sprint(want.sidekiq) {
		t.Errorf("sidekiq under myapp: sizes %v, Sidekiq::Queue#size %v", got, want.sidekiq)
	}
	for prefix, queues := range want.bullmq {
		gotQ := states("bullmq " + prefix)
		if len(gotQ) != len(queues) {
			t.Errorf("bullmq under %s: queues %v, BullMQ's %v", prefix, gotQ, queues)
		}
		for q, counts := range queues {
			if fmt.Sprint(gotQ[q]) != fmt.Sprint(counts) {
				t.Errorf("bullmq %s queue %s: %v, getJobCounts %v", prefix, q, gotQ[q], counts)
			}
		}
	}
	gotC := map[string]int64{}
	for _, q := range byEntry["celery app1:"].Queues {
		gotC[q.Queue] = q.States["message_count"]
	}
	if fmt.Sprint(gotC) != fmt.Sprint(want.celery) {
		t.Errorf("celery under app1:: message counts %v, kombu's %v", gotC, want.celery)
	}
	rq := states("rq rq")
	if len(rq) == 0 {
		rq = states("rq ")
	}
	for q, counts := range want.rq {
		st := rq[q]
		if st["queued"] != counts["count"] || st["scheduled"] != counts["scheduled"] || st["deferred"] != counts["deferred"] || st["canceled"] != counts["canceled"] {
			t.Errorf("rq queue %s: %v, RQ counts %v", q, st, counts)
		}
	}
	as := states("asynq asynq")
	if len(as) == 0 {
		as = states("asynq ")
	}
	for q, info := range want.asynq {
		st := as[q]
		if st["pending"] != int64(info.Pending) || st["scheduled"] != int64(info.Scheduled) || st["completed"] != int64(info.Completed) ||
			st["active"] != int64(info.Active) || st["retry"] != int64(info.Retry) || st["archived"] != int64(info.Archived) {
			t.Errorf("asynq queue %s: %v, GetQueueInfo %+v", q, st, info)
		}
	}
}
