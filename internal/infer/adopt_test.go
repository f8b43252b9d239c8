package infer

import (
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/scanner"
)

func bare(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("config.toml", []byte("timezone = \"UTC\"\n[[counter]]\nname = \"pv\"\npattern = \"other:<x>:<window>\"\nhour_format = \"yyyyMMddHH\"\nhour_retention = \"48h\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAdoptTakesTrustedEntriesOnce: high and medium entries are adopted, renamed off the names the
// config in use gives; low ones, groups with no entry and entries with a guessed setting are not; an entry the config refuses is
// remembered with why and not tried again; a second turn adopts nothing it adopted before.
func TestAdoptTakesTrustedEntriesOnce(t *testing.T) {
	a := New(bare(t), false)
	r := discover.Result{Groups: []discover.Group{
		{Pattern: "pv:<site>:<window>", Confidence: discover.High, Keys: 10,
			Entry: &discover.Entry{Table: "counter", Name: "pv", Pattern: "pv:<site>:<window>", HourFormat: "yyyyMMddHH", HourRetention: "48h"}},
		{Pattern: "delay:orders", Confidence: discover.Medium, Keys: 1,
			Entry: &discover.Entry{Table: "delay_queue", Name: "orders", Key: "delay:orders", ScoreUnit: "s"}},
		{Pattern: "rl:<user>", Confidence: discover.Low, Keys: 5,
			Entry: &discover.Entry{Table: "limiter", Name: "rl", Pattern: "rl:<user>", LimiterKind: "fixed", Window: "1m", Limit: 3}},
		{Pattern: "bad:<x>:<window>", Confidence: discover.High, Keys: 3,
			Entry: &discover.Entry{Table: "counter", Name: "bad", Pattern: "bad:<x>:<window>", HourFormat: "yyyyMMddHH", HourRetention: "-1h"}},
		{Pattern: "cache:<page>", Confidence: discover.High, Keys: 7},
		{Pattern: "rlflx:<key>", Confidence: discover.Medium, Keys: 4,
			Entry: &discover.Entry{Table: "limiter", Name: "rate-limiter-flexible", Layout: "rate-limiter-flexible", Window: "1m", Limit: 8, Guessed: []string{"window", "limit"}}},
	}}
	got := a.Adopt(r, false)
	var names []string
	for _, e := range got.Entries {
		names = append(names, e.Table+":"+e.Name)
	}
	if strings.Join(names, " ") != "counter:pv_2 delay_queue:orders" || len(got.Families) != 1 || len(got.Structures.DelayQueues) != 1 {
		t.Fatalf("adopted %v (%d families, %+v)", names, len(got.Families), got.Structures)
	}
	if why := a.Refused()["bad:<x>:<window>"]; !strings.Contains(why, "retention") {
		t.Fatalf("the refused entry's reason: %q", why)
	}
	if again := a.Adopt(r, false); len(again.Entries) != 0 {
		t.Fatalf("a second turn adopted %+v", again.Entries)
	}
	if n := len(a.Config().Counters); n != 2 || len(a.Groups()) != 2 {
		t.Fatalf("the config in use has %d counters, %d groups adopted", n, len(a.Groups()))
	}
	lone := discover.Result{Groups: []discover.Group{{Pattern: "lock:job171", Confidence: discover.Medium, Keys: 1,
		Entry: &discover.Entry{Table: "lock", Name: "lock_job171", Pattern: "lock:job171"}}}}
	if got := a.Adopt(lone, false); len(got.Entries) != 0 {
		t.Fatalf("a lone key's entry adopted before the sweep was complete: %+v", got.Entries)
	}
	if got := a.Adopt(lone, true); len(got.Entries) != 1 {
		t.Fatalf("a lone key's entry not adopted at the sweep's end: %+v", got.Entries)
	}
	if _, err := a.Add(discover.Entry{Table: "delay_queue", Name: "orders", Key: "delay:other", ScoreUnit: "s"}); err == nil {
		t.Fatal("an added entry took an adopted entry's name")
	}
}

// TestAdoptWaitsForALibrarysMarks: keys named as BullMQ keeps a queue's lists, under a prefix
// whose meta hash the sweep has not met yet, are not adopted as list queues while it goes on; at
// its end, with the meta hash seen, they are BullMQ's entry's, and without it, a list queue.
func TestAdoptWaitsForALibrarysMarks(t *testing.T) {
	add := func(g *discover.Groups, typ, field string, names ...string) {
		for _, n := range g.Add(names) {
			g.AddSample(discover.Sample{Name: n, Type: typ, TTL: -1, Bytes: 90, Len: 3, Field: field, Now: time.Now()})
		}
	}
	tables := func(got scanner.Adoption) string {
		var out []string
		for _, e := range got.Entries {
			out = append(out, e.Table+" "+e.Prefix)
		}
		return strings.Join(out, ",")
	}
	g := discover.New(discover.Options{Location: time.UTC})
	add(g, "list", "", "acme:work:wait", "acme:mail:wait", "acme:push:wait")
	a := New(bare(t), false)
	if got := a.Adopt(g.Result(), false); len(got.Entries) != 0 {
		t.Fatalf("adopted %q while the sweep goes on, before any mark of the prefix", tables(got))
	}
	add(g, "hash", "bullmq:5.81.5", "acme:work:meta")
	if got := tables(a.Adopt(g.Result(), true)); got != "job_queue acme" {
		t.Fatalf("adopted %q at the sweep's end; want BullMQ's entry under acme alone", got)
	}
	g = discover.New(discover.Options{Location: time.UTC})
	add(g, "list", "", "acme:work:wait", "acme:mail:wait", "acme:push:wait")
	if got := tables(New(bare(t), false).Adopt(g.Result(), true)); got != "list_queue " {
		t.Fatalf("adopted %q at the end of a sweep with no mark of BullMQ's; want the list queue", got)
	}
}

// TestAdoptLeavesBullMQsSortedSetsToItsEntry: the sorted sets BullMQ keeps for its queues under
// the prefix "acme", met before a meta hash of acme's (as store/testdata/node/bullmq.mjs wrote
// them: names, sizes and scores copied from a run, now 1795762007200 ms), group by name as
// acme:later:<name> and acme:work:<name>, a delay queue's by later's delayed set, with each
// queue's marker set beside its states'. They are not adopted while the sweep goes on; at its
// end, with a meta hash seen, they are BullMQ's entry's.
func TestAdoptLeavesBullMQsSortedSetsToItsEntry(t *testing.T) {
	now := time.UnixMilli(1795762007200)
	zsets := []discover.Sample{
		{Name: "acme:later:delayed", Len: 5, MinScore: 7355441181048832, MaxScore: 7355470672261120},
		{Name: "acme:later:marker", Len: 2, MinScore: 0, MaxScore: 1795762007092},
		{Name: "acme:work:completed", Len: 2, MinScore: 1795762007081, MaxScore: 1795762007083},
		{Name: "acme:work:failed", Len: 1, MinScore: 1795762007086, MaxScore: 1795762007086},
		{Name: "acme:work:marker", Len: 1, MinScore: 0, MaxScore: 0},
	}
	g := discover.New(discover.Options{Location: time.UTC})
	add := func(samples ...discover.Sample) {
		byName := map[string]discover.Sample{}
		var names []string
		for _, s := range samples {
			byName[s.Name] = s
			names = append(names, s.Name)
		}
		for _, n := range g.Add(names) {
			s := byName[n]
			s.TTL, s.Bytes, s.Now = -1, 120, now
			g.AddSample(s)
		}
	}
	for i := range zsets {
		zsets[i].Type = "zset"
	}
	add(zsets...)
	a := New(bare(t), false)
	r := g.Result()
	if got := a.Adopt(r, false); len(got.Entries) != 0 {
		for _, gr := range r.Groups {
			t.Logf("group %q %s %s %v", gr.Pattern, gr.Kind, gr.Confidence, gr.Examples)
		}
		t.Fatalf("adopted %+v while the sweep goes on, before a meta hash of acme's", got.Entries)
	}
	add(discover.Sample{Name: "acme:later:meta", Type: "hash", Len: 3, Field: "bullmq:5.81.5"})
	var got []string
	for _, e := range a.Adopt(g.Result(), true).Entries {
		got = append(got, e.Table+" "+e.Layout+" "+e.Prefix)
	}
	if strings.Join(got, ",") != "job_queue bullmq acme" {
		t.Fatalf("adopted %q at the sweep's end; want BullMQ's entry under acme alone", got)
	}
}
