package jobs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestListQueueLatencyFromPayloads: a list queue's latency is read from its oldest task's
// payload when that is a JSON object with a time, in seconds, milliseconds or RFC 3339; a
// payload with none leaves it unknown and says why; an empty queue has waited 0.
func TestListQueueLatencyFromPayloads(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	now := time.Now()
	old := now.Add(-90 * time.Second)
	for _, c := range []struct {
		name, oldest string
		want         time.Duration // -1: unknown
	}{
		{"seconds", fmt.Sprintf(`{"id":1,"enqueued_at":%.3f}`, float64(old.UnixMilli())/1000), 90 * time.Second},
		{"millis", fmt.Sprintf(`{"created_at":%d,"job":"x"}`, old.UnixMilli()), 90 * time.Second},
		{"rfc3339", fmt.Sprintf(`{"ts":%q}`, old.UTC().Format(time.RFC3339Nano)), 90 * time.Second},
		{"opaque", "send-mail-42", -1},
		{"no time", `{"id":1,"at":"soon"}`, -1},
	} {
		key := "list:" + c.name
		// The oldest first: LPUSH puts the newer ones at the head, the oldest stays at the tail.
		rdb.LPush(ctx, key, c.oldest, fmt.Sprintf(`{"enqueued_at":%d}`, now.Unix()))
		qs, err := ListQueueOf(key, "").Stats(ctx, rdb, now)
		if err != nil {
			t.Fatal(err)
		}
		st := qs.List
		switch {
		case c.want < 0 && (st.Latency != -1 || !strings.Contains(st.LatencyNote, "payload holds no time")):
			t.Errorf("%s: latency %v (%q), want unknown with why", c.name, st.Latency, st.LatencyNote)
		case c.want >= 0 && (st.Latency-c.want > time.Millisecond || c.want-st.Latency > time.Millisecond):
			t.Errorf("%s: latency %v, want %v", c.name, st.Latency, c.want)
		}
	}
	if l, why, err := ListLatency(ctx, rdb, "list:none", 0, now); l != 0 || why != "" || err != nil {
		t.Errorf("an empty queue's latency %v %q %v, want 0", l, why, err)
	}
}
