package scanner

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
)

// A filter the server will not let the sweep read counts under Unreadable, on one line naming
// the command, the key and the cause; the other filters are read all the same. A RedisBloom
// filter on a server without the module (BF.INFO unknown) is counted the same way.
func TestBloomReadRefused(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := t.Context()
	st := store.New(admin, store.Options{})
	for _, key := range []string{"bf:a", "bf:b", "secret:c"} {
		b, err := st.Bloom(key, store.BloomOptions{Capacity: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.AddMany(ctx, "x", "y"); err != nil {
			t.Fatal(err)
		}
	}
	// The sweep's user may read bf:* but no key named secret:*, whose HGETALL is refused.
	if err := admin.Do(ctx, "ACL", "SETUSER", "sweeper", "on", "nopass", "~bf:*", "~{bf:*", "~{secret:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "sweeper", Password: "x"})
	t.Cleanup(func() { _ = rdb.Close() })

	s := New(rdb, nil, Options{})
	r := s.readBlooms(ctx, []bloomWant{{spec: 0, filters: []bloomFound{
		{key: "bf:a", typ: bloomHash}, {key: "secret:c", typ: bloomHash}, {key: "bf:b", typ: bloomHash}, {key: "bf:m", typ: bloomModule},
	}}})[0]
	if len(r.filters) != 2 || r.filters[0].Raw != "bf:a" || r.filters[1].Raw != "bf:b" || r.filters[0].Fill == nil {
		t.Fatalf("filters %+v", r.filters)
	}
	if len(r.unreadable) != 2 {
		t.Fatalf("unreadable %v", r.unreadable)
	}
	for why, n := range r.unreadable {
		ok := strings.HasPrefix(why, "HGETALL secret:c: NOPERM") || strings.HasPrefix(why, "BF.INFO bf:m: ERR unknown command")
		if !ok || n != 1 || strings.Contains(why, "\n") {
			t.Errorf("unreadable %q: %d, want one line naming the command, the key and the cause", why, n)
		}
	}
}

// A reply lost on the way (the connection cut after Redis ran the read) is a passing fault: the
// read is sent again, and the filter is read as if nothing happened.
func TestBloomReadRidesOutLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	b, err := store.New(direct, store.Options{}).Bloom("bf:a", store.BloomOptions{Capacity: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AddMany(t.Context(), "x", "y", "z"); err != nil {
		t.Fatal(err)
	}
	proxy := redistest.StartFaultProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr, MaxRetries: -1}) // no retries but the sweep's own
	t.Cleanup(func() { _ = rdb.Close() })
	want := readOne(t, New(direct, nil, Options{}))
	proxy.DropReplies(2) // the first two tries lost, the third answered
	got := readOne(t, New(rdb, nil, Options{}))
	if proxy.Cuts() != 2 || got.Fill == nil || *got.Fill != *want.Fill || *got.Added != 3 {
		t.Errorf("read through %d lost replies: %+v, want %+v", proxy.Cuts(), got, want)
	}
}

func readOne(t *testing.T, s *Sweep) snapshot.BloomFilter {
	t.Helper()
	r := s.readBlooms(t.Context(), []bloomWant{{spec: 0, filters: []bloomFound{{key: "bf:a", typ: bloomHash}}}})[0]
	if len(r.filters) != 1 {
		t.Fatalf("read %+v", r)
	}
	return r.filters[0]
}
