package target

import (
	"testing"
	"time"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// TestEmbeddedExpiresOnWallClock checks keys in the embedded Redis expire as time passes, as in a
// real Redis, with no one advancing its clock by hand.
func TestEmbeddedExpiresOnWallClock(t *testing.T) {
	emb, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	tg, err := store.ParseTarget([]string{emb.Addr()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rdb := tg.NewClient()
	defer rdb.Close()
	if err := rdb.Set(t.Context(), "short", "1", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(t.Context(), "long", "1", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, "a key with a 300ms TTL to expire", 10*time.Second, func() bool {
		return rdb.Exists(t.Context(), "short").Val() == 0
	})
	if rdb.Exists(t.Context(), "long").Val() != 1 {
		t.Fatal("a key with an hour's TTL expired")
	}
	if ttl := rdb.TTL(t.Context(), "long").Val(); ttl > time.Hour-200*time.Millisecond {
		t.Fatalf("TTL %v has not counted down", ttl)
	}
}
