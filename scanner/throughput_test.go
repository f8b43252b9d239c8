package scanner

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TestOneSnapshotSaysWhyItHasNoRate: a one-off snapshot reads the totals and days but gives no
// rate, saying why; a library keeping no count (Celery) says so and has no rows.
func TestOneSnapshotSaysWhyItHasNoRate(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	if err := rdb.Set(t.Context(), "stat:processed", 40, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(t.Context(), "queues", "default").Err(); err != nil {
		t.Fatal(err)
	}
	specs := []JobQueueSpec{{Name: "sk", Source: jobs.Source{Layout: jobs.Sidekiq}}, {Name: "cel", Source: jobs.Source{Layout: jobs.Celery}}}
	snap, err := Take(t.Context(), rdb, nil, Options{Location: time.UTC, Structures: Structures{JobQueues: specs}})
	if err != nil {
		t.Fatal(err)
	}
	sk, cel := snap.JobQueues[0], snap.JobQueues[1]
	if len(sk.Throughput) != 1 || sk.Throughput[0].ProcessedTotal == nil || *sk.Throughput[0].ProcessedTotal != 40 ||
		sk.Throughput[0].ProcessedPerSec != nil || sk.Throughput[0].RateNote == "" || len(sk.Throughput[0].Days) != throughputDays {
		t.Errorf("sidekiq's throughput in one snapshot: %+v", sk.Throughput)
	}
	if len(cel.Throughput) != 0 || cel.ThroughputNote == "" {
		t.Errorf("celery: %+v, note %q; want no rows and why", cel.Throughput, cel.ThroughputNote)
	}
}

// TestThroughputUnreadSaysSo: a library's counts the server refuses to read (a user without
// SSCAN, which RQ's workers set is read with) come as that library's row, unknown, with the
// refusal, not as no row at all, which would read as counts the library does not keep.
func TestThroughputUnreadSaysSo(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	if err := admin.Do(t.Context(), "ACL", "SETUSER", "watcher", "on", ">secret", "~*", "+@read", "+scan", "-sscan").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "watcher", Password: "secret"})
	t.Cleanup(func() { rdb.Close() })
	spec := JobQueueSpec{Name: "rq", Source: jobs.Source{Layout: jobs.RQ, Prefix: "rq"}}
	snap, err := Take(t.Context(), rdb, nil, Options{Location: time.UTC, Structures: Structures{JobQueues: []JobQueueSpec{spec}}})
	if err != nil {
		t.Fatal(err)
	}
	rows := snap.JobQueues[0].Throughput
	if len(rows) != 1 || rows[0].Queue != "" || rows[0].ProcessedTotal != nil || !strings.Contains(rows[0].Error, "NOPERM") ||
		!strings.Contains(rows[0].RateNote, "could not be read") {
		t.Errorf("rows %+v; want one for all queues, unknown, with the refusal", rows)
	}
}
