package store

import (
	"context"
	"testing"
	"time"
	_ "time/tzdata" // tests cut windows in Asia/Shanghai whatever the machine has

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// shanghai has no DST, so hour and day boundaries are fixed offsets from UTC.
var shanghai = mustLoad("Asia/Shanghai")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// backend is a Redis a test runs against.
type backend struct {
	name string
	rdb  redis.UniversalClient
	mini *miniredis.Miniredis // nil for a real redis-server
	real *redistest.Server    // nil for miniredis
}

// backends returns miniredis and a real redis-server, each new for this test.
func backends(t *testing.T) []backend {
	t.Helper()
	m := miniredis.RunT(t)
	mc := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = mc.Close() })
	srv := redistest.Start(t)
	return []backend{
		{name: "miniredis", rdb: mc, mini: m},
		{name: "redis-server", rdb: srv.Client(t), real: srv},
	}
}

// eachBackend runs fn as a subtest against every backend.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}

func newStore(t *testing.T, rdb redis.UniversalClient, opt Options) *Store {
	t.Helper()
	if opt.Location == nil {
		opt.Location = shanghai
	}
	s := New(rdb, opt)
	if err := s.Init(t.Context()); err != nil {
		t.Fatalf("init: %v", err)
	}
	return s
}

func mustFamily(t testing.TB, spec FamilySpec) *Family {
	t.Helper()
	f, err := NewFamily(spec)
	if err != nil {
		t.Fatalf("family %s: %v", spec.Name, err)
	}
	return f
}

// adRevenue is an ad revenue family: hour and day windows, hash-tagged dims.
func adRevenue(t testing.TB) *Family {
	return mustFamily(t, FamilySpec{
		Name: "ad_revenue", Pattern: "{<channel>:<ad>}:<window>",
		HourFormat: "yyyyMMddHH", DayFormat: "yyyyMMdd",
		HourRetention: 48 * time.Hour, DayRetention: 30 * 24 * time.Hour,
	})
}

// flow is a traffic counter family: hour windows only.
func flow(t testing.TB) *Family {
	return mustFamily(t, FamilySpec{
		Name: "flow", Pattern: "flow:count:<app>:<device>:<ip>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour,
	})
}

func getInt(t *testing.T, rdb redis.UniversalClient, key string) int64 {
	t.Helper()
	n, err := rdb.Get(context.Background(), key).Int64()
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return n
}

// luaSource is the text of the script in lua/<name>.lua, for a test that loads it by hand.
func luaSource(t *testing.T, name string) string {
	t.Helper()
	src, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}
