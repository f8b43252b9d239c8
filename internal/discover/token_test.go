package discover

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/store"
)

// segs spells name's tokens as "class:text" after their separator, for comparing.
func segs(name string) string {
	var b strings.Builder
	for i, t := range tokenize(name, nil) {
		if i > 0 {
			b.WriteByte(t.sep)
		}
		fmt.Fprintf(&b, "%c=%s", classCode[t.cls], name[t.start:t.end])
	}
	return b.String()
}

func TestTokenizeSplitsOnEverySeparator(t *testing.T) {
	for name, want := range map[string]string{
		"a:b.c_d-e/f|g{h}i":      "w=a:w=b.w=c_w=d-w=e/w=f|w=g{w=h}w=i",
		"x,y#z@w=v":              "w=x,w=y#w=z@w=w=w=v",
		"{web:10001}:2023080117": "e={w=web:n=10001}e=:H=2023080117",
		"a::b":                   "w=a:e=:w=b",
		"":                       "e=",
		"trailing:":              "w=trailing:e=",
	} {
		if got := segs(name); got != want {
			t.Errorf("%q: got %s, want %s", name, got, want)
		}
	}
}

func TestTokenizeTakesCompoundsWhole(t *testing.T) {
	for name, want := range map[string]string{
		"session:3f2b8c1e-9d4a-4f6b-8e2a-1c3d5e7f9a0b:data": "w=session:u=3f2b8c1e-9d4a-4f6b-8e2a-1c3d5e7f9a0b:w=data",
		"flow:127.0.0.1:2023080117":                         "w=flow:i=127.0.0.1:H=2023080117",
		"report:2023-08-01":                                 "w=report:d=2023-08-01",
		"wau:2023-W31":                                      "w=wau:W=2023-W31",
		"wau:2023W31":                                       "w=wau:W=2023W31",
		"v:1.2.3":                                           "w=v:n=1.n=2.n=3",        // three numbers, not an address
		"ip:300.1.1.1":                                      "w=ip:n=300.n=1.n=1.n=1", // no octet over 255
		"d:2023-13-01":                                      "w=d:n=2023-n=13-n=01",   // no thirteenth month
	} {
		if got := segs(name); got != want {
			t.Errorf("%q: got %s, want %s", name, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for s, want := range map[string]class{
		"2023080117":       clHour,
		"20230801":         clDay,
		"202308011705":     clMinute,
		"1700000000":       clUnixS,
		"1700000000123":    clUnixMS,
		"2023083117":       clHour,
		"2023083217":       clUnixS, // no 32nd day: a time in seconds, 2034
		"20230229":         clNum,   // 2023 had no 29 February
		"12345":            clNum,
		"0042":             clNum,
		"app123":           clID,
		"u9x3":             clID,
		"9f86d081884c7d65": clHex,
		"deadbe12":         clHex,
		"deadbeef":         clWord, // no digit: a word, however hex it looks
		"login":            clWord,
		"a+b~c":            clWord,
		"héllo":            clBlob,
		"a b":              clBlob,
		"<x>":              clBlob,
		`"q"`:              clBlob,
		"":                 clEmpty,
	} {
		if got := classify(s); got != want {
			t.Errorf("classify(%q) = %c, want %c", s, classCode[got], classCode[want])
		}
	}
}

// The rest of a name past maxTokens segments or maxNameLen bytes is one segment.
func TestTokenizeBounds(t *testing.T) {
	long := strings.Repeat("a:", 40)
	toks := tokenize(long, nil)
	if len(toks) != maxTokens || toks[len(toks)-1].cls != clBlob || toks[len(toks)-1].end != len(long) {
		t.Errorf("%d segments, last %+v: want %d, the last a blob to the end", len(toks), toks[len(toks)-1], maxTokens)
	}
	wide := strings.Repeat("x", 300) + ":y:z"
	toks = tokenize(wide, nil)
	if n := len(toks); n != 2 || toks[0].end != 300 || toks[1].cls != clBlob || toks[1].end != len(wide) {
		t.Errorf("a 300-byte segment: %+v, want it, then the rest as one blob", toks)
	}
	wide = strings.Repeat("ab:", 100)
	toks = tokenize(wide, nil)
	if last := toks[len(toks)-1]; last.cls != clBlob || last.start > maxNameLen+3 || last.end != len(wide) {
		t.Errorf("past %d bytes: last segment %+v", maxNameLen, last)
	}
}

// Unix times tell hour windows from day windows by the values seen: every value a whole hour,
// a whole day, or neither.
func TestAlignOf(t *testing.T) {
	day := time.Date(2023, 8, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		times []time.Time
		ms    bool
		want  int64
	}{
		{[]time.Time{day, day.AddDate(0, 0, 1)}, false, 86400},
		{[]time.Time{day, day.Add(time.Hour)}, false, 3600},
		{[]time.Time{day.Add(time.Hour), day.Add(2 * time.Hour)}, true, 3600},
		{[]time.Time{day.Add(time.Minute), day.Add(time.Hour)}, false, 60},
		{[]time.Time{day.Add(time.Second)}, false, 1},
		{[]time.Time{day.Add(time.Millisecond)}, true, 1},
	}
	for _, c := range cases {
		align := int64(0)
		for _, tm := range c.times {
			text, cls := fmt.Sprint(tm.Unix()), clUnixS
			if c.ms {
				text, cls = fmt.Sprint(tm.UnixMilli()), clUnixMS
			}
			align = alignOf(text, cls, align)
		}
		if align != c.want {
			t.Errorf("%v (ms %v): align %d, want %d", c.times, c.ms, align, c.want)
		}
	}
}

func TestDimNames(t *testing.T) {
	for v, want := range map[string]string{"app12": "app", "Device456": "device", "u9x3": "", "12ab": "", "app": ""} {
		if got := letterPrefix(v); got != want {
			t.Errorf("letterPrefix(%q) = %q, want %q", v, got, want)
		}
	}
	g := New(Options{})
	for i := range 40 {
		g.Add([]string{fmt.Sprintf("last_seen:%d", i), fmt.Sprintf("flow:app%d:dev%d:10.0.0.%d:2023080117", i%3, i, i)})
	}
	patterns := map[string]bool{}
	for _, gr := range g.Result().Groups {
		patterns[gr.Pattern] = true
	}
	for _, want := range []string{"last_seen:<last_seen>", "flow:<app>:<dev>:<ip>:<window>"} {
		if !patterns[want] {
			t.Errorf("no group %s in %v", want, patterns)
		}
	}
}

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
		"myapp:queues", "queue:mail", "ns:stat:processed:2026-01-02", "{acme}:bull:work:meta", "acme:work:wait",
	} {
		f.Add(s)
	}
	now := time.Date(2023, 8, 1, 17, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 4096 { // past a key's first segments its length changes nothing but the time
			return
		}
		checkCover(t, name, tokenize(name, nil))
		g := New(Options{Location: time.UTC, MaxShapes: 8})
		names := []string{name, name + ":1", "x:" + name, strings.ReplaceAll(name, "1", "2"), name + ":2023080117", name + "_lock"}
		for _, n := range g.Add(names) {
			g.AddSample(sampleOf(n, len(name), now))
		}
		checkPatterns(t, g.Result())
	})
}
