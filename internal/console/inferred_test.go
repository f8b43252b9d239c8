package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/infer"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/tui"
)

// TestInferredSessionWritesAWholeConfig: a console with no config file counts the counter keys
// it infers, the operator adds a low-confidence group too, and w writes a whole config (the
// [redis] table, the inferred and added entries in force, the rest commented or listed) that
// loads and watches the same entries.
func TestInferredSessionWritesAWholeConfig(t *testing.T) {
	srv := redistest.Start(t)
	rdb, ctx := srv.Client(t), t.Context()
	now := redistest.ClearOfHourEnd(t, 30*time.Second).UTC()
	var total int64
	for h := range 3 {
		window := now.Add(-time.Duration(h) * time.Hour).Format("2006010215")
		for i := range 10 {
			rdb.Set(ctx, fmt.Sprintf("hits:page%d:%s", i, window), 10*i+h+1, time.Duration(48-h)*time.Hour)
			if h == 0 {
				total += int64(10*i + h + 1)
			}
		}
	}
	for i := range 5 {
		rdb.Set(ctx, fmt.Sprintf("cache:page%d", i), `{"html":"<p>hello</p>"}`, time.Hour)
	}
	base, err := config.Parse("config.toml", []byte(fmt.Sprintf("timezone = \"UTC\"\n[redis]\naddrs = [%q]\n[[lock]]\nname = \"x\"\npattern = \"x:<y>\"\n", srv.Addr)), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := base.Bare()
	adopter := infer.New(cfg, false)
	opt := cfg.SweepOptions(true)
	opt.Infer = adopter
	w := watch.New(rdb, cfg.Counters, opt)
	sess := newSession(w, cfg, false, srv.Addr).inferring(adopter, infer.Connection(cfg.Redis, false, false))
	var st snapshot.Status
	redistest.Eventually(t, "the inferred hits family is counted", 20*time.Second, func() bool {
		st = pollUntilSweep(t, w)
		f := st.Snapshot.Family("hits")
		return f != nil && f.CurrentWindow("hour") != nil && f.CurrentWindow("hour").Total == total && f.Keys == 30
	})
	if st.Inferred == nil || len(st.Inferred.Entries) != 1 || st.Inferred.Entries[0].Name != "hits" {
		t.Fatalf("inferred %+v", st.Inferred)
	}
	if _, err := sess.config().Counter("hits"); err != nil {
		t.Fatalf("the console's writes (inject, repair) do not reach the inferred family: %v", err)
	}
	added := discover.Entry{Table: "lock", Name: "cache", Pattern: "cache:<page>"}
	if _, err := sess.Claim(ctx, added); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mine.toml")
	p := tui.Proposal{Result: st.Snapshot.Unclaimed, TakenAt: st.Snapshot.TakenAt, KeysSeen: st.Snapshot.Scan.KeysSeen, Complete: true}
	text, err := sess.WriteProposal(ctx, out, p)
	if err != nil || !strings.Contains(text, "2 entries in force") {
		t.Fatalf("write: %q, %v", text, err)
	}
	data, _ := os.ReadFile(out)
	got, err := config.Load(out, nil)
	if err != nil {
		t.Fatalf("the file does not load: %v\n%s", err, data)
	}
	if _, err := got.Counter("hits"); err != nil || len(got.Counters) != 1 || len(got.Structures.Locks) != 1 ||
		got.Structures.Locks[0].Name != "cache" || len(got.Redis.Addrs) != 1 || got.Redis.Addrs[0] != srv.Addr {
		t.Fatalf("the file loads as %d counters (%v), locks %+v, addrs %v:\n%s", len(got.Counters), err, got.Structures.Locks, got.Redis.Addrs, data)
	}
	if strings.Contains(string(data), `name = "x"`) {
		t.Fatalf("the file holds an entry of the settings it was made from:\n%s", data)
	}
}
