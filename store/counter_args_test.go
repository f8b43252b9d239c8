package store

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// TestCounterScriptChecksEveryArgument: a call with a delta or an expiry that is not a number is
// refused whole before anything is written, naming the key the argument is for, wherever in
// the call it is; the same call with good arguments writes every key.
func TestCounterScriptChecksEveryArgument(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		const rec = "hourglass:seq:{ar}:t:0"
		keys := []string{rec, "{ar}:a", "{ar}:b", "{ar}:c"}
		exp := time.Now().Add(time.Hour).UnixMilli()
		good := []any{1, 3600, 0, 1, exp, 2, exp, 3, exp}
		for _, c := range []struct {
			name string
			at   int // index in good of the bad argument
			key  string
		}{
			{"the first key's delta", 3, "{ar}:a"},
			{"the first key's expiry", 4, "{ar}:a"},
			{"the second key's delta", 5, "{ar}:b"},
			{"the last key's expiry", 8, "{ar}:c"},
		} {
			args := append([]any(nil), good...)
			args[c.at] = "x"
			err := incrWindows.Run(ctx, b.rdb, keys, args...).Err()
			if err == nil || !strings.Contains(err.Error(), "bad delta or expiry for "+c.key) {
				t.Errorf("%s bad: %v, want the call refused naming %s", c.name, err, c.key)
			}
			if n := b.rdb.Exists(ctx, keys...).Val(); n != 0 {
				t.Fatalf("%s bad: %d of the call's keys written, want none", c.name, n)
			}
		}
		reply, err := incrWindows.Run(ctx, b.rdb, keys, good...).Result()
		if err != nil {
			t.Fatal(err)
		}
		vals, errs := incrValues(reply, keys[1:])
		if len(errs) > 0 || vals[0] != 1 || vals[1] != 2 || vals[2] != 3 {
			t.Errorf("good call: values %v, errors %v; want 1, 2, 3", vals, errs)
		}
		for _, k := range keys[1:] {
			if ttl := b.rdb.PTTL(ctx, k).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
				t.Errorf("%s: PTTL %v, want its expiry an hour away", k, ttl)
			}
		}
	})
}

// TestARefusedKeyExpiryIsThatKeysError: a user that may INCRBY but not PEXPIREAT has each key
// counted and each key's reply the refusal of its expiry, which the writer reports as that
// key's error; a key of the wrong type beside them is reported as its own and gets no expiry.
func TestARefusedKeyExpiryIsThatKeysError(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", "nopexpireat", "on", ">pw", "~*", "+@all", "-pexpireat").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "nopexpireat", Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	keys := []string{"{px}:count", "{px}:list"}
	admin.RPush(ctx, keys[1], "x")
	exp := time.Now().Add(time.Hour).UnixMilli()
	reply, err := incrWindows.Run(ctx, rdb, append([]string{"hourglass:seq:{px}:t:0"}, keys...), 0, 0, 0, 5, exp, 5, exp).Result()
	if err != nil {
		t.Fatal(err)
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) != 2 {
		t.Fatalf("reply %#v, want one a key", reply)
	}
	if s, ok := arr[0].(string); !ok || !strings.HasPrefix(s, "PEXPIREAT: ") || !strings.Contains(s, "run this command") {
		t.Errorf("the counter's reply %#v, want its PEXPIREAT's refusal", arr[0])
	}
	if s, ok := arr[1].(string); !ok || !strings.HasPrefix(s, "WRONGTYPE") {
		t.Errorf("the list's reply %#v, want WRONGTYPE", arr[1])
	}
	if v := admin.Get(ctx, keys[0]).Val(); v != "5" {
		t.Errorf("counter %q, want 5: the INCRBY stands", v)
	}
	if ttl := admin.PTTL(ctx, keys[1]).Val(); ttl != -time.Nanosecond && ttl != -time.Millisecond {
		t.Errorf("the list's PTTL %v, want none: a key INCRBY refused is left as it was", ttl)
	}
	_, errs := incrValues(reply, keys)
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), keys[0]) || !strings.Contains(errs[1].Error(), keys[1]) {
		t.Errorf("errors %v, want one for each key, naming it", errs)
	}
}
