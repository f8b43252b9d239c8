package scanner

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// zoneFamily is a family of hour (and day) windows cut in loc.
func zoneFamily(t *testing.T, name string, loc *time.Location) *store.Family {
	t.Helper()
	f, err := store.NewFamily(store.FamilySpec{Name: name, Pattern: name + ":<site>:<window>", Location: loc,
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour, DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// starts yields the starts of hour windows named by labels (yyyyMMddHH), as a family cut in loc
// reads them: a key's name is read in the family's zone, whoever wrote it.
func starts(t *testing.T, loc *time.Location, labels ...string) func(func(int64) bool) {
	t.Helper()
	var out []int64
	for _, l := range labels {
		w, err := time.ParseInLocation("2006010215", l, loc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w.Unix())
	}
	return slices.Values(out)
}

// The data contradicts the zone configured when the current hour has no key while the newest
// hour window is the current one at another offset in use; not when the current hour is written,
// when the family is dead, or just after a boundary when the previous hour is still the newest.
func TestZoneCheck(t *testing.T) {
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 26, hh, mm, 0, 0, time.UTC) }
	sh := zoneFamily(t, "pv", shanghai)
	utc := zoneFamily(t, "pv", time.UTC)
	for _, c := range []struct {
		name   string
		f      *store.Family
		now    time.Time
		hours  func(func(int64) bool)
		hourly int // want: Hours, 0 for no mismatch
		data   string
	}{
		{"UTC data read in Shanghai", sh, at(12, 34), starts(t, shanghai, "2026112610", "2026112611", "2026112612"), -8, "UTC"},
		{"Shanghai data read in UTC", utc, at(12, 34), starts(t, time.UTC, "2026112620"), 8, "+08:00"},
		{"agrees", sh, at(12, 34), starts(t, shanghai, "2026112619", "2026112620"), 0, ""},
		{"current present beside others", utc, at(12, 34), starts(t, time.UTC, "2026112612", "2026112620"), 0, ""},
		{"previous hour newest just after the boundary", utc, at(13, 10), starts(t, time.UTC, "2026112612"), 0, ""},
		{"previous hour newest past the grace", utc, at(13, 40), starts(t, time.UTC, "2026112612"), -1, "-01:00"},
		{"dead: nothing in the last day", utc, at(12, 34), starts(t, time.UTC, "2026112410"), 0, ""},
		{"newest past the zones in use", utc, at(12, 34), starts(t, time.UTC, "2026112712"), 0, ""},
		{"no hour window", utc, at(12, 34), starts(t, time.UTC), 0, ""},
	} {
		z := zoneCheck(c.f, c.f.Zone(nil), c.now, c.hours, nil)
		switch {
		case c.hourly == 0 && z != nil:
			t.Errorf("%s: %+v, want none", c.name, z)
		case c.hourly != 0 && (z == nil || z.Hours != c.hourly || z.Data != c.data):
			t.Errorf("%s: %+v, want %d hours, %s", c.name, z, c.hourly, c.data)
		}
	}
	z := zoneCheck(sh, shanghai, at(12, 34), starts(t, shanghai, "2026112612"), nil)
	if want := `windows look cut in UTC+00:00, not in Asia/Shanghai (+08:00): the newest hour window 2026112612 is the current hour at UTC+00:00; set timezone = "UTC"`; z == nil || z.Message != want {
		t.Errorf("message %+v, want %s", z, want)
	}
	// This machine's zone is named when it is the data's.
	if z := zoneCheck(utc, time.UTC, at(12, 34), starts(t, time.UTC, "2026112620"), shanghai); z == nil || z.Data != "Asia/Shanghai" {
		t.Errorf("with the host in Shanghai: %+v", z)
	}
}

// A complete sweep of counters and uniques written in UTC, configured in Asia/Shanghai, carries
// the mismatch on each family, in the JSON and in the warnings; a sweep under way does not.
func TestSnapshotZoneMismatch(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := t.Context()
	now := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	mr.SetTime(now)
	pv, good := zoneFamily(t, "pv", shanghai), zoneFamily(t, "ok", time.UTC)
	uv, err := store.NewFamily(store.FamilySpec{Name: "uv", Pattern: "uv:<page>:<window>", Location: shanghai,
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pv:a:2026112612", "pv:a:2026112611", "pv:a:20261126", "ok:a:2026112612"} {
		if err := rdb.Set(ctx, k, 5, 48*time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.PFAdd(ctx, "uv:home:2026112612", "u1", "u2").Err(); err != nil {
		t.Fatal(err)
	}
	opt := Options{Location: time.UTC, Now: func() time.Time { return now },
		Structures: Structures{Uniques: []UniqueSpec{{Kind: store.HyperLogLog, Family: uv}}}}
	snap, err := Take(ctx, rdb, []*store.Family{pv, good}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if z := snap.Family("pv").ZoneMismatch; z == nil || z.Data != "UTC" || z.Hours != -8 || z.Newest != "2026112612" {
		t.Errorf("pv: %+v", z)
	}
	if z := snap.Family("ok").ZoneMismatch; z != nil {
		t.Errorf("ok: %+v", z)
	}
	if len(snap.Uniques) != 1 || snap.Uniques[0].ZoneMismatch == nil || snap.Uniques[0].ZoneMismatch.Data != "UTC" {
		t.Errorf("uniques: %+v", snap.Uniques)
	}
	joined := strings.Join(snap.Warnings, "\n")
	if !strings.Contains(joined, `counter family pv: windows look cut in UTC+00:00, not in Asia/Shanghai (+08:00)`) ||
		!strings.Contains(joined, `unique family uv: windows look cut in UTC+00:00`) || len(snap.Warnings) != 2 {
		t.Errorf("warnings %q", snap.Warnings)
	}
	b, _ := json.Marshal(snap.Family("pv"))
	if !strings.Contains(string(b), `"zone_mismatch":{"configured":"Asia/Shanghai (+08:00)","data":"UTC","offset":"+00:00","newest_window":"2026112612","hours":-8,`) {
		t.Errorf("JSON %s", b)
	}
	if b, _ := json.Marshal(snap.Family("ok")); strings.Contains(string(b), "zone_mismatch") {
		t.Errorf("JSON of a family that agrees: %s", b)
	}

	// A sweep under way may not have met the current hour yet: it says nothing.
	s := New(rdb, []*store.Family{pv, good}, opt)
	a := NewAggregator([]*store.Family{pv, good}, opt)
	if err := s.Run(ctx, a.Add); err != nil {
		t.Fatal(err)
	}
	if p := a.Snapshot(false); p.Family("pv").Keys != 3 || p.Family("pv").ZoneMismatch != nil {
		t.Errorf("partial: %+v", p.Family("pv").ZoneMismatch)
	}
}

// On a real server, a sweep reading windows in America/Los_Angeles, on a machine whose zone is
// Asia/Shanghai, proposes for unclaimed counters written in UTC the zone UTC, and for those
// written at UTC+8 the machine's zone by name; with no machine zone known, "+08:00".
func TestDiscoverZoneOnARealServer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	redistest.ClearOfHourEnd(t, 30*time.Second)
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	pipe := rdb.Pipeline()
	for _, site := range []string{"a", "b", "c"} {
		for h := range 3 {
			pipe.Set(ctx, "pv:"+site+":"+now.UTC().Add(-time.Duration(h)*time.Hour).Format("2006010215"), 5, 48*time.Hour)
			pipe.Set(ctx, "cn:"+site+":"+now.UTC().Add(8*time.Hour-time.Duration(h)*time.Hour).Format("2006010215"), 5, 48*time.Hour)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host *time.Location
		cn   string
	}{{shanghai, "Asia/Shanghai"}, {nil, "+08:00"}, {la, "+08:00"}} {
		snap, err := Take(ctx, rdb, nil, Options{Location: la, HostZone: c.host})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, g := range snap.Unclaimed.Groups {
			if g.Entry != nil {
				got[g.Entry.Name] = g.Entry.Timezone
			}
		}
		if got["pv"] != "UTC" || got["cn"] != c.cn || len(got) != 2 {
			t.Errorf("host %v: zones %v, want pv UTC, cn %s", c.host, got, c.cn)
		}
	}
}
