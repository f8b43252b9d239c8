package metrics

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// unclaimedConfig claims only flow's keys: every other key of these tests is unclaimed.
const unclaimedConfig = `
timezone = "UTC"

[[counter]]
name = "flow"
pattern = "flow:<app>:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"
`

// groupWords name the test's groups of unclaimed keys, each by its first segment.
var groupWords = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
	"india", "juliet", "kilo", "lima", "yankee", "zulu"}

// writeGroup writes n string keys word:1 ... word:n, none of which an entry claims.
func writeGroup(t *testing.T, rdb *redis.Client, word string, n int) {
	t.Helper()
	p := rdb.Pipeline()
	for i := 1; i <= n; i++ {
		p.Set(t.Context(), fmt.Sprintf("%s:%d", word, i), "some text", 0)
	}
	if _, err := p.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// unclaimedWatcher returns a Watcher of srv as user (the default user when ""), by unclaimedConfig.
func unclaimedWatcher(t *testing.T, srv *redistest.Server, user string) *watch.Watcher {
	t.Helper()
	cfg, err := config.Parse("unclaimed.toml", []byte(unclaimedConfig), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	if user != "" {
		rdb = redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
		t.Cleanup(func() { rdb.Close() })
	}
	return watch.New(rdb, cfg.Counters, cfg.SweepOptions(true))
}

// groupSeries maps each hourglass_unclaimed_group_keys series to its value, by the first segment
// of its pattern, checking that its kind is the one the snapshot gives the group.
func groupSeries(t *testing.T, samples []sample, snap *snapshot.Snapshot) map[string]float64 {
	t.Helper()
	kinds := map[string]string{}
	for _, g := range snap.Unclaimed.Groups {
		kinds[g.Pattern] = string(g.Kind)
	}
	got := map[string]float64{}
	for _, s := range find(samples, "hourglass_unclaimed_group_keys") {
		word, _, _ := strings.Cut(s.labels["pattern"], ":")
		if k, ok := kinds[s.labels["pattern"]]; ok && k != s.labels["kind"] {
			t.Errorf("group %s: kind %q, the snapshot says %q", s.labels["pattern"], s.labels["kind"], k)
		}
		got[word] = s.value
	}
	return got
}

// TestUnclaimedSeries sweeps a real server holding 12 groups of unclaimed keys (13 keys down to
// 2): the keys and memory are the snapshot's, and only the 10 largest groups have a series. Then
// the largest group is deleted and two larger ones written: the deleted group is exported at 0 for
// one sweep, the group pushed out of the 10 largest with its keys (it is not empty), and both
// are gone the sweep after.
func TestUnclaimedSeries(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for i, w := range groupWords[:12] {
		writeGroup(t, rdb, w, 13-i)
	}
	rdb.Set(t.Context(), "flow:web:2026112312", 1, 0) // claimed: not counted
	w := unclaimedWatcher(t, srv, "")
	col := newCollector(nil)
	scrape := func() ([]sample, *snapshot.Snapshot) {
		st := sweep(t, w)
		col.set(st, nil)
		return parse(t, scrapeHandler(t, col)), st.Snapshot
	}

	samples, snap := scrape()
	if keys := find(samples, "hourglass_unclaimed_keys"); len(keys) != 1 || keys[0].value != 13*14/2-1 {
		t.Errorf("hourglass_unclaimed_keys = %v, want %d", keys, 13*14/2-1)
	}
	b := find(samples, "hourglass_unclaimed_bytes")
	if snap.Unclaimed.Bytes == nil || *snap.Unclaimed.Bytes <= 0 || len(b) != 1 || b[0].value != float64(*snap.Unclaimed.Bytes) {
		t.Errorf("hourglass_unclaimed_bytes = %v, the snapshot's estimate %v (%s)", b, snap.Unclaimed.Bytes, snap.Unclaimed.BytesNote)
	}
	want := map[string]float64{}
	for i, w := range groupWords[:10] {
		want[w] = float64(13 - i)
	}
	if got := groupSeries(t, samples, snap); !maps.Equal(got, want) {
		t.Errorf("group series %v, want the 10 largest %v (groups: %+v)", got, want, snap.Unclaimed.Groups)
	}

	if err := rdb.Del(t.Context(), keysOfGroup("alpha", 13)...).Err(); err != nil {
		t.Fatal(err)
	}
	writeGroup(t, rdb, "yankee", 20)
	writeGroup(t, rdb, "zulu", 21)
	samples, snap = scrape()
	want = map[string]float64{"zulu": 21, "yankee": 20, "alpha": 0, "juliet": 4}
	for i, w := range groupWords[1:9] {
		want[w] = float64(12 - i)
	}
	if got := groupSeries(t, samples, snap); !maps.Equal(got, want) {
		t.Errorf("after the delete: group series %v, want %v", got, want)
	}

	samples, snap = scrape()
	delete(want, "alpha")
	delete(want, "juliet")
	if got := groupSeries(t, samples, snap); !maps.Equal(got, want) {
		t.Errorf("the sweep after: group series %v, want %v", got, want)
	}
}

func keysOfGroup(word string, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("%s:%d", word, i))
	}
	return out
}

// TestUnclaimedBytesUnknown sweeps as a user the server refuses MEMORY USAGE: the keys are still
// counted, and the memory series is absent, not 0, even right after a sweep that knew it.
func TestUnclaimedBytesUnknown(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	writeGroup(t, rdb, "alpha", 5)
	if err := rdb.Do(t.Context(), "ACL", "SETUSER", "nomem", "on", ">pw", "~*", "+@all", "-memory").Err(); err != nil {
		t.Fatal(err)
	}
	col := newCollector(nil)
	col.set(sweep(t, unclaimedWatcher(t, srv, "")), nil)
	if b := find(parse(t, scrapeHandler(t, col)), "hourglass_unclaimed_bytes"); len(b) != 1 || b[0].value <= 0 {
		t.Fatalf("as the default user: hourglass_unclaimed_bytes = %v, want the estimate", b)
	}
	st := sweep(t, unclaimedWatcher(t, srv, "nomem"))
	if st.Snapshot.Unclaimed.Bytes != nil || !strings.Contains(st.Snapshot.Unclaimed.BytesNote, "MEMORY USAGE refused") {
		t.Fatalf("without MEMORY: bytes %v, note %q", st.Snapshot.Unclaimed.Bytes, st.Snapshot.Unclaimed.BytesNote)
	}
	col.set(st, nil)
	samples := parse(t, scrapeHandler(t, col))
	if b := find(samples, "hourglass_unclaimed_bytes"); len(b) != 0 {
		t.Errorf("without MEMORY: hourglass_unclaimed_bytes = %v, want absent", b)
	}
	if k := find(samples, "hourglass_unclaimed_keys"); len(k) != 1 || k[0].value != 5 {
		t.Errorf("without MEMORY: hourglass_unclaimed_keys = %v, want 5", k)
	}
	if g := find(samples, "hourglass_unclaimed_group_keys", "pattern", "alpha:<alpha>"); len(g) != 1 || g[0].value != 5 {
		t.Errorf("without MEMORY: group series %v, want alpha's 5 keys", find(samples, "hourglass_unclaimed_group_keys"))
	}
}

// TestUnclaimedNone: with every key claimed there are 0 unclaimed keys weighing 0 bytes, and no
// group series.
func TestUnclaimedNone(t *testing.T) {
	srv := redistest.Start(t)
	srv.Client(t).Set(t.Context(), "flow:web:2026112312", 1, 0)
	col := newCollector(nil)
	col.set(sweep(t, unclaimedWatcher(t, srv, "")), nil)
	samples := parse(t, scrapeHandler(t, col))
	for _, m := range []string{"hourglass_unclaimed_keys", "hourglass_unclaimed_bytes"} {
		if s := find(samples, m); len(s) != 1 || s[0].value != 0 {
			t.Errorf("%s = %v, want 0", m, s)
		}
	}
	if g := find(samples, "hourglass_unclaimed_group_keys"); len(g) != 0 {
		t.Errorf("group series with no unclaimed keys: %v", g)
	}
}

// TestUnclaimedGroupLabels: groups that share a pattern and a kind are one series with their keys
// added up (a second series of the same labels would fail the scrape), and a pattern that is not
// UTF-8 is escaped into a label instead of failing it.
func TestUnclaimedGroupLabels(t *testing.T) {
	s := &snapshot.Snapshot{}
	s.Unclaimed = discover.Result{Keys: 10, Groups: []discover.Group{
		{Pattern: "a:<id>", Kind: discover.KindOther, Keys: 4},
		{Pattern: "b:<id>", Kind: discover.KindCounter, Keys: 3},
		{Pattern: "a:<id>", Kind: discover.KindOther, Keys: 2},
		{Pattern: "bad\xff", Kind: discover.KindUndecided, Keys: 1},
	}}
	col := newCollector(nil)
	col.set(snapshot.Status{Snapshot: s}, nil)
	body := scrapeHandler(t, col)
	got := map[string]float64{}
	for _, g := range find(parse(t, body), "hourglass_unclaimed_group_keys") {
		got[g.labels["pattern"]+" "+g.labels["kind"]] = g.value
	}
	want := map[string]float64{"a:<id> other": 6, "b:<id> counter": 3, `bad\xff undecided`: 1}
	if !maps.Equal(got, want) {
		t.Errorf("group series %v, want %v\n%s", got, want, body)
	}
}
