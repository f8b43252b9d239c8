package discover

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"hourglass/store"
)

// checkCover fails unless toks cover name in order: each segment starts one separator after the
// last ended, that separator is the one recorded, and the last ends at the end of name.
func checkCover(t *testing.T, name string, toks []token) {
	t.Helper()
	if len(toks) == 0 || len(toks) > maxTokens {
		t.Fatalf("%q: %d segments", name, len(toks))
	}
	at := 0
	for i, tk := range toks {
		if i > 0 {
			if tk.start != at+1 || !isSep(name[at]) || tk.sep != name[at] {
				t.Fatalf("%q: segment %d %+v does not follow the separator at %d", name, i, tk, at)
			}
		} else if tk.start != 0 || tk.sep != 0 {
			t.Fatalf("%q: first segment %+v", name, tk)
		}
		if tk.end < tk.start || tk.end > len(name) || tk.cls >= numClasses {
			t.Fatalf("%q: segment %d %+v", name, i, tk)
		}
		at = tk.end
	}
	if at != len(name) {
		t.Fatalf("%q: segments end at %d of %d", name, at, len(name))
	}
}

// sampleOf is a sample of one type for name, with values kind picks among.
func sampleOf(name string, kind int, now time.Time) Sample {
	s := Sample{Name: name, Type: "string", TTL: time.Duration(kind) * 17 * time.Minute, Bytes: 64, Now: now, Value: "7", Len: 1}
	switch kind % 6 {
	case 1:
		s.Value, s.Len = "1690900000000-9f86d081884c7d65", 30
	case 2:
		s.Type, s.Len, s.MinScore, s.MaxScore = "zset", 3, float64(now.Add(-time.Minute).UnixMilli()), float64(now.Add(time.Hour).UnixMilli())
	case 3:
		s.Type, s.Len = "list", 4
	case 4:
		s.Value, s.Len = "HYLL\x01", 90
	case 5:
		s.Value, s.Len, s.TTL = `{"a":1}`, 7, -1
	}
	return s
}

// checkPatterns fails unless every group's pattern and entry parse as the config would read them.
func checkPatterns(t *testing.T, r Result) {
	t.Helper()
	for _, gr := range r.Groups {
		if gr.Kind == KindJobQueue || gr.Kind == KindLimiterLibrary || gr.Pattern == "" && gr.Entry == nil {
			continue // a library's group is named by the library; the key "" has no pattern
		}
		parse := store.ParseKeyPattern
		if strings.Contains(gr.Pattern, "<window>") {
			parse = store.ParsePattern
		}
		if _, err := parse(gr.Pattern); err != nil {
			t.Fatalf("group pattern %q (%s): %v", gr.Pattern, gr.Kind, err)
		}
		en := gr.Entry
		if en == nil || en.Pattern == "" {
			continue
		}
		parse = store.ParseKeyPattern
		if en.HourFormat != "" || en.DayFormat != "" {
			parse = store.ParsePattern
		}
		if _, err := parse(en.Pattern); err != nil {
			t.Fatalf("entry %s pattern %q: %v", en.Table, en.Pattern, err)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"flow:count:app123:device456:127.0.0.1:2023080117", "{web:10001}:20230801", "hist:42:login",
		"session:3f2b8c1e-9d4a-4f6b-8e2a-1c3d5e7f9a0b", "wau:2023-W31", "LIMITER/fixed/api/user/7/3/2/hour",
		"{delay:orders}:inflight", "a\x00b:\xff", "::", "<window>:{}", "x" + strings.Repeat(":1", 30),
		"ratelimit:10.0.0.1:202308011705", "bull:work:17:lock", "_kombu.binding.celery", "rate:api:7",
	} {
		f.Add(s)
	}
	now := time.Date(2023, 8, 1, 17, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name string) {
		checkCover(t, name, tokenize(name, nil))
		g := New(Options{Location: time.UTC, MaxShapes: 8})
		names := []string{name, name + ":1", "x:" + name, strings.ReplaceAll(name, "1", "2"), name + ":2023080117", name + "_lock"}
		for _, n := range g.Add(names) {
			g.AddSample(sampleOf(n, len(name), now))
		}
		checkPatterns(t, g.Result())
	})
}

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
// after the queue) are the library's only once its registry has been seen.
func TestAmbiguousLibraryNames(t *testing.T) {
	now := time.Now()
	kinds := func(names ...string) map[string]Kind {
		g := New(Options{Location: time.UTC})
		for _, n := range g.Add(names) {
			s := sampleOf(n, 3, now) // lists
			if n == "queues" || strings.HasPrefix(n, "_kombu") {
				s.Type = "set"
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
