package jobs

import (
	"math"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// newStore is a Store on rdb for a test that writes our own queues through it.
func newStore(t *testing.T, rdb redis.UniversalClient, opt store.Options) *store.Store {
	t.Helper()
	s := store.New(rdb, opt)
	if err := s.Init(t.Context()); err != nil {
		t.Fatalf("init: %v", err)
	}
	return s
}

// checkLatency holds a queue's latency to the library's own figure (seconds) read at the same
// instant, within 100 ms for the moments between the two reads; none waiting is 0 in both.
func checkLatency(t *testing.T, queue string, st Stats, want float64) {
	t.Helper()
	t.Logf("%s: latency %v, the library's %.3fs", queue, st.Latency, want)
	if st.Latency < 0 || math.Abs(st.Latency.Seconds()-want) > 0.1 || (want == 0) != (st.Latency == 0) {
		t.Errorf("%s: latency %v (%s), the library's %.3fs", queue, st.Latency, st.LatencyNote, want)
	}
}
