package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestRepairKeysChecksAgainWhereItWrites runs the repair script on a real redis-server against
// keys in every state a sweep can have found them in, then changed: only a string holding a 64-bit
// integer with no TTL gets its expiry (or is deleted); text, a number past the int64 range, a key
// given a TTL, one of another type and one gone are left as they are, each with its reason.
func TestRepairKeysChecksAgainWhereItWrites(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	at := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	strs := map[string]string{
		"c:int": "42", "c:neg": "-7", "c:zero": "0", "c:min": "-9223372036854775808", "c:max": "9223372036854775807",
		"c:text": "hello", "c:float": "1.5", "c:lead0": "007", "c:minus0": "-0", "c:over": "9223372036854775808",
		"c:under": "-9223372036854775809", "c:space": " 5", "c:empty": "", "c:del-int": "9", "c:del-text": "n/a",
	}
	for k, v := range strs {
		rdb.Set(ctx, k, v, 0)
	}
	rdb.Set(ctx, "c:ttl", "5", time.Hour)
	rdb.SAdd(ctx, "c:set", "x")
	want := map[string]RepairOutcome{
		"c:int": RepairExpired, "c:neg": RepairExpired, "c:zero": RepairExpired, "c:min": RepairExpired, "c:max": RepairExpired,
		"c:text": RepairNotInteger, "c:float": RepairNotInteger, "c:lead0": RepairNotInteger, "c:minus0": RepairNotInteger,
		"c:over": RepairNotInteger, "c:under": RepairNotInteger, "c:space": RepairNotInteger, "c:empty": RepairNotInteger,
		"c:del-int": RepairDeleted, "c:del-text": RepairNotInteger,
		"c:ttl": RepairHasTTL, "c:set": RepairWrongType, "c:none": RepairGone,
	}
	var keys []RepairKey
	for k := range want {
		keys = append(keys, RepairKey{Key: k, ExpireAt: at, Delete: strings.HasPrefix(k, "c:del-")})
	}
	got, err := RepairKeys(ctx, rdb, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if got[i] != want[k.Key] {
			t.Errorf("%s: %q, want %q", k.Key, got[i], want[k.Key])
		}
		ttl := rdb.TTL(ctx, k.Key).Val()
		switch want[k.Key] {
		case RepairExpired:
			if et := rdb.ExpireTime(ctx, k.Key).Val(); et != time.Duration(at.Unix())*time.Second {
				t.Errorf("%s expires at %v, want %v", k.Key, et, at.Unix())
			}
		case RepairNotInteger, RepairWrongType:
			if ttl != -1 || rdb.Exists(ctx, k.Key).Val() != 1 {
				t.Errorf("%s was touched: TTL %v", k.Key, ttl)
			}
		}
		if v, ok := strs[k.Key]; ok && want[k.Key] != RepairDeleted && rdb.Get(ctx, k.Key).Val() != v {
			t.Errorf("%s now holds %q, want %q", k.Key, rdb.Get(ctx, k.Key).Val(), v)
		}
	}
	if rdb.Exists(ctx, "c:del-int").Val() != 0 || rdb.TTL(ctx, "c:ttl").Val() > time.Hour {
		t.Error("the integer to delete is still there, or the key with a TTL had it changed")
	}
}

// TestRepairKeysNamesARefusal: a user who may not run scripts gets one error naming the command,
// the key and the user, which is permanent.
func TestRepairKeysNamesARefusal(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read", "+ping", "+hello").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "c:1", "3", 0)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	out, err := RepairKeys(ctx, rdb, []RepairKey{{Key: "c:1", ExpireAt: time.Now().Add(time.Hour)}})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Key != "c:1" || ce.User != "reader" || !Permanent(err) || !strings.Contains(err.Error(), "NOPERM") || out[0] != "" {
		t.Fatalf("got %v (%#v), outcomes %q; want a permanent NOPERM naming c:1 and reader", err, ce, out)
	}
	if admin.TTL(ctx, "c:1").Val() != -1 {
		t.Error("the refused repair wrote")
	}
}
