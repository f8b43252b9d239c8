package scanner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// writeUnclaimed writes 20 hourly counters, 10 cache strings and 5 hashes, none of which the
// sweeps below claim, and returns how many keys that is.
func writeUnclaimed(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	ctx := t.Context()
	hour := time.Now().UTC().Format("2006010215")
	p := rdb.Pipeline()
	for i := range 20 {
		p.Set(ctx, fmt.Sprintf("hits:%s:%d", hour, i), i+1, 49*time.Hour)
	}
	for i := range 10 {
		p.Set(ctx, fmt.Sprintf("cache:page:%d", i), "<html>cached page</html>", time.Hour)
	}
	for i := range 5 {
		p.HSet(ctx, fmt.Sprintf("user:%d", i), "name", "x")
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return 35
}

// sweepAs takes a snapshot of srv as an ACL user allowed everything but the commands given.
func sweepAs(t *testing.T, srv *redistest.Server, without ...string) *snapshot.Snapshot {
	t.Helper()
	user := "u" + strings.Join(without, "_")
	args := []any{"ACL", "SETUSER", user, "on", ">pw", "~*", "+@all"}
	for _, c := range without {
		args = append(args, "-"+c)
	}
	if err := srv.Client(t).Do(t.Context(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
	defer rdb.Close()
	snap, err := Take(t.Context(), rdb, nil, Options{})
	if err != nil {
		t.Fatalf("sweep as %s: %v", user, err)
	}
	return snap
}

// groupKeys adds up the keys of the groups.
func groupKeys(groups []discover.Group) int64 {
	var n int64
	for _, g := range groups {
		n += g.Keys
	}
	return n
}

// TestUnclaimedRefused sweeps as users the server refuses one of the sampling's commands: every
// unclaimed key is still counted into its group by name, and the snapshot says what was refused.
// Without TYPE, or without GETRANGE (which would leave every string's value unread), no sample is
// kept and the groups are by name only; without MEMORY the samples are read and only the memory
// is unknown. A user allowed everything gets both.
func TestUnclaimedRefused(t *testing.T) {
	srv := redistest.Start(t)
	want := writeUnclaimed(t, srv.Client(t))
	counted := func(name string, u discover.Result) {
		t.Helper()
		if u.Keys != want || groupKeys(u.Groups) != want || len(u.Groups) != 3 {
			t.Errorf("%s: %d keys in %d groups (adding up to %d), want %d in 3", name, u.Keys, len(u.Groups), groupKeys(u.Groups), want)
		}
	}
	kindOf := func(u discover.Result, prefix string) discover.Kind {
		for _, g := range u.Groups {
			if strings.HasPrefix(g.Pattern, prefix) {
				return g.Kind
			}
		}
		return ""
	}

	for _, cmd := range []string{"type", "getrange"} {
		u := sweepAs(t, srv, cmd).Unclaimed
		counted("without "+cmd, u)
		note := strings.ToUpper(cmd) + " refused: NOPERM"
		if u.Bytes != nil || !strings.HasPrefix(u.BytesNote, note) || !strings.HasSuffix(u.BytesNote, "; groups are by name only") {
			t.Errorf("without %s: bytes %v, note %q; want null bytes and %q ... by name only", cmd, u.Bytes, u.BytesNote, note)
		}
		if u.Sampled != 0 || kindOf(u, "hits:") == discover.KindCounter {
			t.Errorf("without %s: %d samples kept, hits is a %s; want none kept", cmd, u.Sampled, kindOf(u, "hits:"))
		}
	}

	u := sweepAs(t, srv, "memory").Unclaimed
	counted("without memory", u)
	if u.Bytes != nil || !strings.HasPrefix(u.BytesNote, "MEMORY USAGE refused: NOPERM") || strings.Contains(u.BytesNote, "by name only") {
		t.Errorf("without MEMORY: bytes %v, note %q; want null bytes, MEMORY USAGE refused, samples kept", u.Bytes, u.BytesNote)
	}
	// Each group's first 8 keys are read: 8 + 8 + 5 at least.
	if u.Sampled < 21 || kindOf(u, "hits:") != discover.KindCounter {
		t.Errorf("without MEMORY: %d sampled, hits is a %q; want 21 or more sampled and a counter", u.Sampled, kindOf(u, "hits:"))
	}

	u = sweepAs(t, srv, "debug").Unclaimed // nothing the sampling needs is missing
	counted("allowed", u)
	if u.Bytes == nil || *u.Bytes <= 0 || strings.Contains(u.BytesNote, "refused") || kindOf(u, "hits:") != discover.KindCounter {
		t.Errorf("allowed: bytes %v, note %q, hits a %q", u.Bytes, u.BytesNote, kindOf(u, "hits:"))
	}
}

// TestUnclaimedReadsBullMQsMark: the sweep reads a meta hash's version field (discover.HashField)
// with its samples, so BullMQ's keys under a prefix of its user's are found; as a user refused
// HGET the other samples stand, and the prefix is left unfound, its keys in ordinary groups.
func TestUnclaimedReadsBullMQsMark(t *testing.T) {
	node := redistest.Interpreter(t, "node", "bullmq", "ioredis")
	srv := redistest.Start(t)
	want := writeUnclaimed(t, srv.Client(t))
	redistest.RunFixture(t, node, redistest.NodeDir(), nil, "bullmq.mjs", "redis://"+srv.Addr, "acme")
	found := func(u discover.Result) bool {
		for _, g := range u.Groups {
			if g.Kind == discover.KindJobQueue && g.Entry != nil && g.Entry.Prefix == "acme" && g.Confidence == discover.High {
				return true
			}
		}
		return false
	}
	u := sweepAs(t, srv, "debug").Unclaimed
	if !found(u) {
		t.Errorf("BullMQ under acme not found: %+v", u.Groups)
	}
	u = sweepAs(t, srv, "hget").Unclaimed
	if found(u) || u.Sampled < want || strings.Contains(u.BytesNote, "refused") {
		t.Errorf("without HGET: BullMQ found %v, %d sampled, note %q; want it unfound, the other samples read", found(u), u.Sampled, u.BytesNote)
	}
}
