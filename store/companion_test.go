package store

import "testing"

// CompanionQueue reads back every companion the builders name, and nothing else.
func TestCompanionQueue(t *testing.T) {
	for _, q := range []string{"delay:orders", "{tenant:7}:jobs", "q", "a:b:inflight", "{}x", "{}", "{a}{b}"} {
		for _, key := range []string{InFlightKey(q), ProcessingKey(q), TestQueueKey(q)} {
			if got, ok := CompanionQueue(key); !ok || got != q {
				t.Errorf("CompanionQueue(%q) = %q, %v; want %q", key, got, ok, q)
			}
		}
	}
	for _, key := range []string{"orders:processing", "inflight", ":inflight",
		"delay:orders:inflight", "{delay:orders}:inflight:x", "{delay:orders}:wip"} {
		if got, ok := CompanionQueue(key); ok {
			t.Errorf("CompanionQueue(%q) = %q: not a companion hourglass names", key, got)
		}
	}
}
