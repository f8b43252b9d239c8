package discover

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// typed adds keys to g page by page, as a sweep does, each sampled as the given type ("string"
// holds an integer; "hash:<v>" is a hash whose HashField holds v; "set:<m>" and "list:<m>" a set
// or list whose member read is m).
func typed(g *Groups, pages ...map[string]string) {
	now := time.Now()
	for _, page := range pages {
		var names []string
		for n := range page {
			names = append(names, n)
		}
		for _, n := range g.Add(names) {
			t, field, _ := strings.Cut(page[n], ":")
			s := Sample{Name: n, Type: t, TTL: -1, Bytes: 80, Now: now, Len: 2, Field: field}
			if t == "set" || t == "list" {
				s.Field, s.Member = "", field
			}
			if t == "string" {
				s.Value, s.Len = "17", 2
			}
			g.AddSample(s)
		}
	}
}

// jobEntries are the job_queue groups of a Result: "layout prefix" -> the group.
func jobEntries(r Result) map[string]Group {
	out := map[string]Group{}
	for _, gr := range r.Groups {
		if gr.Kind == KindJobQueue && gr.Entry != nil {
			out[gr.Entry.Layout+" "+gr.Entry.Prefix] = gr
		}
	}
	return out
}

// An app's keys named as Sidekiq and BullMQ name some of theirs are not taken for the libraries'
// by their names alone: a queues set with no queue list beside it, queue lists with no queues
// set, a meta hash, id and events stream whose hash BullMQ did not write, a queues set of
// another type than Sidekiq's.
func TestLookalikesAreNotLibraries(t *testing.T) {
	for name, keys := range map[string]map[string]string{
		"a bare queues set":              {"queues": "set", "user:1": "hash"},
		"a namespaced queues set":        {"foo:queues": "set", "foo:config": "hash"},
		"queue lists, no queues set":     {"queue:emails": "list", "queue:sms": "list", "queue:push": "list"},
		"a record's meta, id, events":    {"app:cfg:meta": "hash:7", "app:cfg:id": "string", "app:cfg:events": "stream"},
		"an id before the meta":          {"tenant:5:jobs:work:meta": "hash:bullmq:5.1.0", "tenant:5:jobs:work:id": "string"},
		"queues of another type":         {"foo:queues": "string", "foo:queue:a": "list"},
		"a binding set of plain members": {"fake:_kombu.binding.mail": "set:alice", "fake:mail": "list"},
		"a binding of another type":      {"cache:_kombu.binding.celery": "string", "cache:celery": "list"},
		"Sidekiq's counters, no queues":  {"billing:stat:processed:2026-01-02": "string", "billing:stat:processed:2026-01-03": "string", "billing:stat:failed:2026-01-02": "string"},
	} {
		g := New(Options{Location: time.UTC})
		typed(g, keys)
		r := g.Result()
		for _, gr := range r.Groups {
			if gr.Entry != nil && gr.Confidence != Low && (gr.Kind == KindJobQueue || gr.Kind == KindCounter) {
				t.Errorf("%s: %s proposed as %s (%s): %v", name, gr.Pattern, gr.Entry.Table, gr.Confidence, gr.Evidence)
			}
		}
	}
}

// Sidekiq under a namespace is found by its queues set and one more of its keys, whatever order
// the sweep meets them in; the keys met before are folded into its group, its daily counters
// with them, and each namespace is an entry of its own.
func TestSidekiqUnderItsNamespace(t *testing.T) {
	g := New(Options{Location: time.UTC})
	typed(g,
		map[string]string{"myapp:queue:default": "list", "myapp:stat:processed:2026-01-02": "string", "myapp:stat:processed": "string"},
		map[string]string{"myapp:stat:failed:2026-01-02": "string", "cache:a": "string"},
		map[string]string{"myapp:queues": "set", "myapp:queue:mail": "list", "other:sk:queues": "set", "other:sk:schedule": "zset"},
	)
	jobs := jobEntries(g.Result())
	my, other := jobs["sidekiq myapp"], jobs["sidekiq other:sk"]
	if my.Confidence != High || my.Keys != 6 || my.Entry.Name != "sidekiq_myapp" || other.Confidence != High || other.Keys != 2 || len(jobs) != 2 {
		t.Fatalf("job entries %+v; want sidekiq under myapp (6 keys, its counters among them) and under other:sk (2)", jobs)
	}
	if ev := strings.Join(my.Evidence, "\n"); !strings.Contains(ev, `namespace "myapp"`) || !strings.Contains(ev, "queues set") {
		t.Errorf("evidence %q", my.Evidence)
	}
}

// BullMQ under prefixes of its users' choosing is found by a queue's meta hash that BullMQ
// wrote, one entry a prefix (one holding ':', one a hash tag), the keys met before folded in.
func TestBullMQUnderItsPrefixes(t *testing.T) {
	g := New(Options{Location: time.UTC})
	typed(g,
		map[string]string{"acme:work:wait": "list", "acme:work:1": "hash", "acme:work:2": "hash", "beta:bull:mail:wait": "list"},
		map[string]string{"acme:work:meta": "hash:bullmq:5.81.5", "acme:work:events": "stream", "acme:work:id": "string"},
		map[string]string{"beta:bull:mail:meta": "hash:bullmq:5.81.5", "beta:bull:mail:3": "hash", "{jobs}:x:meta": "hash:bullmq:5.0.0"},
	)
	jobs := jobEntries(g.Result())
	acme, eu, br := jobs["bullmq acme"], jobs["bullmq beta:bull"], jobs["bullmq {jobs}"]
	if acme.Keys != 6 || eu.Keys != 3 || br.Keys != 1 || len(jobs) != 3 {
		t.Fatalf("job entries %v; want acme (6 keys), beta:bull (3) and {jobs} (1)", jobs)
	}
	for _, gr := range []Group{acme, eu, br} {
		if gr.Confidence != High || !strings.Contains(strings.Join(gr.Evidence, "\n"), "bullmq:5.") {
			t.Errorf("%s: %s, evidence %q", gr.Pattern, gr.Confidence, gr.Evidence)
		}
	}
	if eu.Entry.Name != "bullmq_beta_bull" || br.Entry.Name != "bullmq_jobs" || !strings.Contains(br.Entry.TOML(), `prefix = "{jobs}"`) {
		t.Errorf("entries %+v, %+v", eu.Entry, br.Entry)
	}
}

// sidekiqJob and resqueJob are jobs as Sidekiq's Client.push and Resque.push write them.
const (
	sidekiqJob = `{"retry":true,"queue":"a","class":"Mailer","args":[1],"jid":"5b8d2c0e4f1a9e3b7c6d0a12","created_at":1764201600.1,"enqueued_at":1764201600.1}`
	resqueJob  = `{"class":"Archive","args":[42,"zip"]}`
)

// Resque keeps the queues set, queue:<name> lists and stat:processed / stat:failed totals as
// Sidekiq names them; its jobs have no jid. Under its default namespace or none, in whatever
// order, it is not taken for Sidekiq; Sidekiq with only its queues set and a queue's job (no
// worker ran, nothing retried) is found by the job's jid.
func TestResqueIsNotSidekiq(t *testing.T) {
	for name, pages := range map[string][]map[string]string{
		"resque, stats first": {{"resque:stat:processed": "string", "resque:stat:failed": "string", "resque:queues": "set"},
			{"resque:queue:archive": "list:" + resqueJob, "resque:queue:mail": "list:" + resqueJob}},
		"resque, lists first": {{"resque:queue:archive": "list:" + resqueJob}, {"resque:queues": "set", "resque:stat:processed": "string"}},
		"bare resque":         {{"queues": "set", "queue:archive": "list:" + resqueJob, "stat:processed": "string"}},
	} {
		g := New(Options{Location: time.UTC})
		typed(g, pages...)
		r := g.Result()
		for _, gr := range r.Groups {
			if gr.Entry != nil && gr.Entry.Layout == "sidekiq" && gr.Confidence != Low {
				t.Errorf("%s: %s proposed as Sidekiq (%s): %v", name, gr.Pattern, gr.Confidence, gr.Evidence)
			}
		}
	}
	g := New(Options{Location: time.UTC})
	typed(g, map[string]string{"shop:queue:mail": "list:" + sidekiqJob}, map[string]string{"shop:queues": "set"})
	if sk := jobEntries(g.Result())["sidekiq shop"]; sk.Confidence != High || sk.Keys != 2 || !strings.Contains(strings.Join(sk.Evidence, " "), "jid") {
		t.Errorf("sidekiq with a queue's job alone: %+v", sk)
	}
}

// Prefixes followed are bounded: past maxCandidates a library's, an app's many lookalike
// prefixes give way to one with a strong mark (marks of it met before are not kept).
func TestCandidatesBounded(t *testing.T) {
	g := New(Options{Location: time.UTC})
	page := map[string]string{}
	for i := range 3 * maxCandidates {
		page[fmt.Sprintf("p%c%c:retry", 'a'+i%26, 'a'+i/26)] = "zset"
	}
	typed(g, page, map[string]string{"late:queues": "set"}, map[string]string{"late:queue:a": "list:" + sidekiqJob})
	if g.learnt.per["sidekiq"] > maxCandidates {
		t.Errorf("%d candidates followed", g.learnt.per["sidekiq"])
	}
	if jobs := jobEntries(g.Result()); jobs["sidekiq late"].Confidence != High {
		t.Errorf("job entries %v; want sidekiq under late", jobs)
	}
}

// Celery under kombu's global_keyprefix is found by a binding set whose member kombu wrote,
// whatever order the sweep meets its keys in: its queue lists met before (named after the
// exchanges bound, as Celery declares its queues) and its unacked hash are folded into its
// group, one entry a prefix.
func TestCeleryUnderItsGlobalKeyprefix(t *testing.T) {
	const sep = "\x06\x16"
	g := New(Options{Location: time.UTC})
	typed(g,
		map[string]string{"app1:mail": "list", "app1:unacked": "hash", "app1:unacked_index": "zset", "app1:mail" + sep + "3": "list"},
		map[string]string{"app1:_kombu.binding.mail": "set:mail" + sep + sep + "mail", "app1:_kombu.binding.celery": "set:celery" + sep + sep + "celery", "app1:celery": "list"},
		map[string]string{"b_celery": "list", "b__kombu.binding.celery": "set:celery" + sep + sep + "celery"},
	)
	jobs := jobEntries(g.Result())
	app1, b := jobs["celery app1:"], jobs["celery b_"]
	if app1.Confidence != High || app1.Keys != 7 || b.Confidence != High || b.Keys != 2 || len(jobs) != 2 {
		t.Fatalf("job entries %+v; want celery under app1: (7 keys) and b_ (2)", jobs)
	}
	if app1.Pattern != "app1:… (celery)" || app1.Entry.Name != "celery_app1" || !strings.Contains(app1.Entry.TOML(), `prefix = "app1:"`) {
		t.Errorf("entry %+v, pattern %q", app1.Entry, app1.Pattern)
	}
}
