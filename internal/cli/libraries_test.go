package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// libraryConfig writes a config of the given sections that points at addr.
func libraryConfig(t *testing.T, addr string, sections ...string) string {
	t.Helper()
	body := fmt.Sprintf("[redis]\naddrs = [%q]\n\n%s\n", addr, strings.Join(sections, "\n"))
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshotJSON runs `snapshot --json` and decodes it.
func snapshotJSON(t *testing.T, path string) snapshot.Snapshot {
	t.Helper()
	code, out, errOut := hg(t, "snapshot", "--json", "--config", path)
	if code != exitOK {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	return snap
}

func num(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestSnapshotOfSidekiq lets Sidekiq itself fill a server, then holds `snapshot --json` and the
// text report to Sidekiq's own counts: each queue's size, and for all queues together the
// scheduled, retry and dead sets and the busy workers; the scheduled tasks due when the snapshot
// ran lie between those due when Sidekiq counted and those due five seconds later.
func TestSnapshotOfSidekiq(t *testing.T) {
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	srv := redistest.Start(t)
	var rep struct {
		Stats struct {
			ScheduledSize int64 `json:"scheduled_size"`
			RetrySize     int64 `json:"retry_size"`
			DeadSize      int64 `json:"dead_size"`
			WorkersSize   int64 `json:"workers_size"`
		} `json:"stats"`
		Now          float64            `json:"now"`
		Sizes        map[string]int64   `json:"sizes"`
		Latencies    map[string]float64 `json:"latencies"` // Queue#latency, seconds, at now
		ScheduledDue int64              `json:"scheduled_due"`
		DueIn5s      int64              `json:"scheduled_due_in_5s"`
	}
	redistest.RunFixture(t, ruby, "../../store/jobs/testdata/sidekiq", &rep, "fixture.rb", "redis://"+srv.Addr+"/0", "")
	path := libraryConfig(t, srv.Addr, "[[job_queue]]\nname = \"sk\"\nlayout = \"sidekiq\"\n")
	snap := snapshotJSON(t, path)
	if len(snap.JobQueues) != 1 {
		t.Fatalf("job queues %+v", snap.JobQueues)
	}
	jq := snap.JobQueues[0]
	got := map[string]int64{}
	for _, q := range jq.Queues {
		got[q.Queue] = num(q.Waiting)
		if q.Scheduled != nil || q.Retry != nil || q.Dead != nil {
			t.Errorf("queue %s has per-queue scheduled/retry/dead %+v: Sidekiq keeps them for all queues", q.Queue, q)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(rep.Sizes) {
		t.Errorf("waiting per queue %v, Sidekiq::Queue#size %v", got, rep.Sizes)
	}
	// Each queue's latency is Sidekiq's Queue#latency, grown by the time since Sidekiq read it.
	since := float64(time.Now().UnixMicro())/1e6 - rep.Now
	for _, q := range jq.Queues {
		want := rep.Latencies[q.Queue]
		if q.LatencyMS == nil || want == 0 && *q.LatencyMS != 0 || want > 0 && (float64(*q.LatencyMS)/1000 < want-0.1 || float64(*q.LatencyMS)/1000 > want+since+0.1) {
			t.Errorf("queue %s: latency %v ms (%s); Sidekiq's Queue#latency %.3fs, %.1fs before", q.Queue, q.LatencyMS, q.LatencyNote, want, since)
		}
	}
	sh := jq.Shared
	if sh == nil || num(sh.Scheduled) != rep.Stats.ScheduledSize || num(sh.Retry) != rep.Stats.RetrySize ||
		num(sh.Dead) != rep.Stats.DeadSize || num(sh.Active) != rep.Stats.WorkersSize {
		t.Fatalf("shared %+v, Sidekiq::Stats %+v", sh, rep.Stats)
	}
	if sh.LatencyMS != nil {
		t.Errorf("the shared row has a latency of its own: %d ms", *sh.LatencyMS)
	}
	if d := num(sh.Due); d < rep.ScheduledDue || d > rep.DueIn5s {
		t.Errorf("due %d, want between %d (when Sidekiq counted) and %d (5 s later)", d, rep.ScheduledDue, rep.DueIn5s)
	}
	code, out, _ := hg(t, "snapshot", "--config", path)
	if code != exitOK || !strings.Contains(out, "JOBS sk (sidekiq)") || !strings.Contains(out, "(all queues)") {
		t.Fatalf("text report (exit %d) has no Sidekiq section:\n%s", code, out)
	}
}

// TestSnapshotOfLimits lets python limits fill a server, then holds the limiter's JSON to what
// limits answers: the keys at their limit, none over, the refused hits its fixed windows count.
func TestSnapshotOfLimits(t *testing.T) {
	py := redistest.Interpreter(t, "python3", "limits", "redis")
	srv := redistest.Start(t)
	var rep struct {
		Keys map[string]struct {
			Strategy  string `json:"strategy"`
			Amount    int64  `json:"amount"`
			Hits      []bool `json:"hits"`
			Remaining int64  `json:"remaining"`
			Test      bool   `json:"test"`
		} `json:"keys"`
	}
	redistest.RunFixture(t, py, "../../store/limits/testdata/limits", &rep, "fixture.py", "redis://"+srv.Addr+"/0")
	var atLimit, refused, keys int64
	for _, k := range rep.Keys {
		keys++
		if k.Remaining == 0 {
			atLimit++
		}
		if k.Strategy == "fixed" && int64(len(k.Hits)) > k.Amount {
			refused += int64(len(k.Hits)) - k.Amount
		}
	}
	path := libraryConfig(t, srv.Addr, "[[limiter]]\nname = \"py\"\nlayout = \"limits\"\n")
	snap := snapshotJSON(t, path)
	if len(snap.Limiters) != 1 {
		t.Fatalf("limiters %+v", snap.Limiters)
	}
	l := snap.Limiters[0]
	if l.Layout != "limits" || l.Keys != keys || l.AtLimit != atLimit || l.OverLimit != nil || num(l.RefusedInWindow) != refused || l.Unknown != 0 {
		t.Fatalf("limiter %+v: want %d keys, %d at their limit (limits' remaining 0), none over, %d refused", l, keys, atLimit, refused)
	}
	// Each key says whether limits would take the next hit; the spread moving window, at its
	// limit, takes one when its oldest hit leaves the window, about 10 s on (ttl_ms).
	spread := false
	for _, k := range l.Top {
		spread = spread || k.Key == "LIMITER/moving/spread/3/1/minute"
		if want, ok := rep.Keys[k.Key]; !ok || k.AtLimit != !want.Test {
			t.Errorf("top key %s: at limit %v, limits' test() %v", k.Key, k.AtLimit, want.Test)
		}
		if k.Key == "LIMITER/moving/spread/3/1/minute" && (k.TTLMS < 5_000 || k.TTLMS > 11_000) {
			t.Errorf("the spread key: next hit allowed in %d ms, want about 10 s", k.TTLMS)
		}
	}
	if !spread {
		t.Errorf("the spread key is not among the top keys %+v", l.Top)
	}
}

// TestSnapshotOfCelery lets Celery itself fill a server: a queue whose list is named after the
// queue alone ("mail", routed through its own exchange) is known from the binding that names it,
// so its list is the Celery entry's, not an unclaimed key beside it.
func TestSnapshotOfCelery(t *testing.T) {
	py := redistest.Interpreter(t, "python3", "celery")
	srv := redistest.Start(t)
	var rep struct {
		Queues map[string]struct {
			MessageCount int64 `json:"message_count"`
		} `json:"queues"`
	}
	redistest.RunFixture(t, py, "../../store/jobs/testdata/celery", &rep, "fixture.py", "redis://"+srv.Addr+"/0")
	if rep.Queues["mail"].MessageCount == 0 || srv.Client(t).Exists(t.Context(), "mail").Val() != 1 {
		t.Fatalf("the fixture left no mail list: %+v", rep)
	}
	snap := snapshotJSON(t, libraryConfig(t, srv.Addr, "[[job_queue]]\nname = \"cel\"\nlayout = \"celery\"\n"))
	waiting := map[string]int64{}
	for _, q := range snap.JobQueues[0].Queues {
		waiting[q.Queue] = num(q.Waiting)
	}
	for name, q := range rep.Queues {
		if waiting[name] != q.MessageCount {
			t.Errorf("queue %s: waiting %d, kombu's message_count %d", name, waiting[name], q.MessageCount)
		}
	}
	if snap.Unclaimed.Keys != 0 {
		t.Errorf("%d keys unclaimed beside the Celery entry: %+v", snap.Unclaimed.Keys, snap.Unclaimed.Groups)
	}
}
