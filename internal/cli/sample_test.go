package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// sampleKeyspace writes about 200,000 keys of a few shapes, and returns how many each group
// holds: a counter family the config claims (hits), a counter family nobody claims (views),
// strings, hashes, and a group too rare to be scaled.
func sampleKeyspace(t *testing.T, rdb *redis.Client) map[string]int {
	t.Helper()
	ctx := t.Context()
	day := time.Now().UTC().Format("20060102")
	want := map[string]int{"hits": 40000, "views": 30000, "cache": 90000, "profile": 40000, "rare": 20}
	p := rdb.Pipeline()
	flush := func() {
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 90000 {
		if i < want["hits"] {
			p.Set(ctx, fmt.Sprintf("hits:app%d:%s", i, day), i%97+1, 0)
		}
		if i < want["views"] {
			p.Set(ctx, fmt.Sprintf("views:page%d:%s", i, day), i%89+1, 0)
		}
		if i < want["profile"] {
			p.HSet(ctx, fmt.Sprintf("profile:%d", i), "name", "n", "plan", "free")
		}
		if i < want["rare"] {
			p.Set(ctx, fmt.Sprintf("rare:%d", i), "x", 0)
		}
		p.Set(ctx, fmt.Sprintf("cache:user:%d", i), strings.Repeat("v", 40), 0)
		if p.Len() >= 5000 {
			flush()
		}
	}
	flush()
	return want
}

// within checks that exact lies in e's interval; widened says how far past the stated 95%
// interval it may lie (1 for none).
func within(e *discover.Estimate, exact int, widened float64) bool {
	if e == nil || e.High == nil {
		return false
	}
	mid := e.Estimate
	lo, hi := mid-(mid-e.Low)*widened, mid+(*e.High-mid)*widened
	return lo <= float64(exact) && float64(exact) <= hi
}

// widen turns a 95% interval's half width into one that misses about one time in ten thousand
// (3.92 / 1.96): a 95% interval misses one time in twenty by design, and a test of several figures
// that failed that often would teach nothing. How many 95% intervals held is logged.
const widen = 2

// TestSampleScalesToTheKeyspace: snapshot and discover with --sample 10% on a real redis-server
// stop at a tenth of the keyspace with exit 0, say the coverage, give each figure an interval that
// holds the count the test wrote, and propose the same entries as a complete sweep.
func TestSampleScalesToTheKeyspace(t *testing.T) {
	srv := redistest.Start(t)
	want := sampleKeyspace(t, srv.Client(t))
	total := 0
	for _, n := range want {
		total += n
	}
	cfg := writeConfig(t, "hits.toml", fmt.Sprintf("timezone = \"UTC\"\n[redis]\naddrs = [%q]\n\n[[counter]]\nname = \"hits\"\npattern = \"hits:<app>:<window>\"\nday_format = \"yyyyMMdd\"\nday_retention = \"30d\"\n", srv.Addr))

	code, out, errOut := hg(t, "snapshot", "--json", "--config", cfg, "--sample", "10%", "--keys-per-second", "0")
	if code != exitOK {
		t.Fatalf("snapshot --sample 10%%: exit %d, %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Scan.Complete || snap.Scan.Coverage < 0.10 || snap.Scan.Coverage > 0.5 {
		t.Fatalf("scan %+v: want a tenth of the keyspace or a little more, not complete", snap.Scan)
	}
	fam := snap.Counters[0]
	if e := fam.KeysEstimate; e == nil || !within(&discover.Estimate{Estimate: e.Estimate, Low: e.Low, High: e.High}, 40000, widen) {
		t.Errorf("family hits: keys %d, estimate %+v; want an interval around 40,000", fam.Keys, e)
	}
	t.Logf("snapshot, coverage %.3f: hits ≈%.0f (%.0f–%.0f), exact 40,000", snap.Scan.Coverage, fam.KeysEstimate.Estimate, fam.KeysEstimate.Low, *fam.KeysEstimate.High)
	checkGroups(t, snap.Unclaimed, want, "snapshot")

	// discover, sampled and complete: the same entries.
	conn := writeConfig(t, "conn.toml", fmt.Sprintf("timezone = \"UTC\"\n[redis]\naddrs = [%q]\n", srv.Addr))
	code, full, errOut := hg(t, "discover", "--config", conn, "--keys-per-second", "0")
	if code != exitOK {
		t.Fatalf("discover: exit %d, %s", code, errOut)
	}
	code, out, errOut = hg(t, "discover", "--json", "--config", conn, "--sample", "10", "--keys-per-second", "20000")
	if code != exitOK {
		t.Fatalf("discover --sample 10: exit %d, %s", code, errOut)
	}
	var d discoverJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	u := d.Unclaimed
	if !d.Sampled || d.Complete || u.DBSize != int64(total) || u.Coverage < 0.10 || u.Coverage >= 1 {
		t.Fatalf("discover: sampled %v, complete %v, db_size %d (want %d), coverage %.3f", d.Sampled, d.Complete, u.DBSize, total, u.Coverage)
	}
	header := fmt.Sprintf("# SAMPLE:   from %.1f%% of %s keys, swept in ", 100*u.Coverage, format.Commas(int64(total)))
	if !strings.Contains(d.Config, header) || strings.Contains(d.Config, "INCOMPLETE") {
		t.Errorf("the header lacks %q:\n%s", header, d.Config)
	}
	checkGroups(t, u, want, "discover")
	// --for stops by time: at 20,000 keys a second, a second sees a tenth of the keys at most.
	code, out, errOut = hg(t, "discover", "--json", "--config", conn, "--for", "1s", "--keys-per-second", "20000")
	var timed discoverJSON
	if code != exitOK || json.Unmarshal([]byte(out), &timed) != nil || !timed.Sampled || timed.Complete || timed.Unclaimed.Coverage <= 0 {
		t.Errorf("discover --for 1s: exit %d, %s; sampled %v, complete %v, coverage %.3f", code, errOut, timed.Sampled, timed.Complete, timed.Unclaimed.Coverage)
	}
	if got, all := entries(d.Config), entries(full); got != all || !strings.Contains(all, "[[counter]]") {
		t.Errorf("entries proposed from the sample:\n%s\nfrom the whole keyspace:\n%s", got, all)
	}
}

// checkGroups checks each group's estimated keys against what the test wrote, and the memory's
// estimate against the keys'.
func checkGroups(t *testing.T, u discover.Result, want map[string]int, what string) {
	t.Helper()
	held := 0
	for _, g := range u.Groups {
		name := strings.SplitN(g.Pattern, ":", 2)[0]
		n, ok := want[name]
		e := g.KeysEstimate
		switch {
		case !ok || e == nil:
			t.Errorf("%s: group %s (%d keys seen): estimate %+v", what, g.Pattern, g.Keys, e)
		case name == "rare":
			if !e.SoFar && !within(e, n, widen) || e.SoFar && (e.High != nil || e.Seen != float64(g.Keys)) {
				t.Errorf("%s: rare group: %+v; want at least the keys seen, or an interval around %d", what, e, n)
			}
		case e.SoFar || !within(e, n, widen):
			t.Errorf("%s: group %s: ≈%.0f (%.0f–%v); the keys written are %d", what, g.Pattern, e.Estimate, e.Low, e.High, n)
		default:
			if within(e, n, 1) {
				held++
			}
			if b := g.BytesEstimate; g.Bytes != nil && (b == nil || b.High == nil || b.Low > b.Estimate || *b.High < b.Estimate) {
				t.Errorf("%s: group %s: memory %+v", what, g.Pattern, b)
			}
			t.Logf("%s: %-22s ≈%.0f (95%%: %.0f–%.0f), exact %d", what, g.Pattern, e.Estimate, e.Low, *e.High, n)
		}
	}
	t.Logf("%s: the 95%% interval held the exact count for %d of the large groups", what, held)
}

// entries is a config's entries, without its comments.
func entries(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "[["):
			in = true
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "["):
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestSampleFlagsRefused: --sample and --for out of their range are usage errors (exit 2) on both
// commands, before anything is read.
func TestSampleFlagsRefused(t *testing.T) {
	for _, cmd := range []string{"snapshot", "discover"} {
		for _, args := range [][]string{
			{"--sample", "0"}, {"--sample", "0%"}, {"--sample", "-5%"}, {"--sample", "101%"}, {"--sample", "NaN"},
			{"--sample", "Inf"}, {"--sample", "five"}, {"--sample", "1e400"},
			{"--for", "0s"}, {"--for", "-1s"}, {"--for", "25h"}, {"--for", "ten"},
		} {
			code, _, errOut := hg(t, append([]string{cmd, "--addr", redistest.RefusedAddr(t)}, args...)...)
			if code != exitUsage || !strings.Contains(errOut, cmd+": "+args[0]+" "+args[1]+" ") {
				t.Errorf("%s %s: exit %d, %q; want exit 2 naming the flag", cmd, strings.Join(args, " "), code, errOut)
			}
		}
	}
}
