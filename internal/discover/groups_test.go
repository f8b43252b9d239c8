package discover

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// Result leaves the Groups as they are: a sweep calls it again and again.
func TestResultLeavesGroupsAsTheyAre(t *testing.T) {
	g := New(Options{Location: time.UTC})
	now := time.Now()
	names := []string{"queues", "queue:default", "queue:mail", "schedule", "_kombu.binding.mail", "mail", "delay:orders", "{delay:orders}:inflight"}
	for _, n := range g.Add(names) {
		g.AddSample(sampleOf(n, 2, now))
	}
	first, second := g.Result(), g.Result()
	if !reflect.DeepEqual(first, second) {
		t.Errorf("a second Result differs:\n%+v\n%+v", first, second)
	}
	if len(first.Groups) != 3 {
		t.Errorf("groups %+v: want sidekiq (its queue lists folded in), celery (its mail list) and delay:orders with its in-flight set", first.Groups)
	}
}

// What Groups hold is bounded by shapes, never by keys: a skeleton's words past maxDistinct
// merge into one shape, and past MaxShapes new shapes go to their skeleton's catch-all.
func TestGroupsBoundedByShapes(t *testing.T) {
	g := New(Options{Location: time.UTC, MaxShapes: 50})
	var words []string
	for i := range 20_000 {
		w := strings.Repeat(string(rune('a'+i%26)), 1+i/26%7) + strings.Repeat(string(rune('a'+i/182%26)), 1+i/4732%3)
		words = append(words, fmt.Sprintf("cache:%s:%d", w, i), fmt.Sprintf("k%d:%s", i%300, w))
	}
	g.Add(words)
	if g.shapes > 50 {
		t.Errorf("%d shapes, over MaxShapes 50", g.shapes)
	}
	for _, sh := range g.allShapes() {
		if len(sh.examples) > maxExamples || sh.sampled > maxSamples {
			t.Errorf("shape holds %d examples and %d samples", len(sh.examples), sh.sampled)
		}
		for _, st := range sh.slots {
			if len(st.distinct) > maxDistinct {
				t.Errorf("a segment holds %d values", len(st.distinct))
			}
		}
	}
	var keys int64
	for _, gr := range g.Result().Groups {
		keys += gr.Keys
	}
	if keys != int64(len(words)) || g.Keys() != int64(len(words)) {
		t.Errorf("groups count %d keys, Groups %d, want %d", keys, g.Keys(), len(words))
	}
}

// Names a library shares with everyone (Sidekiq's queue:<name> lists, Celery's queue lists named
// after the queue) are the library's only once its registry has been seen (and, for Sidekiq, a
// queue's job with Sidekiq's jid, which Resque's jobs in the same names lack).
func TestAmbiguousLibraryNames(t *testing.T) {
	now := time.Now()
	kinds := func(names ...string) map[string]Kind {
		g := New(Options{Location: time.UTC})
		for _, n := range g.Add(names) {
			s := sampleOf(n, 3, now) // lists
			if n == "queues" || strings.HasPrefix(n, "_kombu") {
				s.Type = "set"
			}
			if strings.HasPrefix(n, "queue:") {
				s.Member = sidekiqJob
			}
			g.AddSample(s)
		}
		out := map[string]Kind{}
		for _, gr := range g.Result().Groups {
			out[gr.Pattern] = gr.Kind
		}
		return out
	}
	lists := []string{"queue:emails", "queue:sms", "queue:push", "celery", "mail"}
	got := kinds(lists...)
	if got["queue:<name>"] != KindListQueue || got["celery"] != KindListQueue || got["mail"] != KindListQueue || len(got) != 3 {
		t.Errorf("without registries: %v, want three list queue groups", got)
	}
	got = kinds(append(lists, "queues", "_kombu.binding.celery", "_kombu.binding.mail")...)
	if got["… (sidekiq)"] != KindJobQueue || got["… (celery)"] != KindJobQueue || len(got) != 2 {
		t.Errorf("with Sidekiq's and Celery's registries: %v, want the lists in their libraries", got)
	}
}

// Ids that read as dates (user 20250101 among users 20250102 …) are ids: their keys go with the
// others', never a counter of day windows; a real window's keys have no such siblings.
func TestIdsThatReadAsDates(t *testing.T) {
	g := New(Options{Location: time.UTC})
	now := time.Now()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("score:%d", 20250101+i*9973), fmt.Sprintf("otp:1380013%04d", i), fmt.Sprintf("user:%d", 3000+i))
	}
	for d := range 5 {
		names = append(names, "pv:"+now.AddDate(0, 0, -d).Format("20060102"), fmt.Sprint("pv:", 7+d))
	}
	for _, n := range g.Add(names) {
		g.AddSample(Sample{Name: n, Type: "string", Value: "5", Len: 1, TTL: -1, Now: now})
	}
	kinds := map[string]Kind{}
	for _, gr := range g.Result().Groups {
		kinds[gr.Pattern] = gr.Kind
		if gr.Pattern == "score:<score>" && gr.Keys != 40 {
			t.Errorf("score:<score> holds %d keys, want all 40", gr.Keys)
		}
	}
	if _, ok := kinds["score:<window>"]; ok || kinds["score:<score>"] != KindOther || kinds["pv:<window>"] != KindCounter {
		t.Errorf("groups %v: want score:<score> other, no score:<window>, and pv:<window> a counter", kinds)
	}
}

// Which unit a group of mixed units is given, and what its evidence says, does not depend on the
// order the sweep meets the keys in, nor on map order: with as many keys in seconds as in
// milliseconds, seconds keep the pattern every time.
func TestUnitsDeterministic(t *testing.T) {
	now := time.Now()
	names := []string{"delay:orders", "delay:mail", "delay:sms", "delay:push", "sched:1", "sched:2", "sched:3", "sched:4"}
	sample := func(n string) Sample {
		s := Sample{Name: n, Type: "zset", TTL: -1, Bytes: 90, Now: now, Len: 2}
		at := []time.Time{now.Add(-time.Minute), now.Add(time.Hour)}
		if strings.HasSuffix(n, "mail") || strings.HasSuffix(n, "push") || strings.HasSuffix(n, "2") || strings.HasSuffix(n, "4") {
			s.MinScore, s.MaxScore = float64(at[0].UnixMilli()), float64(at[1].UnixMilli())
		} else {
			s.MinScore, s.MaxScore = float64(at[0].Unix()), float64(at[1].Unix())
		}
		return s
	}
	var first []string
	for run := range 20 {
		order := append([]string(nil), names...)
		rand.New(rand.NewPCG(uint64(run), 7)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		g := New(Options{Location: time.UTC})
		for _, n := range g.Add(order) {
			g.AddSample(sample(n))
		}
		var got []string
		for _, gr := range g.Result().Groups {
			got = append(got, fmt.Sprintf("%s %s %q %q", gr.Pattern, gr.Entry.ScoreUnit, gr.Entry.Exclude, gr.Evidence))
		}
		sort.Strings(got)
		if run == 0 {
			first = got
			t.Logf("%s", strings.Join(got, "\n"))
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("order %q gives\n%s\nwant\n%s", order, strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
	want := []string{`delay:<name> s ["delay:mail" "delay:push"]`, "delay:mail ms", "delay:push ms", `sched:<sched> auto`}
	for i, w := range want {
		if i >= len(first) || !strings.HasPrefix(first[i], w) {
			t.Errorf("groups\n%s\nwant them to start %q", strings.Join(first, "\n"), want)
			break
		}
	}
}
