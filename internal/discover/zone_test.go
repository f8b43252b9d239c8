package discover

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// The newest window read as UTC, against the server's clock, gives the offset its writers cut
// windows at: the host's zone by name when it is at that offset, UTC for none, else the offset;
// just after a boundary the previous window may still be the newest; a group whose newest window
// is the current one in no zone in use proposes none.
func TestInferZone(t *testing.T) {
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 26, hh, mm, 0, 0, time.UTC) }
	shanghai, newYork, kolkata := mustZone(t, "Asia/Shanghai"), mustZone(t, "America/New_York"), mustZone(t, "Asia/Kolkata")
	for _, c := range []struct {
		name  string
		class class
		label string
		now   time.Time
		host  *time.Location
		ok    bool
		zone  string
		off   time.Duration
		note  string
	}{
		{"UTC", clHour, "2026112612", at(12, 34), nil, true, "UTC", 0,
			"zone: newest hour window 2026112612 is the current hour at UTC+00:00 (server time 12:34 UTC)"},
		{"UTC on a Shanghai host", clHour, "2026112612", at(12, 34), shanghai, true, "UTC", 0, ""},
		{"UTC+8 on a Shanghai host", clHour, "2026112620", at(12, 34), shanghai, true, "Asia/Shanghai", 8 * time.Hour,
			"zone: newest hour window 2026112620 is the current hour at UTC+08:00 (server time 12:34 UTC)"},
		{"UTC+8 on a New York host", clHour, "2026112620", at(12, 34), newYork, true, "+08:00", 8 * time.Hour, ""},
		{"UTC+8 past midnight", clHour, "2026112703", at(19, 59), nil, true, "+08:00", 8 * time.Hour, ""},
		{"New York's, on its host", clHour, "2026112607", at(12, 34), newYork, true, "America/New_York", -5 * time.Hour, ""},
		{"previous hour just after the boundary", clHour, "2026112612", at(13, 5), nil, true, "UTC", 0,
			"zone: newest hour window 2026112612 is the previous hour at UTC+00:00, 5m after the boundary (server time 13:05 UTC): the current hour has no key yet"},
		{"previous hour of the host's", clHour, "2026112620", at(13, 10), shanghai, true, "Asia/Shanghai", 8 * time.Hour, ""},
		{"previous hour past the grace is another zone", clHour, "2026112612", at(13, 45), nil, true, "-01:00", -time.Hour, ""},
		{"half hour of the host's", clHour, "2026112618", at(12, 34), kolkata, true, "Asia/Kolkata", 5*time.Hour + 30*time.Minute, ""},
		{"half hour with no host: the whole hour", clHour, "2026112618", at(12, 34), nil, true, "+06:00", 6 * time.Hour, ""},
		{"UTC+14", clHour, "2026112702", at(12, 34), nil, true, "+14:00", 14 * time.Hour, ""},
		{"UTC-12", clHour, "2026112600", at(12, 34), nil, true, "-12:00", -12 * time.Hour, ""},
		{"dead", clHour, "2026112001", at(12, 34), shanghai, false, "", 0,
			"zone: not known: newest hour window 2026112001 is older than the current hour in every zone from UTC-12:00 to UTC+14:00 (server time 2026-11-26 12:34 UTC): these keys are no longer written"},
		{"just past UTC-12", clHour, "2026112522", at(12, 34), nil, false, "", 0, "no longer written"},
		{"future", clHour, "2026112812", at(12, 34), nil, false, "", 0, "lies ahead of the current hour in every zone"},
		{"just past UTC+14", clHour, "2026112703", at(12, 34), nil, false, "", 0, "lies ahead"},
		{"day in UTC", clDay, "20261126", at(12, 34), nil, true, "UTC", 0,
			"zone: newest day window 20261126 is the current day at offsets from UTC-12:00 to UTC+11:15 (server time 12:34 UTC): a day tells the zone only that far"},
		{"day on a Shanghai host", clDay, "20261127", at(18, 0), shanghai, true, "Asia/Shanghai", 8 * time.Hour, "from UTC+06:00 to UTC+14:00"},
		{"day behind the host's", clDay, "20261126", at(18, 0), shanghai, true, "UTC", 0, ""},
		{"dead day", clDayDash, "2026-11-20", at(12, 34), nil, false, "", 0, "newest day window 2026-11-20 is older than the current day"},
		{"no clock", clHour, "2026112612", time.Time{}, nil, false, "", 0, ""},
	} {
		z := inferZone(c.class, c.label, c.now, c.host)
		if z.ok != c.ok || z.name != c.zone || z.offset != c.off {
			t.Errorf("%s: ok %v zone %q offset %v, want %v %q %v (%s)", c.name, z.ok, z.name, z.offset, c.ok, c.zone, c.off, z.note)
		}
		if c.note != "" && !strings.Contains(z.note, c.note) {
			t.Errorf("%s: note %q, want %q", c.name, z.note, c.note)
		}
	}
}

// OffsetText writes what the config reads back.
func TestOffsetText(t *testing.T) {
	for o, want := range map[time.Duration]string{0: "+00:00", 8 * time.Hour: "+08:00", -(5*time.Hour + 30*time.Minute): "-05:30", 5*time.Hour + 45*time.Minute: "+05:45"} {
		if got := OffsetText(o); got != want {
			t.Errorf("OffsetText(%v) = %q, want %q", o, got, want)
		}
	}
}

// windowedCounters adds, for each of four sites, hour keys for the five hours up to the one at
// last, cut at offset off (and day keys when days), expiring 48h after their window's end in that
// zone, read at now.
func windowedCounters(g *Groups, prefix string, off time.Duration, last, now time.Time, days bool) {
	var names []string
	wall := last.UTC().Add(off)
	for _, site := range []string{"a", "b", "c", "d"} {
		for h := range 5 {
			names = append(names, fmt.Sprintf("%s:%s:%s", prefix, site, wall.Add(-time.Duration(h)*time.Hour).Format("2006010215")))
		}
		if days {
			names = append(names, fmt.Sprintf("%s:%s:%s", prefix, site, wall.Format("20060102")))
		}
	}
	for _, n := range g.Add(names) {
		label := n[strings.LastIndexByte(n, ':')+1:]
		layout := "2006010215"
		length := time.Hour
		if len(label) == 8 {
			layout, length = "20060102", 24*time.Hour
		}
		start, _ := time.ParseInLocation(layout, label, time.FixedZone("w", int(off/time.Second)))
		ttl := start.Add(length + 48*time.Hour).Sub(now)
		g.AddSample(Sample{Name: n, Type: "string", TTL: ttl, Bytes: 64, Now: now, Value: "17", Len: 2})
	}
}

// Discover proposes each windowed group the zone its data shows, whatever zone it reads windows
// in, with its retention read in that zone; the document's top-level timezone is the zone most
// groups show, and a group at another keeps its own line.
func TestGroupsZone(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	g := New(Options{Location: mustZone(t, "Asia/Shanghai"), Host: mustZone(t, "Asia/Shanghai")})
	windowedCounters(g, "pv", 0, now, now, false)
	windowedCounters(g, "clicks", 0, now, now, false)
	windowedCounters(g, "cn", 8*time.Hour, now, now, false)
	windowedCounters(g, "old", 0, now.Add(-72*time.Hour), now, false)
	r := g.Result()
	byPattern := map[string]Group{}
	for _, gr := range r.Groups {
		byPattern[gr.Pattern] = gr
	}
	for pattern, want := range map[string]string{"pv:<name>:<window>": "UTC", "clicks:<name>:<window>": "UTC", "cn:<name>:<window>": "Asia/Shanghai", "old:<name>:<window>": ""} {
		gr, ok := byPattern[pattern]
		if !ok || gr.Entry == nil {
			t.Fatalf("no entry for %s in %+v", pattern, r.Groups)
		}
		if gr.Entry.Timezone != want {
			t.Errorf("%s: timezone %q, want %q; evidence %q", pattern, gr.Entry.Timezone, want, gr.Evidence)
		}
		if want != "" && gr.Entry.HourRetention != "2d" {
			t.Errorf("%s: retention %q, want 2d read in its own zone; evidence %q", pattern, gr.Entry.HourRetention, gr.Evidence)
		}
	}
	if ev := strings.Join(byPattern["pv:<name>:<window>"].Evidence, "\n"); !strings.Contains(ev, "zone: newest hour window 2026112612 is the current hour at UTC+00:00 (server time 12:34 UTC)") {
		t.Errorf("pv's evidence: %s", ev)
	}
	if ev := strings.Join(byPattern["old:<name>:<window>"].Evidence, "\n"); !strings.Contains(ev, "no longer written") {
		t.Errorf("old's evidence: %s", ev)
	}
	d := &Doc{Target: "t", TakenAt: now, Complete: true, Result: r}
	text, _ := d.Render()
	if zone, n := d.TopZone(); zone != "UTC" || n != 2 {
		t.Errorf("top zone %q of %d groups, want UTC of 2", zone, n)
	}
	if !strings.Contains(text, "\ntimezone = \"UTC\"\n") || strings.Count(text, "timezone = ") != 2 ||
		!strings.Contains(text, "hour_retention = \"2d\"\ntimezone = \"Asia/Shanghai\"\n") {
		t.Errorf("rendered:\n%s", text)
	}

	// Under a file whose zone is UTC, only the group at another keeps its line.
	d = &Doc{Target: "t", TakenAt: now, Complete: true, Result: r, Merge: "c.toml", Timezone: "UTC"}
	if text, _ = d.Render(); strings.Count(text, "timezone = ") != 1 || !strings.Contains(text, `timezone = "Asia/Shanghai"`) {
		t.Errorf("merged:\n%s", text)
	}
}

// With no group being written the top-level zone is UTC, and the document says it is assumed.
func TestTopZoneFallback(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	g := New(Options{Location: time.UTC})
	windowedCounters(g, "old", 0, now.Add(-72*time.Hour), now, false)
	d := &Doc{Target: "t", TakenAt: now, Complete: true, Result: g.Result()}
	text, _ := d.Render()
	if !strings.Contains(text, "UTC is\n# assumed") || !strings.Contains(text, "\ntimezone = \"UTC\"\n") || strings.Count(text, "timezone = ") != 1 {
		t.Errorf("rendered:\n%s", text)
	}
}

// A family's hour and day groups merged take the hour's zone; a day group whose windows fit the
// top-level zone prints no line of its own, though the host's zone was proposed for it.
func TestZoneMergedAndDays(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 34, 0, 0, time.UTC)
	host := mustZone(t, "Asia/Shanghai")
	g := New(Options{Location: host, Host: host})
	windowedCounters(g, "pv", 0, now, now, true)
	windowedCounters(g, "api", 0, now, now, false)
	g.Add([]string{"dau:x:20261126", "dau:y:20261126", "dau:z:20261126"})
	for _, n := range []string{"dau:x:20261126", "dau:y:20261126", "dau:z:20261126"} {
		g.AddSample(Sample{Name: n, Type: "string", TTL: 30 * 24 * time.Hour, Bytes: 64, Now: now, Value: "3", Len: 1})
	}
	r := g.Result()
	d := &Doc{Target: "t", TakenAt: now, Complete: true, Result: r}
	text, _ := d.Render()
	zones := map[string]string{}
	for _, gr := range r.Groups {
		zones[gr.Pattern] = gr.Entry.Timezone
		if gr.Pattern == "pv:<name>:<window>" && (gr.Entry.HourFormat == "" || gr.Entry.DayFormat == "") {
			t.Errorf("pv's hour and day groups are not merged: %+v", gr.Entry)
		}
	}
	if want := map[string]string{"pv:<name>:<window>": "UTC", "api:<name>:<window>": "UTC", "dau:<name>:<window>": "Asia/Shanghai"}; fmt.Sprint(zones) != fmt.Sprint(want) {
		t.Errorf("zones %v, want %v", zones, want)
	}
	if strings.Count(text, "timezone = ") != 1 || !strings.Contains(text, "\ntimezone = \"UTC\"\n") {
		t.Errorf("rendered:\n%s", text)
	}
}
