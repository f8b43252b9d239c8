package watch

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TestSnapshotCarriesWorkers: a sweep's Snapshot carries, on each job library's entry, the
// processes the library records as its own inspector lists them (asynq's Inspector.Servers), with
// ages against the server's clock, and Celery's note that it records none in Redis; the JSON
// names them.
func TestSnapshotCarriesWorkers(t *testing.T) {
	srv := redistest.Start(t)
	opt := asynq.RedisClientOpt{Addr: srv.Addr}
	server := asynq.NewServer(opt, asynq.Config{Concurrency: 2, Queues: map[string]int{"work": 1}, LogLevel: asynq.FatalLevel})
	if err := server.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Shutdown)
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { insp.Close() })
	var servers []*asynq.ServerInfo
	redistest.Eventually(t, "asynq lists its server", 30*time.Second, func() bool {
		var err error
		servers, err = insp.Servers()
		return err == nil && len(servers) == 1
	})
	w := New(srv.Client(t), nil, scanner.Options{Structures: scanner.Structures{JobQueues: []scanner.JobQueueSpec{
		{Name: "aq", Source: jobs.Source{Layout: jobs.Asynq}},
		{Name: "cel", Source: jobs.Source{Layout: jobs.Celery}},
	}}})
	var snap *snapshot.Snapshot
	redistest.Eventually(t, "a sweep completes", 20*time.Second, func() bool {
		st, err := w.Poll(t.Context(), time.Second, "")
		snap = st.Snapshot
		return err == nil && st.Sweep.Completed && snap != nil
	})
	aq, cel := snap.JobQueues[0].Workers, snap.JobQueues[1].Workers
	if aq == nil || num(aq.Found) != 1 || num(aq.Live) != 1 || num(aq.Stale) != 0 || len(aq.List) != 1 {
		t.Fatalf("asynq's workers %+v, want its one server live", aq)
	}
	s, got := servers[0], aq.List[0]
	if got.Identity != s.Host+":"+strconv.Itoa(s.PID)+":"+s.ID || got.Concurrency == nil || *got.Concurrency != 2 ||
		got.Busy == nil || *got.Busy != 0 || got.State != s.Status || got.LastBeatAgeMS != nil ||
		got.ExpiresInMS == nil || *got.ExpiresInMS <= 0 || got.StartedAgeMS == nil || *got.StartedAgeMS < 0 {
		t.Fatalf("asynq's server %+v, want as Inspector.Servers: %+v", got, s)
	}
	if cel == nil || len(cel.List) != 0 || len(cel.Notes) != 1 || !strings.Contains(cel.Notes[0], "Celery") ||
		cel.Found != nil || cel.Live != nil || cel.Stale != nil {
		t.Fatalf("Celery's workers %+v, want none and the note why", cel)
	}
	b, err := json.Marshal(snap.JobQueues[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"workers":{"found":1,"live":1,"stale":0`, `"stale":false`, `"last_beat_age_ms":null`, `"expires_in_ms":`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("the entry's JSON has no %s: %s", field, b)
		}
	}
}

// num is *n, or -1 for null.
func num(n *int64) int64 {
	if n == nil {
		return -1
	}
	return *n
}
