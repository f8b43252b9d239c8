package store

// Releasing a lock whose holder is gone: the console's write on one lock, beside the lock's own
// script (lock.go), so the lock's key stays ours alone to write.

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

var lockReleaseStale = luaScript("lock_release_stale")

// Why ReleaseStaleLock left a lock as it is.
var (
	// ErrLockGone: the key is gone (released or expired) since it was read.
	ErrLockGone = errors.New("the lock is gone")
	// ErrLockHasTTL: the lock has a TTL now, so it expires by itself (and its holder may be alive).
	ErrLockHasTTL = errors.New("the lock has a TTL now")
	// ErrLockNewHolder: another holder has the lock now.
	ErrLockNewHolder = errors.New("another holder has the lock now")
)

// ReleaseStaleLock deletes the lock at key, in one script, only if holder still holds it and it has
// no TTL. (PTTL -1: a lock whose TTL is gone is held until someone deletes it.) It returns true
// when the lock was released. false comes with an error. ErrLockGone, ErrLockHasTTL or
// ErrLockNewHolder (errors.Is) mean the lock changed since it was read, so it was left. A
// *CommandError means Redis refused.
func ReleaseStaleLock(ctx context.Context, rdb redis.UniversalClient, key, holder string) (bool, error) {
	reply, err := lockReleaseStale.Run(ctx, rdb, []string{key}, holder).Text()
	if err != nil {
		return false, &CommandError{Command: "lock release script (EVALSHA)", Key: key, User: UserOf(rdb), Err: err}
	}
	why := map[string]error{"gone": ErrLockGone, "has_ttl": ErrLockHasTTL, "other_holder": ErrLockNewHolder}[reply]
	switch {
	case reply == "released":
		return true, nil
	case why != nil:
		return false, fmt.Errorf("store: lock %s left as it is: %w", QuoteName(key), why)
	}
	return false, &CommandError{Command: "lock release script (EVALSHA)", Key: key, User: UserOf(rdb), Err: fmt.Errorf("unexpected reply %q", reply)}
}

// quoteMax is the most of a name (a key, a task) an action's line quotes.
const quoteMax = 64

// QuoteName quotes s for the line an action or a write answers with, Go-escaped (control and format characters and bytes
// that are not UTF-8 written as escapes), cut to quoteMax bytes with its length said.
func QuoteName(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:quoteMax]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
