package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// repairKey checks a counter key again and gives it its expiry (or deletes it) in one script.
var repairKey = luaScript("repair_key")

// RepairKey is a counter key a sweep found with no TTL, and what repairing it means.
type RepairKey struct {
	Key      string
	ExpireAt time.Time // the window's end plus retention; EXPIREAT takes whole seconds
	Delete   bool      // delete it instead: that instant is past
}

// RepairOutcome is what the repair script found and did to a key.
type RepairOutcome string

// What became of a key: given its expiry, deleted, or left as it now is, and why.
const (
	RepairExpired    RepairOutcome = "expired"
	RepairDeleted    RepairOutcome = "deleted"
	RepairGone       RepairOutcome = "gone"        // expired or deleted since the sweep
	RepairHasTTL     RepairOutcome = "has_ttl"     // given a TTL since the sweep
	RepairWrongType  RepairOutcome = "wrong_type"  // now holds another type
	RepairNotInteger RepairOutcome = "not_integer" // now holds a string that is not a 64-bit integer
)

// RepairKeys repairs keys in one pipeline. Each key is checked again in the same script that writes
// it. Only a string holding a 64-bit integer (what a counter writer leaves), still without a TTL,
// gets EXPIREAT or DEL. So a key rewritten, given a TTL or deleted since the sweep is left as it
// now is, and its outcome says why. The script goes as EVAL, its text with each call. So no
// NOSCRIPT can come back after a restart or a failover, for a few hundred bytes a key.
//
// The outcome of key i is outcomes[i]; it is "" when the key's call failed. err is the first
// failure, a *CommandError naming the key and the user. The outcomes of the others still stand.
func RepairKeys(ctx context.Context, rdb redis.UniversalClient, keys []RepairKey) (outcomes []RepairOutcome, err error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(keys))
	for i, k := range keys {
		action := "expire"
		if k.Delete {
			action = "delete"
		}
		cmds[i] = repairKey.Eval(ctx, pipe, []string{k.Key}, action, k.ExpireAt.Unix())
	}
	_, _ = pipe.Exec(ctx) // each call's reply is read below
	outcomes = make([]RepairOutcome, len(keys))
	for i, c := range cmds {
		reply, cerr := c.Text()
		switch o := RepairOutcome(reply); {
		case cerr != nil:
		case o == RepairExpired || o == RepairDeleted || o == RepairGone || o == RepairHasTTL || o == RepairWrongType || o == RepairNotInteger:
			outcomes[i] = o
			continue
		default:
			cerr = fmt.Errorf("unexpected reply %q", reply)
		}
		if err == nil {
			err = &CommandError{Command: "repair script (EVAL)", Key: keys[i].Key, User: UserOf(rdb), Err: cerr}
		}
	}
	return outcomes, err
}
