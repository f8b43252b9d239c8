package discover_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
)

func ptr[T any](v T) *T { return &v }

// found is a Result with one group of each way it is printed: an entry, a second entry, a
// low-confidence entry, and a group with no entry whose examples and evidence carry hostile text.
func found() discover.Result {
	return discover.Result{Keys: 1234, Bytes: ptr(int64(90_000)), Sampled: 40, Groups: []discover.Group{
		{Pattern: "stats:<app>:<window>", Kind: discover.KindCounter, Keys: 1000, Bytes: ptr(int64(70_000)), Sampled: 20,
			Examples: []string{"stats:app1:2026112214", "stats:app2:2026112214"}, Confidence: discover.High,
			Evidence: []string{"values: integers in 20 of 20 sampled", "retention: keys expire 2d after their window ends"},
			Entry: &discover.Entry{Table: "counter", Name: "stats", Pattern: "stats:<app>:<window>",
				HourFormat: "yyyyMMddHH", HourRetention: "2d"}},
		{Pattern: "other:<id>", Kind: discover.KindOther, Keys: 200, Sampled: 8,
			Examples: []string{`other:\x1b[2J`}, Confidence: discover.High,
			Evidence: []string{"<id>: odd\n[[counter]]\nname = \"injected\"\x1b[31m\u202e", "hash keys hold no structure"}},
		{Pattern: "rl:<user>", Kind: discover.KindSlidingLimiter, Keys: 30, Bytes: ptr(int64(4000)), Sampled: 8,
			Examples: []string{"rl:u1"}, Confidence: discover.Low, Evidence: []string{"scores: recent"},
			Entry: &discover.Entry{Table: "limiter", Name: "rl", Pattern: "rl:<user>", LimiterKind: "sliding", Window: "1m", Limit: 5}},
		{Pattern: "queue:emails", Kind: discover.KindListQueue, Keys: 1, Sampled: 1, Examples: []string{"queue:emails"},
			Confidence: discover.Medium, Evidence: []string{"lists of up to 25 elements"},
			Entry: &discover.Entry{Table: "list_queue", Name: "stats", Key: "queue:emails", Processing: ptr("")}},
	}}
}

func doc() *discover.Doc {
	return &discover.Doc{
		Target: "prod (10.0.0.1:6379), standalone", TakenAt: time.Date(2026, 11, 22, 14, 5, 0, 0, time.UTC),
		Elapsed: 1500 * time.Millisecond, KeysSeen: 5000, Complete: true, Timezone: "Asia/Shanghai",
		Redis:  discover.Connection{Addrs: []string{"10.0.0.1:6379"}, Name: "prod", Username: "ro", PasswordEnv: "PW", Notes: []string{"a note"}},
		Result: found().Avoiding(nil),
	}
}

// lines returns text's lines from..to (1-based, inclusive), each with its newline.
func lines(text string, from, to int) string {
	all := strings.SplitAfter(text, "\n")
	return strings.Join(all[from-1:to], "")
}

// TestRenderLoads: a whole file loads as a config as it is, with the entries, the [redis] table
// and the timezone; the low-confidence entry is there commented out, the group with no entry as
// comments, and hostile text stays inside its comment.
func TestRenderLoads(t *testing.T) {
	d := doc()
	text, spans := d.Render()
	cfg, err := config.Parse("found.toml", []byte(text), nil)
	if err != nil {
		t.Fatalf("does not load: %v\n%s", err, text)
	}
	if len(cfg.Counters) != 1 || len(cfg.Structures.ListQueues) != 1 || len(cfg.Structures.Limiters) != 0 ||
		cfg.TimezoneName != "UTC" || cfg.Redis.Name != "prod" || cfg.Redis.Username != "ro" || cfg.Redis.PasswordEnv != "PW" ||
		len(cfg.Redis.Addrs) != 1 || cfg.Redis.Addrs[0] != "10.0.0.1:6379" {
		t.Errorf("loaded %d counters, %+v, zone %s, redis %+v", len(cfg.Counters), cfg.Structures, cfg.TimezoneName, cfg.Redis)
	}
	for _, want := range []string{
		"# target:   prod (10.0.0.1:6379), standalone\n",
		"# swept:    2026-11-22 14:05:00 UTC (server time), in 1.5s\n",
		"# keys:     5,000 seen, 1,234 claimed by no entry (~87.9 KiB)\n",
		"# found:    4 groups: 2 entries, 1 commented out, 1 with no entry\n",
		"# a note\n[redis]\n",
		"# pattern:    stats:<app>:<window>\n# kind:       counter\n# keys:       1,000 (~68.4 KiB estimated; 20 read)\n" +
			"# examples:   stats:app1:2026112214\n#             stats:app2:2026112214\n" +
			"# evidence:   values: integers in 20 of 20 sampled\n#             retention: keys expire 2d after their window ends\n" +
			"# confidence: high\n[[counter]]\n",
		"# keys:       200 (memory unknown; 8 read)\n",
		`# evidence:   <id>: odd\n[[counter]]\nname = "injected"\x1b[31m\u{202e}` + "\n",
		"docs/discover.md",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "\ntimezone = ") > strings.Index(text, "\n[redis]\n") || strings.Contains(text, "INCOMPLETE") ||
		strings.ContainsAny(text, "\x1b\u202e") || strings.Count(text, "\n[[counter]]\n") != 1 {
		t.Errorf("timezone after [redis], an incomplete mark, a raw escape, or a key name out of its comment:\n%s", text)
	}
	// The entries in the order of the sections: the two entries, the low one, then the note.
	if len(spans) != 3 || spans[0].Group != 0 || spans[1].Group != 3 || spans[2].Group != 2 {
		t.Fatalf("spans %+v", spans)
	}
	g := d.Result.Groups
	if lines(text, spans[0].From, spans[0].To) != g[0].Entry.TOML() || lines(text, spans[1].From, spans[1].To) != g[3].Entry.TOML() {
		t.Errorf("the entries are not where their spans say, as Entry.TOML renders them:\n%s", text)
	}
	low := lines(text, spans[2].From, spans[2].To)
	for _, l := range strings.SplitAfter(g[2].Entry.TOML(), "\n") {
		if l != "" && !strings.Contains(low, "# "+l) {
			t.Errorf("the low-confidence entry's line %q is not commented out: %q", l, low)
		}
	}
	if !strings.Contains(lines(text, spans[2].From-2, spans[2].From-1), "Commented out: the evidence is too thin") {
		t.Errorf("no reason above the commented-out entry:\n%s", text)
	}
	if strings.Index(text, "# pattern:    other:<id>") < strings.Index(text, "---- keys hourglass has no entry for") {
		t.Errorf("the group with no entry is not at the end:\n%s", text)
	}
}

// TestRenderIncompleteAndRefused: an incomplete sweep says so in the header; an entry the config
// refuses is commented out with the reason, and the file still loads.
func TestRenderIncompleteAndRefused(t *testing.T) {
	d := doc()
	d.Complete = false
	d.Refused = map[int]string{0: "counter.pattern: can land in different cluster slots"}
	text, _ := d.Render()
	cfg, err := config.Parse("found.toml", []byte(text), nil)
	if err != nil || len(cfg.Counters) != 0 {
		t.Fatalf("loads %v with %d counters; want no counter:\n%s", err, len(cfg.Counters), text)
	}
	for _, want := range []string{"# INCOMPLETE: the sweep was stopped", "# found:    4 groups: 1 entries, 2 commented out, 1 with no entry",
		"# Commented out: hourglass refuses this entry as it stands (counter.pattern: can land in different cluster slots).\n",
		"# [[counter]]\n# name = \"stats\"\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
}

// TestRenderMerge: a section keeps the file's text as it is in front (a missing last newline
// added), adds no [redis] table or timezone of its own, and is marked at both ends.
func TestRenderMerge(t *testing.T) {
	before := "# mine\ntimezone = \"UTC\"   # my zone\n[[lock]]\nname = \"stats\"\npattern = \"lk:<id>\""
	d := doc()
	d.Merge, d.Before = "mine.toml", before
	d.Result = found().Avoiding(map[string]bool{"stats": true})
	text, spans := d.Render()
	if !strings.HasPrefix(text, before+"\n\n# ==== hourglass discover: the keys mine.toml does not claim ====\n") ||
		!strings.HasSuffix(text, "\n# ==== end of hourglass discover ====\n") {
		t.Fatalf("not the file then a marked section:\n%s", text)
	}
	section := text[len(before):]
	if strings.Contains(section, "[redis]") || strings.Contains(section, "\ntimezone") {
		t.Errorf("the section repeats the file's settings:\n%s", section)
	}
	cfg, err := config.Parse("merged.toml", []byte(text), nil)
	if err != nil || len(cfg.Counters) != 1 || cfg.Counters[0].Name() != "stats_2" || len(cfg.Structures.Locks) != 1 {
		t.Fatalf("loads %v; want the file's lock and the counter renamed stats_2:\n%s", err, text)
	}
	if len(spans) != 3 || !strings.Contains(lines(text, spans[1].From, spans[1].To), `name = "stats_3"`) {
		t.Errorf("the list queue is not renamed stats_3 where its span says: %+v\n%s", spans, text)
	}
}

// TestAvoiding renames entries around taken names and one another, leaving the Result it was
// given as it was.
func TestAvoiding(t *testing.T) {
	r := found()
	got := r.Avoiding(map[string]bool{"stats": true, "stats_2": true, "rl": true})
	names := []string{got.Groups[0].Entry.Name, got.Groups[2].Entry.Name, got.Groups[3].Entry.Name}
	if names[0] != "stats_3" || names[1] != "rl_2" || names[2] != "stats_4" || got.Groups[1].Entry != nil {
		t.Errorf("renamed to %v", names)
	}
	if r.Groups[0].Entry.Name != "stats" || r.Groups[3].Entry.Name != "stats" {
		t.Error("Avoiding changed the Result it was given")
	}
}

// TestRenderEmpty: nothing unclaimed is still a file that loads, and says there is nothing to add.
func TestRenderEmpty(t *testing.T) {
	d := doc()
	d.Result = discover.Result{Groups: []discover.Group{}}
	d.Redis = discover.Connection{Addrs: []string{"redis://app@h:6379/2"}}
	text, spans := d.Render()
	if _, err := config.Parse("empty.toml", []byte(text), nil); err != nil || len(spans) != 0 ||
		!strings.Contains(text, "No key is left unclaimed") || !strings.Contains(text, "# keys:     5,000 seen, 0 claimed by no entry\n") {
		t.Fatalf("%v:\n%s", err, text)
	}
}

// TestRenderTLS: the TLS files of the config the sweep ran with are in the [redis] table.
func TestRenderTLS(t *testing.T) {
	certs := redistest.MakeCerts(t)
	d := doc()
	d.Redis = discover.Connection{Addrs: []string{"rediss://127.0.0.1:6380"}, TLSCA: certs.CA, TLSCert: certs.ClientCert, TLSKey: certs.ClientKey}
	text, _ := d.Render()
	cfg, err := config.Parse("tls.toml", []byte(text), nil)
	if err != nil || cfg.Redis.TLS.CA != certs.CA || cfg.Redis.TLS.Cert != certs.ClientCert || cfg.Redis.TLS.Key != certs.ClientKey {
		t.Fatalf("%v: %+v\n%s", err, cfg.Redis.TLS, text)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain: <a>…":        "plain: <a>…",
		"a\nb\tc\rd":         `a\nb\tc\rd`,
		"\x1b[2J\x7f":        `\x1b[2J\x7f`,
		"bidi\u202eevil":     `bidi\u{202e}evil`,
		"sep\u2028\u2029":    `sep\u{2028}\u{2029}`,
		"bad\xffutf8":        `bad\xffutf8`,
		`already \x1b esc\\`: `already \x1b esc\\`,
	} {
		if got := discover.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRenderLoadableCommentsOutWhatIsRefused: an entry the loader refuses is printed commented
// out with the loader's reason, and the text returned loads; a refusal that names no entry's line
// is an error, not a text that does not load.
func TestRenderLoadableCommentsOutWhatIsRefused(t *testing.T) {
	d := doc()
	parse := config.Loads("found.toml", false)
	refuseStats := func(text string) (int, string, error) {
		if strings.Contains(text, "\nname = \"stats\"\n") {
			line := strings.Count(text[:strings.Index(text, "\nname = \"stats\"\n")+1], "\n") + 1
			return line, "counter.pattern: refused for the test", errors.New("refused")
		}
		return parse(text)
	}
	text, err := d.RenderLoadable(refuseStats)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse("found.toml", []byte(text), nil); err != nil {
		t.Fatalf("the text returned does not load: %v", err)
	}
	if !strings.Contains(text, "# name = \"stats\"") || !strings.Contains(text, "refused for the test") {
		t.Fatalf("the refused entry is not commented out with its reason:\n%s", text)
	}
	if _, err := doc().RenderLoadable(func(string) (int, string, error) { return 0, "", errors.New("broken") }); err == nil {
		t.Fatal("a refusal naming no entry's line gave a text")
	}
}
