package store

import (
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestQueueStatsOfAKnownDepth reads queues whose depth the caller read earlier: a delay queue's
// depth is then what its due and scheduled tasks add up to now, not the stale figure; a queue
// emptied since is missing; a list's length is the caller's, with only its processing key read.
func TestQueueStatsOfAKnownDepth(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Unix(1795000000, 0)
	queueAt(t, rdb, "q", Seconds, []time.Time{now.Add(-time.Minute), now.Add(5 * time.Minute), now.Add(2 * time.Hour)})

	st, err := DelayQueueStatsOfDepth(ctx, rdb, "q", "", Seconds, now, 7) // 7 when the caller read it
	if err != nil {
		t.Fatal(err)
	}
	if st.Depth != 3 || st.Due != 1 || st.Schedule != [4]int64{0, 1, 0, 1} || st.Missing || !st.Timed {
		t.Errorf("a queue of 3 read as %+v, want depth 3, 1 due", st)
	}
	st, err = DelayQueueStatsOfDepth(ctx, rdb, "gone", "", Seconds, now, 4)
	if err != nil || !st.Missing || st.Depth != 0 {
		t.Errorf("a queue emptied since its depth was read: %+v, %v; want missing, depth 0", st, err)
	}

	rdb.RPush(ctx, "busy", "a", "b")
	ls, err := ListQueueStatsOfLength(ctx, rdb, "l", "busy", 5)
	if err != nil || ls.Length != 5 || ls.Processing != 2 || ls.Missing {
		t.Errorf("a list of 5 with 2 in processing: %+v, %v", ls, err)
	}
	if ls, err := ListQueueStatsOfLength(ctx, rdb, "l", "", 0); err != nil || !ls.Missing {
		t.Errorf("a list of length 0: %+v, %v; want missing", ls, err)
	}
}
