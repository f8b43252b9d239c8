package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

var (
	lockRelease = luaScript("lock_release")
	lockExtend  = luaScript("lock_extend")
)

// Lock is a held lock: its key and the random token that proves who holds it.
type Lock struct {
	s     *Store
	Key   string
	Token string
}

// Acquire takes the lock at key for ttl with one SET NX PX: the key never exists without its
// expiry, unlike a SETNX then PEXPIRE, which leaves a lock held forever when the process dies
// between the two. ok is false when another holds it.
func (s *Store) Acquire(ctx context.Context, key string, ttl time.Duration) (l *Lock, ok bool, err error) {
	if ttl < time.Millisecond {
		return nil, false, fmt.Errorf("store: acquire %s: a lock needs a TTL of at least 1ms, got %v", key, ttl)
	}
	// The token is random and says when it was taken ("<unix ms>-<hex>"), so a console can show a
	// lock's age.
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := fmt.Sprintf("%d-%s", s.serverNow(ctx).UnixMilli(), hex.EncodeToString(b[:]))
	ok, err = s.rdb.SetNX(ctx, key, token, ttl).Result()
	if err != nil {
		return nil, false, fmt.Errorf("store: acquire %s: %w", key, err)
	}
	if !ok {
		return nil, false, nil
	}
	return &Lock{s: s, Key: key, Token: token}, true, nil
}

// Release frees the lock if this token still holds it; it reports false when the lock had
// expired (and perhaps been taken by another, whose lock it leaves alone).
func (l *Lock) Release(ctx context.Context) (bool, error) {
	n, err := lockRelease.Run(ctx, l.s.rdb, []string{l.Key}, l.Token).Int64()
	if err != nil {
		return false, fmt.Errorf("store: release %s: %w", l.Key, err)
	}
	return n == 1, nil
}

// Extend gives the lock ttl more from now if this token still holds it.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, fmt.Errorf("store: extend %s: a TTL of at least 1ms, got %v", l.Key, ttl)
	}
	n, err := lockExtend.Run(ctx, l.s.rdb, []string{l.Key}, l.Token, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("store: extend %s: %w", l.Key, err)
	}
	return n == 1, nil
}

// LockTokenTime reads when a lock was taken from the token hourglass's locks hold ("<unix ms>-
// <hex>", Unix milliseconds); false for a token another library wrote.
func LockTokenTime(token string) (int64, bool) {
	ms, _, ok := strings.Cut(token, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, err == nil && n > 1e12
}
