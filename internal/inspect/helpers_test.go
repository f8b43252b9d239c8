package inspect

import (
	"context"
	"testing"
	"time"
	_ "time/tzdata" // tests cut windows in Asia/Shanghai whatever the machine has

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/store"
)

// drilled is a Watcher with its drill-down, as the console wires them: the tests poll the one
// and read through the other.
type drilled struct {
	*watch.Watcher
	*Inspector
}

// charged is a real Watcher that also counts what the drill-down charges to its budget.
type charged struct {
	watched
	n int64
}

func (c *charged) Charge(n int) {
	c.n += int64(n)
	c.watched.Charge(n)
}

func (c *charged) Pace(ctx context.Context, n int) error {
	c.n += int64(n)
	return c.watched.Pace(ctx, n)
}

// watching is a Watcher of families on rdb and its drill-down.
func watching(rdb redis.UniversalClient, families []*store.Family, opt scanner.Options) drilled {
	w := watch.New(rdb, families, opt)
	return drilled{Watcher: w, Inspector: New(w)}
}

var shanghai = func() *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		panic(err)
	}
	return loc
}()

func families(t testing.TB) []*store.Family {
	t.Helper()
	var fams []*store.Family
	for _, spec := range []store.FamilySpec{
		{Name: "flow", Pattern: "flow:count:<app>:<device>:<ip>:<window>", HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour},
		{Name: "ad_revenue", Pattern: "{<channel>:<ad>}:<window>", HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour,
			DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour},
	} {
		f, err := store.NewFamily(spec)
		if err != nil {
			t.Fatal(err)
		}
		fams = append(fams, f)
	}
	return fams
}

func pattern(t *testing.T, text string) *store.Pattern {
	t.Helper()
	p, err := store.ParseKeyPattern(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func globs(t *testing.T, list ...string) store.Globs {
	t.Helper()
	g, err := store.ParseGlobs(list)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// key is f's key for dims in the window of granularity g at at, in Shanghai.
func key(t *testing.T, f *store.Family, g store.Granularity, at time.Time, dims ...string) string {
	t.Helper()
	k, err := f.Key(store.WindowAt(g, at, shanghai), dims)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
