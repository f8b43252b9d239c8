package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeSeedCounters writes pv:<site>:<hour> and pv:<site>:<day> counters for 40 sites, as the
// seed posts' writers do (INCRBY, then EXPIRE), in zone: the current hour and day windows and
// the two hours before. It returns the current hour's and day's totals.
func writeSeedCounters(t *testing.T, srv *redistest.Server, now time.Time, zone *time.Location) (hour, day int64) {
	t.Helper()
	rdb, ctx := srv.Client(t), t.Context()
	pipe := rdb.Pipeline()
	for site := range 40 {
		for back := range 3 {
			at := now.Add(-time.Duration(back) * time.Hour).In(zone)
			k := fmt.Sprintf("pv:site%d:%s", site, at.Format("2006010215"))
			pipe.IncrBy(ctx, k, int64(site+back+1))
			pipe.Expire(ctx, k, 48*time.Hour)
			if back == 0 {
				hour += int64(site + 1)
			}
			if at.Format("20060102") == now.In(zone).Format("20060102") {
				day += int64(site + back + 1)
			}
			dk := fmt.Sprintf("pv:site%d:%s", site, at.Format("20060102"))
			pipe.IncrBy(ctx, dk, int64(site+back+1))
			pipe.Expire(ctx, dk, 30*24*time.Hour)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return hour, day
}

// TestSnapshotWithNoConfigInfersTheEntries: given an address and no config file, snapshot runs on
// the entries it infers from the keys: Sidekiq's queues as Sidekiq counts them, the seed-style
// counters to the event, and python limits' keys as limits answers, each listed as inferred in
// the JSON and the text report, with nothing of theirs left unclaimed.
func TestSnapshotWithNoConfigInfersTheEntries(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	py := redistest.Interpreter(t, "python3", "limits", "redis")
	srv := redistest.Start(t)
	var sk struct {
		Sizes map[string]int64 `json:"sizes"`
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &sk, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	var lim struct {
		Keys map[string]json.RawMessage `json:"keys"`
	}
	redistest.RunFixture(t, py, "../../store/limits/testdata/limits", &lim, "fixture.py", "redis://"+srv.Addr+"/0")
	now := redistest.ClearOfHourEnd(t, time.Minute)
	hour, day := writeSeedCounters(t, srv, now, time.UTC)

	code, out, errOut := hgInferred(t, "snapshot", "--json", "--addr", srv.Addr)
	if code != exitOK || !strings.Contains(errOut, "no config file: the entries are inferred") {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	if snap.Inferred == nil || snap.Inferred.Pending != 0 {
		t.Fatalf("inferred %+v", snap.Inferred)
	}
	tables := map[string]string{}
	for _, e := range snap.Inferred.Entries {
		tables[e.Table] += e.Name + " "
	}
	if tables["counter"] == "" || tables["job_queue"] == "" || tables["limiter"] == "" {
		t.Fatalf("inferred entries by table %v; want a counter, a job queue and a limiter", tables)
	}
	var pv *snapshot.FamilyStats
	for i := range snap.Counters {
		if strings.HasPrefix(snap.Counters[i].Family, "pv") {
			pv = &snap.Counters[i]
		}
	}
	if pv == nil {
		t.Fatalf("no pv family among %+v", snap.Counters)
	}
	if h, d := pv.CurrentWindow("hour"), pv.CurrentWindow("day"); h == nil || d == nil || h.Total != hour || d.Total != day {
		t.Fatalf("pv's current hour %+v and day %+v; want %d and %d", h, d, hour, day)
	}
	if len(snap.JobQueues) != 1 {
		t.Fatalf("job queues %+v", snap.JobQueues)
	}
	for _, q := range snap.JobQueues[0].Queues {
		if num(q.Waiting) != sk.Sizes[q.Queue] {
			t.Errorf("queue %s: %d waiting, Sidekiq says %d", q.Queue, num(q.Waiting), sk.Sizes[q.Queue])
		}
	}
	if len(snap.Limiters) != 1 || snap.Limiters[0].Keys != int64(len(lim.Keys)) {
		t.Fatalf("limiters %+v; limits wrote %d keys", snap.Limiters, len(lim.Keys))
	}
	for _, g := range snap.Unclaimed.Groups {
		if strings.HasPrefix(g.Pattern, "pv:") || strings.HasPrefix(g.Pattern, "queue:") || strings.HasPrefix(g.Pattern, "LIMITER") {
			t.Errorf("group %s (%s, %s) left unclaimed", g.Pattern, g.Kind, g.Confidence)
		}
	}

	code, out, _ = hgInferred(t, "snapshot", "--addr", srv.Addr)
	if code != exitOK || !strings.Contains(out, "inferred from the keys") || !strings.Contains(out, "[[counter]] pv") {
		t.Fatalf("text report (exit %d) does not list the inferred entries:\n%s", code, out)
	}
}

// TestAConfigFileIsUsedAsItIs: with a config file given, nothing is inferred: its entries alone
// are watched and the rest is unclaimed, as before.
func TestAConfigFileIsUsedAsItIs(t *testing.T) {
	srv := redistest.Start(t)
	writeSeedCounters(t, srv, redistest.ClearOfHourEnd(t, time.Minute), time.UTC)
	keys, err := srv.Client(t).DBSize(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	path := libraryConfig(t, srv.Addr, "[[lock]]\nname = \"m\"\npattern = \"mutex:<job>\"\n")
	snap := snapshotJSON(t, path)
	if snap.Inferred != nil || len(snap.Counters) != 0 || snap.Unclaimed.Keys != keys {
		t.Fatalf("with a config: inferred %+v, %d families, %d unclaimed keys; want none, none, %d", snap.Inferred, len(snap.Counters), snap.Unclaimed.Keys, keys)
	}
}

// TestServeWithNoConfigInfersTheEntries: serve given an address and no config watches the
// entries it infers: the gauge of inferred entries, and the inferred family's series.
func TestServeWithNoConfigInfersTheEntries(t *testing.T) {
	srv := redistest.Start(t)
	writeSeedCounters(t, srv, redistest.ClearOfHourEnd(t, time.Minute), time.UTC)
	keys, err := srv.Client(t).DBSize(t.Context()).Result() // 160, or 200 when the hours span two days
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--addr", srv.Addr)
	want := []string{`hourglass_inferred_entries{state="counted",target="` + srv.Addr + `"} 1`,
		fmt.Sprintf(`hourglass_family_keys{family="pv",target="%s"} %d`, srv.Addr, keys)}
	s.until(fmt.Sprintf("%q", want), 15*time.Second, func(body string) bool {
		return strings.Contains(body, want[0]) && strings.Contains(body, want[1])
	})
	if !strings.Contains(s.errOut.String(), "no config file: the entries are inferred") {
		t.Errorf("serve does not say its entries are inferred: %q", s.errOut.String())
	}
}
