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
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/tui"
)

// TestSessionClaimsAndWritesTheProposal runs the console's session against a real server: the
// entry discover proposes for unclaimed counter keys, once claimed, makes the next sweep count
// them under it; a second claim of the same name is refused; the proposal is never written over
// an existing file, and the file it writes loads with the config, the added entry active in it.
func TestSessionClaimsAndWritesTheProposal(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	dir := t.TempDir()
	cfgText := fmt.Sprintf(`timezone = "UTC"

[redis]
addrs = [%q]

[[counter]]
name = "flow"
pattern = "flow:count:<app>:<window>"
hour_format = "yyyyMMddHH"
hour_retention = "48h"
`, srv.Addr)
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	rdb.Set(ctx, "flow:count:web:"+now.Format("2006010215"), 5, time.Hour)
	rdb.RPush(ctx, "mail:outbox", "to=a@example.com", "to=b@example.com")
	for i := range 5 {
		rdb.Set(ctx, fmt.Sprintf("cache:page%d", i), `{"html":"<p>hello</p>"}`, time.Hour)
	}

	w := watch.New(rdb, cfg.Counters, cfg.SweepOptions(true))
	sess := newSession(w, cfg, false, srv.Addr)
	st := pollUntilSweep(t, w)
	hits := groupOf(st.Snapshot.Unclaimed, "hits:")
	if hits == nil || hits.Entry == nil || hits.Entry.Table != "counter" || hits.Keys != 30 || st.Snapshot.Unclaimed.Keys != 36 {
		t.Fatalf("the unclaimed hits keys are not proposed as a counter: %+v", st.Snapshot.Unclaimed.Groups)
	}
	before := tui.Proposal{Result: st.Snapshot.Unclaimed, TakenAt: st.Snapshot.TakenAt, KeysSeen: st.Snapshot.Scan.KeysSeen, Complete: true}

	text, err := sess.Claim(ctx, *hits.Entry)
	if err != nil || !strings.Contains(text, "from the next sweep") {
		t.Fatalf("claim: %q, %v", text, err)
	}
	st = pollUntilSweep(t, w)
	f := st.Snapshot.Family(hits.Entry.Name)
	if f == nil || f.Keys != 30 || f.CurrentWindow("hour") == nil || f.CurrentWindow("hour").Total != total {
		t.Fatalf("after the claim the family %s is %+v, want 30 keys and %d this hour", hits.Entry.Name, f, total)
	}
	if g := groupOf(st.Snapshot.Unclaimed, "hits:"); g != nil {
		t.Fatalf("the claimed keys are still unclaimed: %+v", g)
	}
	if _, err := sess.Claim(ctx, *hits.Entry); err == nil || !strings.Contains(err.Error(), "already has a [[counter]] named") {
		t.Fatalf("a second claim of %s: %v", hits.Entry.Name, err)
	}
	clash := discover.Entry{Table: "counter", Name: "flow", Pattern: "other:<x>:<window>", HourFormat: "yyyyMMddHH", HourRetention: "1h"}
	if _, err := sess.Claim(ctx, clash); err == nil || !strings.Contains(err.Error(), `named "flow"`) {
		t.Fatalf("a claim named like the config's flow: %v", err)
	}

	taken := filepath.Join(dir, "taken.toml")
	if err := os.WriteFile(taken, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.WriteProposal(ctx, taken, before); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("writing over an existing file: %v", err)
	}
	if data, _ := os.ReadFile(taken); string(data) != "# mine\n" {
		t.Fatalf("the existing file was changed: %q", data)
	}
	out := filepath.Join(dir, "proposal.toml")
	text, err = sess.WriteProposal(ctx, out, before)
	if err != nil || !strings.Contains(text, "wrote "+out) {
		t.Fatalf("write: %q, %v", text, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), cfgText) || strings.Count(string(data), `name = "`+hits.Entry.Name+`"`) != 1 ||
		!strings.Contains(string(data), "# keys:     37 seen, 6 claimed by no entry") || !strings.Contains(string(data), "cache:page") {
		t.Fatalf("the proposal does not start with the config and hold the added entry once:\n%s", data)
	}
	got, err := config.Load(out, nil)
	if err != nil {
		t.Fatalf("the proposal does not load: %v\n%s", err, data)
	}
	if _, err := got.Counter(hits.Entry.Name); err != nil || len(got.Counters) != 2 || got.TimezoneName != "UTC" {
		t.Fatalf("the proposal loads as %d counters (%v), zone %s", len(got.Counters), err, got.TimezoneName)
	}
	if q := got.Structures.ListQueues; len(q) != 1 || q[0].Key != "mail:outbox" {
		t.Fatalf("the proposal's list queues: %+v\n%s", q, data)
	}
}

func pollUntilSweep(t *testing.T, w *watch.Watcher) snapshot.Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := w.Poll(t.Context(), 50*time.Millisecond, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Sweep.Completed {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatal("no sweep completed")
		}
	}
}

func groupOf(r discover.Result, prefix string) *discover.Group {
	for i, g := range r.Groups {
		if strings.HasPrefix(g.Pattern, prefix) {
			return &r.Groups[i]
		}
	}
	return nil
}

// The built-in default written for a console given --addr reaches that Redis, not the embedded
// one; an address holding a password is never written.
func TestProposalOfTheDefaultConfigKeepsTheAddress(t *testing.T) {
	text := withAddrs(string(redistest.Shipped(t)), []string{"127.0.0.1:6420"})
	cfg, err := config.Parse("proposal", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Redis.Addrs) != 1 || cfg.Redis.Addrs[0] != "127.0.0.1:6420" {
		t.Fatalf("addrs = %q, want the console's address", cfg.Redis.Addrs)
	}
	text = withAddrs(string(redistest.Shipped(t)), []string{"redis://u:secret@10.0.0.1:6379"})
	if strings.Contains(text, "secret") {
		t.Fatal("a password was written")
	}
	if cfg, err := config.Parse("proposal", []byte(text), nil); err != nil || len(cfg.Redis.Addrs) != 0 {
		t.Fatalf("addrs = %v, %v; want none", cfg, err)
	}
}
