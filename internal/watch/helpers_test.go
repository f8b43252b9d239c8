package watch

import (
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/hourglass-dev/hourglass/store"
)

// The families the Watcher's tests watch, as the scanner's tests sweep them, and the zone they
// are cut in.

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

// key is f's key of the window of granularity g at at, in shanghai, with dims.
func key(t *testing.T, f *store.Family, g store.Granularity, at time.Time, dims ...string) string {
	t.Helper()
	k, err := f.Key(store.WindowAt(g, at, shanghai), dims)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
