package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/snapshot"
)

func rate(r float64) *float64 { return &r }

func iptr(n int) *int { return &n }

// exactFigure is a figure every bit was counted for.
func exactFigure(v float64) *snapshot.BloomFigure {
	return &snapshot.BloomFigure{Value: v, Low: v, High: v, Coverage: 1}
}

// withBlooms adds two [[bloom]] entries to snap, as a sweep reports them: "seen" with an exact
// small filter, a large one estimated from 6.0% of its bits and one past its target, more filters
// than were read and keys it could not read; "legacy" with a RedisBloom filter whose bits BF.INFO
// does not give.
func withBlooms(snap *snapshot.Snapshot) *snapshot.Snapshot {
	snap.Blooms = []snapshot.Bloom{{Name: "seen", More: true,
		Unreadable: map[string]int64{"another type": 2, "a hash without hourglass's metadata": 1},
		Filters: []snapshot.BloomFilter{
			{Key: "seen:small", Raw: "seen:small", Layout: "hourglass", Capacity: ptr(1_000), Expansion: iptr(2), SubFilters: iptr(1), TargetRate: rate(0.01),
				Added: ptr(820), Elements: exactFigure(818), Fill: exactFigure(0.3), FalsePositive: exactFigure(0.000066), MemoryBytes: ptr(1_360), TTLMS: -1},
			{Key: "seen:big", Raw: "seen:big", Layout: "hourglass", Capacity: ptr(10_000), Expansion: iptr(2), SubFilters: iptr(3), TargetRate: rate(0.01), Added: ptr(12_500),
				Elements:      &snapshot.BloomFigure{Value: 12_340, Low: 12_100, High: 12_580, Coverage: 0.06},
				Fill:          &snapshot.BloomFigure{Value: 0.482, Low: 0.479, High: 0.485, Coverage: 0.06},
				FalsePositive: &snapshot.BloomFigure{Value: 0.0052, Low: 0.0049, High: 0.0055, Coverage: 0.06},
				MemoryBytes:   ptr(87_000), TTLMS: 3 * 3600_000,
				Notes: []string{"bits sampled: 6% of its 1,245,000 bytes, in 64 ranges"}},
			{Key: "seen:hot", Raw: "seen:hot", Layout: "hourglass", Capacity: ptr(1_000), SubFilters: iptr(1), TargetRate: rate(0.01), Added: ptr(4_800),
				Elements: exactFigure(4_731), Fill: exactFigure(0.94), FalsePositive: exactFigure(0.024), OverTarget: true, MemoryBytes: ptr(1_360), TTLMS: -1,
				Notes: []string{"it does not scale (expansion 0) and holds 4.7 times its capacity"}},
		}},
		{Name: "legacy", Filters: []snapshot.BloomFilter{
			{Key: "legacy:bf", Raw: "legacy:bf", Layout: "redisbloom", Capacity: ptr(100_000), Expansion: iptr(2), SubFilters: iptr(2), TargetRate: rate(0.001),
				Added: ptr(150_000), Elements: &snapshot.BloomFigure{Value: 150_000, Low: 150_000, High: 150_000, Coverage: 1, From: "items"},
				MemoryBytes: ptr(262_000), TTLMS: -1,
				Notes: []string{"RedisBloom's type: BF.INFO gives its items and size, not its bits, so its fill and false-positive rate are not read",
					"its capacity and error rate are BF.RESERVE's, from BF.INFO"}},
		}},
	}
	return snap
}

func bloomStatus(t testing.TB) snapshot.Status {
	st := testStatus(t)
	withBlooms(st.Snapshot)
	return st
}

// TestBloomGolden draws the Uniques view with the filters, a sampled filter's level, a
// RedisBloom filter's level and the Overview, at 80x24 and 120x36; the screens with no filter
// are TestGolden's (uniques, whose filters' section is the placeholder) and the empty view's.
func TestBloomGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		for _, c := range []struct {
			name string
			keys []string
		}{
			{"uniques_blooms", []string{"6", "down", "down"}},
			{"uniques_bloom_sampled", []string{"6", "down", "down", "enter"}},
			{"uniques_bloom_redisbloom", []string{"6", "down", "down", "down", "down", "enter"}},
			{"overview_blooms", nil},
		} {
			m := newTestModel(t, &fakeSource{status: bloomStatus(t)}, nil, size[0], size[1])
			poll(t, m)
			press(m, c.keys...)
			golden(t, fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1]), screen(m))
		}
		m := newTestModel(t, &fakeSource{status: snapshot.Status{Snapshot: testSnapshot(t)}}, nil, size[0], size[1])
		poll(t, m)
		press(m, "6")
		golden(t, fmt.Sprintf("uniques_none_%dx%d", size[0], size[1]), screen(m))
	}
}

// TestBloomRowsShowEachFigureAsItWasRead holds each filter's cells to what the Snapshot says of
// it: exact figures plainly, an estimate with ≈ (its interval and coverage where there is room),
// a figure not read as "—", and a filter past its target flagged in the theme's bad style.
func TestBloomRowsShowEachFigureAsItWasRead(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: bloomStatus(t)}, nil, 160, 40)
	poll(t, m)
	press(m, "6")
	raw := m.Render()
	s := ansi.Strip(raw)
	for key, want := range map[string][]string{
		"seen:small": {"ours", "820", "818", "30.0%", "0.0066% / 1.0%", "1.3 KiB"},
		"seen:big":   {"12,500", "≈12,340 (12,100–12,580, 6.0% of bits)", "≈48.2%", "≈0.52% / 1.0%", "85.0 KiB"},
		"seen:hot":   {"4,731", "94.0%", "2.4% / 1.0% over"},
		"legacy:bf":  {"RedisBloom", "150,000", "≈150,000 from items", "— / 0.10%", "255.9 KiB"},
	} {
		line := lineWith(s, key)
		for _, w := range want {
			if !strings.Contains(line, w) {
				t.Errorf("the row of %s lacks %q: %q", key, w, line)
			}
		}
	}
	if fill := cellUnder(screenCells(lineWith(s, "FALSE POS/TARGET")), screenCells(lineWith(s, "legacy:bf")), "FILL"); fill != "—" {
		t.Errorf("legacy:bf's fill, not read, is %q, not —", fill)
	}
	if bad := m.c.styles.Bad.Render("2.4% / 1.0% over"); !strings.Contains(raw, bad) {
		t.Errorf("the filter past its target is not in the bad style")
	}
	if strings.Contains(raw, m.c.styles.Bad.Render("≈0.52% / 1.0%")) {
		t.Errorf("a filter under its target is in the bad style")
	}
	for _, want := range []string{"seen: 3 keys not read as filters: 2 another type, 1 a hash without hourglass's metadata",
		"seen: only the first 3 filters were read; its pattern matches more"} {
		if !strings.Contains(s, want) {
			t.Errorf("the view lacks %q:\n%s", want, s)
		}
	}
}

// TestNarrowBloomRowsKeepTheIntervalReachable: where the interval does not fit its cell, the
// cell says ≈ and its spread, and the line under the table, for the selected filter, the
// interval and the share of bits it rests on.
func TestNarrowBloomRowsKeepTheIntervalReachable(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: bloomStatus(t)}, nil, 80, 24)
	poll(t, m)
	press(m, "6", "down", "down")
	s := screen(m)
	if line := lineWith(s, "seen:big"); !strings.Contains(line, "≈12.3k ±1.9%") {
		t.Errorf("the narrow row of seen:big: %q", line)
	}
	flat := strings.Join(strings.Fields(s), " ") // the line wraps at 80 columns
	for _, want := range []string{"≈ 95% intervals, from 6.0% of its bits:", "elements 12,100–12,580", "fill 47.9%–48.5%", "false pos. 0.49%–0.55%"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the selected filter's intervals are not under the table (%q):\n%s", want, s)
		}
	}
	for w := 60; w <= 130; w += 7 {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		for i, line := range strings.Split(screen(m), "\n") {
			if ansi.StringWidth(line) > w {
				t.Errorf("at %d columns line %d is %d wide: %q", w, i, ansi.StringWidth(line), line)
			}
		}
	}
}

// TestBloomSelectionAndDrillDown: the selection runs from the uniques into the filters; enter
// on a unique opens nothing, on a filter its level with each figure's interval and its notes,
// and esc comes back to the same row; the level follows the next Snapshot.
func TestBloomSelectionAndDrillDown(t *testing.T) {
	src := &fakeSource{status: bloomStatus(t)}
	m := newTestModel(t, src, nil, 120, 36)
	poll(t, m)
	press(m, "6")
	v := m.views[5].(*uniques)
	if press(m, "enter"); v.d.top() != nil {
		t.Fatal("enter on a unique family opened a level")
	}
	press(m, "down", "down", "down", "down", "enter")
	s := screen(m)
	for _, want := range []string{"Uniques › legacy:bf", "RedisBloom's module type, read with BF.INFO", "≈150,000, computed from its items",
		"fill                  —: not read (the notes say why)", "• RedisBloom's type: BF.INFO gives its items and size", "• its capacity and error rate"} {
		if !strings.Contains(s, want) {
			t.Errorf("the level lacks %q:\n%s", want, s)
		}
	}
	src.status = bloomStatus(t)
	src.status.Snapshot.Blooms[1].Filters[0].Added = ptr(150_001)
	poll(t, m)
	if !strings.Contains(screen(m), "150,001, its writers' count") {
		t.Errorf("the level did not follow the new Snapshot:\n%s", screen(m))
	}
	press(m, "esc")
	if r, _ := v.rows.selected(); v.d.top() != nil || r.f == nil || r.f.Key != "legacy:bf" {
		t.Fatalf("esc did not come back to legacy:bf: %+v", r)
	}
	press(m, "up", "up", "enter")
	if s := screen(m); !strings.Contains(s, "≈12,340, 95% interval 12,100–12,580, from 6.0% of its bits") ||
		!strings.Contains(s, "≈0.52%, 95% interval 0.49%–0.55%, from 6.0% of its bits") || !strings.Contains(s, "3h00m") {
		t.Errorf("the sampled filter's level:\n%s", s)
	}
}

// TestManyBloomFiltersScroll: past the screen's room the table shows a window of the filters
// that keeps the selection in view, says which, and names the entry on its first row.
func TestManyBloomFiltersScroll(t *testing.T) {
	st := bloomStatus(t)
	for i := range 40 {
		st.Snapshot.Blooms[1].Filters = append(st.Snapshot.Blooms[1].Filters,
			snapshot.BloomFilter{Key: fmt.Sprintf("legacy:%02d", i), Raw: fmt.Sprintf("legacy:%02d", i), Layout: "redisbloom", TTLMS: -1})
	}
	m := newTestModel(t, &fakeSource{status: st}, nil, 80, 24)
	poll(t, m)
	press(m, "6")
	for range 30 {
		press(m, "down")
	}
	s := screen(m)
	r, _ := m.views[5].(*uniques).rows.selected()
	if r.f == nil || r.f.Key != "legacy:25" || !strings.Contains(s, "legacy:25") || strings.Contains(s, "seen:small") {
		t.Fatalf("the selection (%+v) is not in view:\n%s", r.f, s)
	}
	lines := strings.Split(s, "\n")
	first := ""
	for i, l := range lines {
		if strings.Contains(l, "FALSE POS/TARGET") && i+1 < len(lines) {
			first = lines[i+1]
		}
	}
	if !strings.Contains(s, " of 44") || !strings.HasPrefix(first, "legacy  legacy:") {
		t.Errorf("the window is not said, or its first row does not name the entry:\n%s", s)
	}
}

// TestBloomFilterText: / keeps the filters whose entry or key holds the text, and the uniques
// that match.
func TestBloomFilterText(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: bloomStatus(t)}, nil, 120, 36)
	poll(t, m)
	press(m, "6", "/", "h", "o", "t", "enter")
	s := screen(m)
	if !strings.Contains(s, "seen:hot") || strings.Contains(s, "seen:big") || strings.Contains(s, "legacy:bf") || !strings.Contains(s, `No unique family matches "hot"`) {
		t.Fatalf("filter hot:\n%s", s)
	}
	press(m, "enter")
	if !strings.Contains(screen(m), "Uniques › seen:hot") {
		t.Fatalf("enter on the only row kept did not open seen:hot:\n%s", screen(m))
	}
}

// TestBloomHelpComesFromTheBindings: ? on the Uniques view lists enter for a filter's figures
// only when the view has filters, as the footer does.
func TestBloomHelpComesFromTheBindings(t *testing.T) {
	for _, c := range []struct {
		st   snapshot.Status
		want bool
	}{{bloomStatus(t), true}, {testStatus(t), false}} {
		m := newTestModel(t, &fakeSource{status: c.st}, nil, 120, 36)
		poll(t, m)
		press(m, "6")
		footer := lineWith(screen(m), "? help")
		press(m, "?")
		help := screen(m)
		if got := strings.Contains(help, "enter") && strings.Contains(help, "filter's figures"); got != c.want {
			t.Errorf("with filters %v, ? lists enter: %v\n%s", c.want, got, help)
		}
		if got := strings.Contains(footer, "enter filter's figures"); got != c.want {
			t.Errorf("with filters %v, the footer names enter: %v: %q", c.want, got, footer)
		}
		if !strings.Contains(help, "↑/k") {
			t.Errorf("? lacks the moves:\n%s", help)
		}
	}
}

// TestOverviewBloomLine: the Overview counts the filters and is never fine while one is past its
// target, one's rate was not read, or keys were not read.
func TestOverviewBloomLine(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(s *snapshot.Snapshot)
		want string
	}{
		{"one over", func(*snapshot.Snapshot) {}, "4+ · 1 over target"},
		{"rate unknown", func(s *snapshot.Snapshot) { s.Blooms[0].Filters = s.Blooms[0].Filters[:2] }, "3+ · 1 rate unknown"},
		{"keys unread", func(s *snapshot.Snapshot) {
			s.Blooms[0].Filters, s.Blooms[0].More, s.Blooms = s.Blooms[0].Filters[:2], false, s.Blooms[:1]
		}, "2 · 3 keys unread"},
		{"fine", func(s *snapshot.Snapshot) {
			s.Blooms[0].Filters, s.Blooms[0].More, s.Blooms[0].Unreadable, s.Blooms = s.Blooms[0].Filters[:2], false, nil, s.Blooms[:1]
		}, "2 · none over target"},
		{"none", func(s *snapshot.Snapshot) { s.Blooms = []snapshot.Bloom{{Name: "seen"}} }, "none found"},
		{"none read", func(s *snapshot.Snapshot) {
			s.Limiters, s.Blooms = nil, []snapshot.Bloom{{Name: "seen", Unreadable: map[string]int64{"another type": 5}}}
		}, "none · 5 keys unread"},
	} {
		st := bloomStatus(t)
		c.edit(st.Snapshot)
		m := newTestModel(t, &fakeSource{status: st}, nil, 80, 24)
		poll(t, m)
		if line := lineWith(screen(m), "bloom filters"); !strings.Contains(line, c.want) {
			t.Errorf("%s: the Overview's line %q lacks %q", c.name, line, c.want)
		}
		if c.name == "one over" && !strings.Contains(m.Render(), m.c.styles.Bad.Render(row("bloom filters", c.want))) {
			t.Errorf("%s: the line is not in the bad style", c.name)
		}
	}
}

// TestBloomFiguresShowNoZeroThatIsNotKnown walks the Overview, the Uniques view and each filter's
// level over filters whose figures are 0 where the Snapshot says 0 and null elsewhere: a 0 on
// screen only where the Snapshot's field is 0, "—" where it is null.
func TestBloomFiguresShowNoZeroThatIsNotKnown(t *testing.T) {
	st := bloomStatus(t)
	zero := exactFigure(0)
	st.Snapshot.Blooms = append(st.Snapshot.Blooms, snapshot.Bloom{Name: "fresh", Filters: []snapshot.BloomFilter{
		{Key: "fresh:empty", Layout: "hourglass", Capacity: ptr(100), Expansion: iptr(2), SubFilters: iptr(1), TargetRate: rate(0.01), Added: ptr(0),
			Elements: zero, Fill: zero, FalsePositive: zero, MemoryBytes: ptr(200), TTLMS: -1},
		{Key: "fresh:unread", Layout: "hourglass", TTLMS: -1, Notes: []string{"its metadata hash vanished mid-sweep"}},
	}})
	doc := snapshotDoc(t, st.Snapshot)
	for _, keys := range [][]string{{"1"}, {"6"}, {"6", "down", "down", "down", "down", "down", "down"}} {
		m := newTestModel(t, &fakeSource{status: st}, nil, 220, 60)
		poll(t, m)
		press(m, keys...)
		s := screen(m)
		checkTables(t, fmt.Sprint(keys), s, doc)
		checkPanels(t, fmt.Sprint(keys), s, st.Snapshot)
		if keys[0] == "6" && lineWith(s, "fresh:unread") == "" {
			t.Errorf("fresh:unread is not on screen:\n%s", s)
		}
	}
	m := newTestModel(t, &fakeSource{status: st}, nil, 120, 36)
	poll(t, m)
	press(m, "6", "down", "down", "down", "down", "down", "down", "enter")
	s := screen(m)
	for _, label := range []string{"added", "elements", "fill", "false positives now", "target", "memory"} {
		if line := lineWith(s, label+"  "); !strings.Contains(line, "—: not read") {
			t.Errorf("fresh:unread's %s is not —: %q", label, line)
		}
	}
}

// lineWith is the first line of s that holds text, or "".
func lineWith(s, text string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// TestNoBloomEntrySaysHowToConfigure: with no [[bloom]] entry the section says what it will show
// and the entry to add, below the uniques or with none; with the entries inferred, that none was
// found among the keys.
func TestNoBloomEntrySaysHowToConfigure(t *testing.T) {
	inferred := testStatus(t)
	inferred.Inferred = &snapshot.Inferred{}
	for _, c := range []struct {
		name string
		st   snapshot.Status
		want string
	}{
		{"uniques, no filters", testStatus(t), "Bloom filters: none configured"},
		{"neither", snapshot.Status{Snapshot: testSnapshot(t)}, "Bloom filters: none configured"},
		{"inferred", inferred, "Bloom filters: none found among the keys"},
	} {
		m := newTestModel(t, &fakeSource{status: c.st}, nil, 80, 24)
		poll(t, m)
		press(m, "6")
		s := screen(m)
		for _, want := range []string{c.want, "[[bloom]]", `pattern = "seen:<day>"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: the view lacks %q:\n%s", c.name, want, s)
			}
		}
	}
}

// TestBloomEntryWithNoFilter: an entry whose pattern matched no filter says so, and what it
// could not read, rather than a table of nothing or a filter text's "no match".
func TestBloomEntryWithNoFilter(t *testing.T) {
	st := snapshot.Status{Snapshot: testSnapshot(t)}
	st.Snapshot.Blooms = []snapshot.Bloom{{Name: "seen", Unreadable: map[string]int64{"another type": 5}}}
	m := newTestModel(t, &fakeSource{status: st}, nil, 80, 24)
	poll(t, m)
	press(m, "6")
	s := screen(m)
	for _, want := range []string{"Uniques: none configured", "seen: no filter among the keys its pattern matched",
		"seen: 5 keys not read as filters: 5 another type"} {
		if !strings.Contains(s, want) {
			t.Errorf("the view lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "matches \"\"") || strings.Contains(s, "FALSE POS") {
		t.Errorf("an entry with no filter shows a table or a filter's no match:\n%s", s)
	}
}
