package scanner

import (
	"slices"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store/jobs"

	"github.com/redis/go-redis/v9"
)

// TestBullMQFlowParentIsNoQueue: a flow's parent job with a custom id keeps its failed children
// in <queue>:<id>:failed, which reads by name as a queue "<queue>:<id>"'s failed set; with the
// parent's queue found, the sweep takes it for that queue's job, and lists only the queues BullMQ
// itself wrote. A queue of an older BullMQ named with ':' is still found by its other keys.
func TestBullMQFlowParentIsNoQueue(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "bullmq_clean.mjs", "redis://"+srv.Addr, "fill", "3")
	if rdb.Type(t.Context(), "bull:clean:p1:failed").Val() != "hash" {
		t.Fatal("BullMQ kept no failed children for the flow's parent p1")
	}
	rdb.ZAdd(t.Context(), "bull:old:eu:failed", redis.Z{Score: 1, Member: "9"}) // a v4 queue "old:eu"
	rdb.HSet(t.Context(), "bull:old:eu:meta", "opts.maxLenEvents", "10000")
	spec := JobQueueSpec{Name: "bq", Source: jobs.Source{Layout: jobs.BullMQ, Prefix: "bull"}}
	snap, err := Take(t.Context(), rdb, nil, Options{Location: time.UTC, Structures: Structures{JobQueues: []JobQueueSpec{spec}}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range snap.JobQueues[0].Queues {
		names = append(names, q.RawQueue)
	}
	if want := []string{"clean", "kids", "old:eu"}; !slices.Equal(names, want) {
		t.Fatalf("queues %v, want %v", names, want)
	}
}
