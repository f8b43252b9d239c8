package discover

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
