package discover_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// celeryQueues is what store/jobs/testdata/celery/fixture.py prints of kombu's own counts.
type celeryQueues struct {
	Queues map[string]struct {
		MessageCount int64 `json:"message_count"`
	} `json:"queues"`
}

// jobGroups are a Result's job_queue groups with an entry: "layout prefix" -> the group.
func jobGroups(r discover.Result) map[string]discover.Group {
	out := map[string]discover.Group{}
	for _, gr := range r.Groups {
		if gr.Kind == discover.KindJobQueue && gr.Entry != nil {
			out[gr.Entry.Layout+" "+gr.Entry.Prefix] = gr
		}
	}
	return out
}

// TestLibrariesUnderTheirUsersPrefixes: Celery (5.2, kombu's redis transport) sending under two
// global_keyprefix values, BullMQ under a prefix holding ':' (app:bull) and Sidekiq under a
// namespace holding one (a:b), each written by the library itself, are found by a sweep with no
// config, one entry a prefix, each with every key the library wrote under it; binding-named keys
// kombu did not write (a string, a set of plain members) are not taken for Celery. The Celery
// entry found reads kombu's own counts of its queues.
func TestLibrariesUnderTheirUsersPrefixes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	url := "redis://" + srv.Addr + "/0"
	py := redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis")
	celery := filepath.Join(jobsTestdata, "celery")
	var app1 celeryQueues
	redistest.RunFixture(t, py, celery, &app1, "fixture.py", url, "app1:")
	redistest.RunFixture(t, py, celery, nil, "fixture.py", url, "tenant.b_")
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "bullmq.mjs", url, "app:bull")
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	redistest.RunFixture(t, ruby, filepath.Join(jobsTestdata, "sidekiq"), nil, "fixture.rb", url, "a:b")
	written := scanAll(t, rdb)
	ctx := t.Context()
	// Lookalikes: named as kombu names a binding, but not kombu's.
	if err := rdb.Set(ctx, "cache:_kombu.binding.celery", "<html>", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(ctx, "fake:_kombu.binding.mail", "alice", "bob").Err(); err != nil {
		t.Fatal(err)
	}
	snap, err := scanner.Take(ctx, rdb, nil, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range snap.Unclaimed.Groups {
		t.Logf("group %-40q %-12s %4d keys %-6s %v", g.Pattern, g.Kind, g.Keys, g.Confidence, g.Evidence)
	}
	found := jobGroups(snap.Unclaimed)
	want := map[string]string{ // entry -> the keys it should hold, by prefix
		"celery app1:": "app1:", "celery tenant.b_": "tenant.b_", "bullmq app:bull": "app:bull:", "sidekiq a:b": "a:b:",
	}
	for entry, prefix := range want {
		gr, ok := found[entry]
		if !ok || gr.Confidence != discover.High {
			t.Errorf("%s: %+v; want it found, high", entry, gr)
			continue
		}
		n := int64(0)
		for _, k := range written {
			if strings.HasPrefix(k, prefix) {
				n++
			}
		}
		if gr.Keys != n {
			t.Errorf("%s: %d keys in its group, the library wrote %d under %q", entry, gr.Keys, n, prefix)
		}
	}
	if ev := strings.Join(found["celery app1:"].Evidence, "\n"); !strings.Contains(ev, `global_keyprefix "app1:"`) || !strings.Contains(ev, "as kombu writes one") {
		t.Errorf("celery app1: evidence %q", ev)
	}
	if len(found) != len(want) {
		t.Errorf("job entries %v; want only %v", keysOf(found), keysOf(want))
	}

	// The entry found reads the queues kombu counts.
	en := found["celery app1:"].Entry
	spec := scanner.JobQueueSpec{Name: en.Name, Source: jobs.Source{Layout: jobs.Celery, Prefix: en.Prefix}}
	snap, err = scanner.Take(ctx, rdb, nil, scanner.Options{Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{spec}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, q := range snap.JobQueues[0].Queues {
		if q.Waiting != nil {
			got[q.RawQueue] = *q.Waiting
		}
	}
	if len(got) != len(app1.Queues) {
		t.Errorf("queues read %v; kombu's %+v", got, app1.Queues)
	}
	for name, q := range app1.Queues {
		if got[name] != q.MessageCount {
			t.Errorf("queue %s: %d waiting, kombu's message_count %d", name, got[name], q.MessageCount)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestResqueKeyspaceIsNotSidekiq: Resque keeps the queues set and queue:<name> lists as Sidekiq
// names them, and stat:processed and stat:failed too; what tells them apart is the job: Sidekiq's
// has a jid. Resque's keyspace (its gem is not installed here, so it is written as Resque's own
// push writes it: Resque.push SADDs the queue to resque:queues and RPUSHes
// {"class":…,"args":[…]} to resque:queue:<name>, under redis-namespace "resque"; Resque::Stat
// INCRBYs resque:stat:processed and resque:stat:failed) is not taken for Sidekiq, while Sidekiq
// with its workers down and nothing failed (only what Sidekiq::Client.push wrote: its queues set
// and queue lists) is found by its found' jid.
func TestResqueKeyspaceIsNotSidekiq(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	redistest.RunFixture(t, ruby, "testdata", nil, "sidekiq_push.rb", "redis://"+srv.Addr+"/0", "shop")
	shop := scanAll(t, rdb)
	pipe := rdb.Pipeline()
	for i, q := range []string{"archive", "archive", "thumbs"} {
		pipe.SAdd(ctx, "resque:queues", q)
		pipe.RPush(ctx, "resque:queue:"+q, fmt.Sprintf(`{"class":"Archive","args":[%d,"zip"]}`, i))
	}
	pipe.IncrBy(ctx, "resque:stat:processed", 17)
	pipe.IncrBy(ctx, "resque:stat:failed", 2)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := scanner.Take(ctx, rdb, nil, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range snap.Unclaimed.Groups {
		t.Logf("group %-30q %-12s %3d keys %-6s %v", g.Pattern, g.Kind, g.Keys, g.Confidence, g.Evidence)
	}
	found := jobGroups(snap.Unclaimed)
	if sk := found["sidekiq shop"]; sk.Confidence != discover.High || sk.Keys != int64(len(shop)) || !strings.Contains(strings.Join(sk.Evidence, " "), "jid") {
		t.Errorf("sidekiq under shop: %+v; want it found by its found' jid, with the %d keys it wrote", sk, len(shop))
	}
	for _, g := range snap.Unclaimed.Groups {
		if g.Entry != nil && g.Entry.Layout == "sidekiq" && g.Entry.Prefix != "shop" && g.Confidence != discover.Low {
			t.Errorf("Resque's keys proposed as Sidekiq's: %s %v", g.Pattern, g.Evidence)
		}
	}
}
