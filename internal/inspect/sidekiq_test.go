package inspect

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// sidekiqDir holds the scripts that fill a server the way Sidekiq itself does and read it back
// with Sidekiq's own API.
const sidekiqDir = "../../store/jobs/testdata/sidekiq"

// sidekiqFilled is what fixture.rb prints of what Sidekiq wrote: each queue's size and jids as
// Sidekiq::Queue lists them (the newest first), and each set's [jid, score, enqueued_at or
// created_at] as the set lists it (the highest score first).
type sidekiqFilled struct {
	Sizes map[string]int64 `json:"sizes"`
	Jobs  struct {
		Queues                map[string][]string `json:"queues"`
		Schedule, Retry, Dead [][3]any
	} `json:"jobs"`
}

// fillSidekiq lets Sidekiq itself fill srv: three jobs waiting in default, two in mail, five
// scheduled, one retry, two dead and a busy process; it returns what Sidekiq's API lists there.
func fillSidekiq(t *testing.T, srv *redistest.Server) sidekiqFilled {
	t.Helper()
	ruby := redistest.Interpreter(t, "ruby", "sidekiq")
	var rep sidekiqFilled
	redistest.RunFixture(t, ruby, sidekiqDir, &rep, "fixture.rb", "redis://"+srv.Addr+"/0")
	if len(rep.Jobs.Queues["default"]) != 3 || len(rep.Jobs.Queues["mail"]) != 2 || len(rep.Jobs.Schedule) == 0 ||
		len(rep.Jobs.Retry) == 0 || len(rep.Jobs.Dead) == 0 {
		t.Fatalf("Sidekiq did not fill default, mail and its sets: %+v", rep)
	}
	return rep
}

// sidekiqJob is a job as read.rb prints it, from Sidekiq's own API.
type sidekiqJob struct {
	JID   string          `json:"jid"`
	Args  json.RawMessage `json:"args"`
	Queue string          `json:"queue"`
}

// sidekiqView is what Sidekiq's API sees: each queue's jobs (the next to run first) and the sets'.
type sidekiqView struct {
	Queues   map[string][]sidekiqJob `json:"queues"`
	Schedule []sidekiqJob            `json:"schedule"`
	Retry    []sidekiqJob            `json:"retry"`
	Dead     []sidekiqJob            `json:"dead"`
}

// readSidekiq reads srv with Sidekiq's own API.
func readSidekiq(t *testing.T, srv *redistest.Server) sidekiqView {
	t.Helper()
	var v sidekiqView
	redistest.RunFixture(t, redistest.Interpreter(t, "ruby", "sidekiq"), sidekiqDir, &v, "read.rb", "redis://"+srv.Addr+"/0")
	return v
}

// jidsOf are the jobs' jids, in order.
func jidsOf(jobs []sidekiqJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.JID
	}
	return out
}

// unixSeconds is a fixture's clock reading (float seconds since the epoch), to the microsecond.
func unixSeconds(s float64) time.Time { return time.UnixMicro(int64(math.Round(s * 1e6))) }
