package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestParsePattern(t *testing.T) {
	for _, c := range []struct {
		pattern string
		dims    string // comma-joined, or the error text expected
		err     bool
	}{
		{"flow:count:<app>:<device>:<ip>:<window>", "app,device,ip", false},
		{"{<channel>:<ad>}:<window>", "channel,ad", false},
		{"stats:<window>", "", false},
		{"<window>", "", false},
		{"flow:count:<app>", "no <window>", true},
		{"a:<window>:<window>", "twice", true},
		{"a:<x>:<x>:<window>", "twice", true},
		{"a:<x><y>:<window>", "separated", true},
		{"a:<x:<window>", "bad placeholder", true},
		{"a:<1x>:<window>", "bad placeholder", true},
		{"a:<window", "unclosed", true},
		{"a>b:<window>", "stray", true},
		{"", "empty", true},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			p, err := ParsePattern(c.pattern)
			if c.err {
				if err == nil || !strings.Contains(err.Error(), c.dims) {
					t.Fatalf("err %v, want one saying %q", err, c.dims)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Dims(), ","); got != c.dims {
				t.Fatalf("dims %q, want %q", got, c.dims)
			}
		})
	}
}

func TestPatternKey(t *testing.T) {
	p, err := ParsePattern("flow:count:<app>:<device>:<ip>:<window>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Key([]string{"app123", "device456", "127.0.0.1"}, "2023080117")
	if err != nil || got != "flow:count:app123:device456:127.0.0.1:2023080117" {
		t.Fatalf("key %q, %v", got, err)
	}
	if _, err := p.Key([]string{"only-one"}, "2023080117"); err == nil {
		t.Fatal("a key with too few dims was built")
	}
}

func TestSharesSlot(t *testing.T) {
	for pattern, want := range map[string]bool{
		"{<channel>:<ad>}:<window>":           true,
		"stat:{<tenant>:<endpoint>}:<window>": true,
		"{flow}:count:<app>:<window>":         true,
		"{<channel>}:<ad>:<window>":           true,
		"<channel>:{<ad>}:<window>":           false, // a channel holding '{' moves the tag
		"<channel>:<ad>:<window>":             false,
		"{}:<ad>:<window>":                    false, // an empty tag hashes the whole key
		"{<ad>:<window>}":                     false,
		"{x:<ad>:<window>}":                   false,
	} {
		p, err := ParsePattern(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.SharesSlot(); got != want {
			t.Errorf("%s: SharesSlot %v, want %v", pattern, got, want)
		}
	}
	// And what the check promises holds for real keys: hour and day keys in one slot.
	f := adRevenue(t)
	now := time.Now()
	hk, _ := f.Key(WindowAt(Hour, now, shanghai), []string{"app1", "banner123"})
	dk, _ := f.Key(WindowAt(Day, now, shanghai), []string{"app1", "banner123"})
	if Slot(hk) != Slot(dk) {
		t.Fatalf("%s and %s in slots %d and %d", hk, dk, Slot(hk), Slot(dk))
	}
}

func TestSlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Fatalf("crc16 check value %#x, want 0x31c3 (CRC-16/XMODEM)", got)
	}
	if Slot("{user1000}.following") != Slot("{user1000}.followers") || Slot("{user1000}.x") != Slot("user1000") {
		t.Fatal("hash tags are not honoured")
	}
	if Slot("foo{}{bar}") != int(crc16("foo{}{bar}"))%slotCount {
		t.Fatal("an empty first tag must hash the whole key")
	}
}

func TestWindowFormats(t *testing.T) {
	for _, c := range []struct {
		g    Granularity
		java string
		want string // formatted 2023-08-01 17:42 in Shanghai, or error text
		err  bool
	}{
		{Hour, "yyyyMMddHH", "2023080117", false},
		{Day, "yyyyMMdd", "20230801", false},
		{Hour, "yyyy-MM-dd_HH", "2023-08-01_17", false},
		{Day, "yyMMdd", "230801", false},
		{Hour, "yyyyMMdd", "lacks HH", true},
		{Day, "yyyyMMddHH", "cannot have", true},
		{Hour, "yyyyMMddHHmm", "unsupported letter", true},
		{Day, "MMdd", "lacks yyyy", true},
		{Day, "yyyyMMdd1", "digits", true},
		{Day, "yyyyMMddyyyy", "repeats", true},
	} {
		t.Run(c.java, func(t *testing.T) {
			f, err := ParseWindowFormat(c.g, c.java)
			if c.err {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2023, 8, 1, 17, 42, 5, 0, shanghai)
			w := WindowAt(c.g, at, shanghai)
			if got := f.Format(w); got != c.want {
				t.Fatalf("format %q, want %q", got, c.want)
			}
			back, err := f.Parse(c.g, c.want, shanghai)
			if err != nil || !back.Start.Equal(w.Start) {
				t.Fatalf("parse back %v, %v; want %v", back.Start, err, w.Start)
			}
		})
	}
	f, _ := ParseWindowFormat(Hour, "yyyyMMddHH")
	for _, bad := range []string{"202308011", "2023080125", "20230801170", "abcdefghij"} {
		if _, err := f.Parse(Hour, bad, shanghai); err == nil {
			t.Errorf("window %q parsed", bad)
		}
	}
}

func TestWindowsAcrossZonesAndDST(t *testing.T) {
	ny := mustLoad("America/New_York")
	// 2024-03-10 is 23 hours long in New York; 2024-11-03 is 25.
	for _, c := range []struct {
		day  time.Time
		want time.Duration
	}{
		{time.Date(2024, 3, 10, 12, 0, 0, 0, ny), 23 * time.Hour},
		{time.Date(2024, 11, 3, 12, 0, 0, 0, ny), 25 * time.Hour},
		{time.Date(2024, 6, 1, 12, 0, 0, 0, ny), 24 * time.Hour},
	} {
		w := WindowAt(Day, c.day, ny)
		if got := w.End.Sub(w.Start); got != c.want {
			t.Errorf("%s: day is %v long, want %v", c.day.Format("2006-01-02"), got, c.want)
		}
	}
	// India is UTC+5:30: its hours start at :30 UTC.
	kolkata := mustLoad("Asia/Kolkata")
	w := WindowAt(Hour, time.Date(2024, 1, 1, 10, 45, 0, 0, time.UTC), kolkata)
	if w.Start.UTC().Format("15:04") != "10:30" || w.Prev().Start.UTC().Format("15:04") != "09:30" {
		t.Fatalf("Kolkata hour starts %v (prev %v), want 10:30 and 09:30 UTC", w.Start.UTC(), w.Prev().Start.UTC())
	}
}

// TestWindowsWhereTheClocksSkipMidnightOrHalfAnHour: where DST starts at midnight (Chile, Cuba,
// Egypt) the day starts at 1 a.m. and its key names that day, not the one before, and reads back;
// where it moves the clocks half an hour (Lord Howe Island) the hour it cuts short keeps its own
// key. A format with "__" before yyyy writes the year, not Go's day of the year.
func TestWindowsWhereTheClocksSkipMidnightOrHalfAnHour(t *testing.T) {
	day, _ := ParseWindowFormat(Day, "yyyyMMdd")
	hour, _ := ParseWindowFormat(Hour, "yyyyMMddHH")
	for _, c := range []struct {
		zone  string
		at    time.Time // local wall clock, read in the zone
		g     Granularity
		key   string
		start string // the window's first instant, local
	}{
		{"America/Santiago", time.Date(2022, 9, 11, 12, 0, 0, 0, time.UTC), Day, "20220911", "2022-09-11 01:00 -03"},
		{"America/Havana", time.Date(2023, 3, 12, 9, 0, 0, 0, time.UTC), Day, "20230312", "2023-03-12 01:00 CDT"},
		{"Africa/Cairo", time.Date(2023, 4, 28, 10, 0, 0, 0, time.UTC), Day, "20230428", "2023-04-28 01:00 EEST"},
		{"Australia/Lord_Howe", time.Date(2023, 10, 1, 2, 45, 0, 0, time.UTC), Hour, "2023100102", "2023-10-01 02:30 +11"},
	} {
		loc := mustLoad(c.zone)
		at := time.Date(c.at.Year(), c.at.Month(), c.at.Day(), c.at.Hour(), c.at.Minute(), 0, 0, loc)
		wf := map[Granularity]WindowFormat{Day: day, Hour: hour}[c.g]
		w := WindowAt(c.g, at, loc)
		if got := wf.Format(w); got != c.key || w.Start.Format("2006-01-02 15:04 MST") != c.start || !w.Contains(at) {
			t.Errorf("%s %v: window %v to %v, key %q; want %q from %s", c.zone, at, w.Start, w.End, got, c.key, c.start)
		}
		back, err := wf.Parse(c.g, c.key, loc)
		if err != nil || !back.Start.Equal(w.Start) || !back.End.Equal(w.End) {
			t.Errorf("%s: %q reads back as %v to %v (%v), want %v to %v", c.zone, c.key, back.Start, back.End, err, w.Start, w.End)
		}
	}
	odd, err := ParseWindowFormat(Day, "__yyyyMMdd")
	if err != nil {
		t.Fatal(err)
	}
	w := WindowAt(Day, time.Date(2024, 3, 5, 8, 0, 0, 0, time.UTC), time.UTC)
	if got := odd.Format(w); got != "__20240305" {
		t.Errorf("__yyyyMMdd formats as %q, want __20240305", got)
	}
}

func TestNewFamilyErrorsNameTheField(t *testing.T) {
	base := FamilySpec{Name: "f", Pattern: "f:<d>:<window>", HourFormat: "yyyyMMddHH", HourRetention: time.Hour}
	for _, c := range []struct {
		edit  func(*FamilySpec)
		field string
	}{
		{func(s *FamilySpec) { s.Name = "" }, "name"},
		{func(s *FamilySpec) { s.Pattern = "f:<d>" }, "pattern"},
		{func(s *FamilySpec) { s.HourFormat = "yyyyMMdd" }, "hour_format"},
		{func(s *FamilySpec) { s.HourRetention = 0 }, "hour_retention"},
		{func(s *FamilySpec) { s.DayRetention = time.Hour }, "day_retention"},
		{func(s *FamilySpec) { s.DayFormat = "yyyyMMddHH"; s.DayRetention = time.Hour }, "day_format"},
		{func(s *FamilySpec) { s.HourFormat, s.HourRetention = "", 0 }, "hour_format"},
	} {
		spec := base
		c.edit(&spec)
		_, err := NewFamily(spec)
		se, ok := err.(*SpecError)
		if !ok || se.Field != c.field {
			t.Errorf("%+v: err %v, want a SpecError on %s", spec, err, c.field)
		}
	}
}

// TestPlanGroupsBySlotOnCluster checks that on a cluster every script call holds keys of one
// slot only, that a hash-tagged family's hour and day keys share a call, and that a family whose
// keys cannot share a slot is split rather than sent as a cross-slot call. Planning does no I/O,
// so a cluster client that never connects is enough.
func TestPlanGroupsBySlotOnCluster(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	s := New(cc, Options{Location: shanghai})
	w := s.NewWriter(WriterOptions{KeysPerCall: 8})
	tagged := adRevenue(t)
	untagged := mustFamily(t, FamilySpec{
		Name: "split", Pattern: "split:<a>:<window>", HourFormat: "yyyyMMddHH", DayFormat: "yyyyMMdd",
		HourRetention: time.Hour, DayRetention: 24 * time.Hour,
	})
	now := time.Now()
	for i := range 200 {
		for _, f := range []*Family{tagged, untagged} {
			dims := []string{fmt.Sprint(i)}
			if f == tagged {
				dims = []string{"c", fmt.Sprint(i)}
			}
			if err := w.Add(f, dims, 1, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.mu.Lock()
	calls := w.plan(w.pending)
	w.mu.Unlock()
	keys := 0
	for _, c := range calls {
		if n := len(c.counters()); n > 8 || len(c.args) != 3+2*n {
			t.Fatalf("call with %d counter keys and %d args", n, len(c.args))
		}
		for _, k := range c.keys { // the sequence key included: it must route with the counters
			if Slot(k) != Slot(c.keys[1]) {
				t.Fatalf("call mixes slots: %q (%d) and %q (%d)", c.keys[1], Slot(c.keys[1]), k, Slot(k))
			}
		}
		keys += len(c.counters())
		for _, u := range c.units {
			// Untagged keys may still hash to one slot by chance (about one pair in 16,384);
			// only keys of different slots must never share a call.
			if u.keys[Hour] != "" && u.keys[Day] != "" && Slot(u.keys[Hour]) != Slot(u.keys[Day]) {
				t.Fatalf("hour and day keys of different slots planned together: %v", u.keys)
			}
		}
	}
	if keys != 200*4 {
		t.Fatalf("planned %d keys, want %d", keys, 200*4)
	}
}

// TestSlotTagsCoverEverySlot checks a sequence key can be routed to any slot.
func TestSlotTagsCoverEverySlot(t *testing.T) {
	for slot := range slotCount {
		if got := Slot(seqKey("w", 0, slot)); got != slot {
			t.Fatalf("sequence key for slot %d hashes to %d", slot, got)
		}
	}
}

// TestRepeatedHourIsOneKey takes New York's 2024-11-03, when 01:00-02:00 happens twice: both
// windows are one key, so they must share one expiry, and a series shows the key once.
func TestRepeatedHourIsOneKey(t *testing.T) {
	ny := mustLoad("America/New_York")
	f := flow(t)
	first := WindowAt(Hour, time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC), ny)  // 01:30 EDT
	second := WindowAt(Hour, time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC), ny) // 01:30 EST
	k1, _ := f.Key(first, []string{"a", "d", "i"})
	k2, _ := f.Key(second, []string{"a", "d", "i"})
	if k1 != k2 || first.Start.Equal(second.Start) {
		t.Fatalf("windows %v and %v, keys %s and %s: want two windows, one key", first.Start, second.Start, k1, k2)
	}
	if !f.ExpireAt(first).Equal(f.ExpireAt(second)) || !f.ExpireAt(first).Equal(second.End.Add(48*time.Hour)) {
		t.Fatalf("expiries %v and %v; want both %v", f.ExpireAt(first), f.ExpireAt(second), second.End.Add(48*time.Hour))
	}
	b := backends(t)[0]
	s := newStore(t, b.rdb, Options{Location: ny})
	series, err := s.Series(t.Context(), f, Hour, []string{"a", "d", "i"}, 4, time.Date(2024, 11, 3, 7, 30, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, v := range series {
		keys = append(keys, v.Key[len(v.Key)-10:])
	}
	if got := strings.Join(keys, " "); got != "2024110223 2024110300 2024110301 2024110302" {
		t.Fatalf("series windows %s", got)
	}
	if d := series[2].Window.End.Sub(series[2].Window.Start); d != 2*time.Hour {
		t.Fatalf("the repeated hour's point spans %v, want 2h", d)
	}
}
