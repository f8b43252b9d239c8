package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestSequenceRecord drives the counter script's exactly-once record call by call: the next
// number applies, a number already applied and a number ahead of the record add nothing and leave
// the record (and its TTL) as they were, a lost record is rebuilt from the sender's confirmed
// floor, and the record's TTL is set only when the call asks for it.
func TestSequenceRecord(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		const rec, counter = "hourglass:seq:{sq}:t:0", "{sq}:count"
		exp := time.Now().Add(time.Hour).UnixMilli()
		// call sends number seq with the record's TTL (negated: no refresh) and the floor, adding
		// 1 to the counter. It returns the counter's new value, or the script's word for a skip.
		call := func(seq, keep, floor int64) string {
			t.Helper()
			reply, err := incrWindows.Run(ctx, b.rdb, []string{rec, counter}, seq, keep, floor, 1, exp).Result()
			if err != nil {
				t.Fatalf("call %d: %v", seq, err)
			}
			if s, ok := reply.(string); ok {
				return s
			}
			vals, errs := incrValues(reply, []string{counter})
			if len(errs) > 0 {
				t.Fatalf("call %d: %v", seq, errs)
			}
			return fmt.Sprint(vals[0])
		}
		want := func(step, got, want string) {
			t.Helper()
			if got != want {
				t.Fatalf("%s: got %q, want %q", step, got, want)
			}
		}
		record := func() (string, time.Duration) {
			t.Helper()
			v, err := b.rdb.Get(ctx, rec).Result()
			if errors.Is(err, redis.Nil) {
				return "", 0
			} else if err != nil {
				t.Fatal(err)
			}
			return v, b.rdb.TTL(ctx, rec).Val()
		}
		wantRecord := func(step, value string, minTTL, maxTTL time.Duration) {
			t.Helper()
			v, ttl := record()
			if v != value || (value != "" && (ttl < minTTL || ttl > maxTTL)) {
				t.Fatalf("%s: record %q with TTL %v, want %q with TTL in [%v, %v]", step, v, ttl, value, minTTL, maxTTL)
			}
		}

		want("first call", call(1, -3600, 0), "1")
		wantRecord("first call sets the TTL even when not asked", "1", 3590*time.Second, time.Hour)

		b.rdb.Expire(ctx, rec, 100*time.Second)
		want("next call, no refresh", call(2, -3600, 1), "2")
		wantRecord("a call that does not ask leaves the TTL", "2", 90*time.Second, 100*time.Second)
		want("next call, refresh", call(3, 3600, 2), "3")
		wantRecord("a call that asks sets the TTL", "3", 3590*time.Second, time.Hour)

		b.rdb.Expire(ctx, rec, 100*time.Second)
		want("resent call", call(3, 3600, 2), replyDuplicate)
		want("an older call", call(1, 3600, 2), replyDuplicate)
		want("a call ahead", call(5, 3600, 3), replyGap)
		wantRecord("skipped calls leave the record and its TTL", "3", 90*time.Second, 100*time.Second)

		b.rdb.Del(ctx, rec) // expired or evicted
		want("resent after the record was lost, below the floor", call(3, 3600, 3), replyDuplicate)
		want("ahead after the record was lost", call(5, 3600, 3), replyGap)
		wantRecord("a lost record is not brought back by a skipped call", "", 0, 0)
		want("next after the record was lost", call(4, -3600, 3), "4")
		wantRecord("the record is rebuilt with its TTL", "4", 3590*time.Second, time.Hour)

		// Arguments that make no sequence are refused before anything is written.
		for _, args := range [][]any{{5, "x", 4}, {5, 0, 4}, {"5.5", 3600, 4}, {-1, 3600, 4}, {5, 3600, "y"}} {
			err := incrWindows.Run(ctx, b.rdb, []string{rec, counter}, append(args, 1, exp)...).Err()
			if err == nil || !strings.Contains(err.Error(), "bad sequence") {
				t.Errorf("arguments %v: %v, want the call refused", args, err)
			}
		}
		wantRecord("refused calls leave the record", "4", 3590*time.Second, time.Hour)
		if v := b.rdb.Get(ctx, counter).Val(); v != "4" {
			t.Fatalf("counter %q after 4 applied calls, want 4", v)
		}
		if pttl := b.rdb.PTTL(ctx, counter).Val(); pttl <= 59*time.Minute || pttl > time.Hour {
			t.Fatalf("counter PTTL %v, want its window-aligned expiry an hour away", pttl)
		}
	})
}

// A user that may count the record up but not give it an expiry gets the call refused whole:
// the record stays as it was, so a later check of the record cannot take the call as applied.
func TestARefusedRecordExpiryWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "noexpire", "on", ">pw", "~*", "+@all", "-pexpire", "-expire").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "noexpire", Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	const rec, counter = "hourglass:seq:{nx}:t:0", "{nx}:count"
	exp := time.Now().Add(time.Hour).UnixMilli()
	for _, c := range []struct {
		name       string
		seq, floor int64
		before     string
	}{
		{"a first call (PEXPIRE)", 1, 0, ""},
		{"a call that asks for a refresh (PEXPIRE)", 3, 2, "2"},
	} {
		admin.Del(ctx, rec, counter)
		if c.before != "" {
			admin.Set(ctx, rec, c.before, time.Hour)
		}
		_, err := incrWindows.Run(ctx, rdb, []string{rec, counter}, c.seq, 3600, c.floor, 1, exp).Result()
		if err == nil || !Permanent(err) {
			t.Errorf("%s: got %v, want a permanent refusal", c.name, err)
		}
		got, _ := admin.Get(ctx, rec).Result()
		if n, _ := admin.Exists(ctx, counter).Result(); got != c.before || n != 0 {
			t.Errorf("%s: record %q (want %q), counter exists %d (want 0)", c.name, got, c.before, n)
		}
	}
}
