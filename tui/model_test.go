package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/scanner"
	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/theme"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// clock is the fixed server time of these tests.
var clock = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)

// fakeSource answers polls with a fixed status or error, and counts them.
type fakeSource struct {
	mu     sync.Mutex
	status snapshot.Status
	err    error
	polls  int
}

func (f *fakeSource) Poll(ctx context.Context, slice time.Duration, focus string) (snapshot.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls++
	return f.status, f.err
}

// fakeActions records the console's writes.
type fakeActions struct {
	mu       sync.Mutex
	injected []string
	traffic  map[string]bool
	repairs  []bool // dryRun of each call
	counts   snapshot.RepairCounts
	// trafficErr, when set, is what SetTraffic answers: the traffic did not start.
	trafficErr error
	// The Session's calls: the entries claimed and the paths written; claimErr and writeErr
	// are their answers.
	claimed            []discover.Entry
	written            []string
	proposals          []Proposal
	claimErr, writeErr error
}

func (a *fakeActions) Inject(ctx context.Context, family string, events int) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.injected = append(a.injected, fmt.Sprintf("%s:%d", family, events))
	return fmt.Sprintf("injected %d events into %s", events, family), nil
}

func (a *fakeActions) SetTraffic(family string, on bool) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.trafficErr != nil {
		return "", a.trafficErr
	}
	if a.traffic == nil {
		a.traffic = map[string]bool{}
	}
	a.traffic[family] = on
	return fmt.Sprintf("traffic %s %v", family, on), nil
}

func (a *fakeActions) Repair(ctx context.Context, dryRun bool) (snapshot.RepairCounts, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.repairs = append(a.repairs, dryRun)
	return a.counts, nil
}

func testFamilies(t testing.TB) []*store.Family {
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

// testSnapshot folds a fixed set of keys through the real aggregator, so the console renders
// exactly what a sweep produces, escaping included.
func testSnapshot(t testing.TB) *snapshot.Snapshot {
	t.Helper()
	fams := testFamilies(t)
	flow, ad := fams[0], fams[1]
	a := scanner.NewAggregator(fams, scanner.Options{Now: func() time.Time { return clock }, Location: time.UTC,
		Target: "10.0.0.5:6379", Mode: "standalone", MemorySamples: -1, TopK: 10})
	var page scanner.Page
	sound := time.Duration(0) // a TTL of 0 below means the sound one: until window end plus retention
	addKey := func(f *store.Family, g store.Granularity, at time.Time, ttl time.Duration, value string, dims ...string) {
		w := store.WindowAt(g, at, time.UTC)
		if ttl == sound {
			ttl = f.ExpireAt(w).Sub(clock)
		}
		name, err := f.Key(w, dims)
		if err != nil {
			t.Fatal(err)
		}
		page.Keys = append(page.Keys, scanner.Key{Name: name, Classified: store.Classified{Family: f, Window: w, Dims: dims}, TTL: ttl, Value: value})
		page.Seen++
	}
	for h := range 30 {
		at := clock.Add(-time.Duration(h) * time.Hour)
		for i := range 12 {
			ttl := sound
			if i == 11 && h < 3 {
				ttl = 7 * 24 * time.Hour // a writer keeping keys a week
			}
			addKey(flow, store.Hour, at, ttl, fmt.Sprint((i+1)*(h%7+1)*10), fmt.Sprint("app", i%3), "ios", fmt.Sprint("10.0.0.", i))
		}
	}
	addKey(flow, store.Hour, clock, scanner.NoTTL, "5", "app\x1b[2J\x1b[31mevil", "ios", "10.9.9.9") // a hostile name, no TTL
	addKey(flow, store.Hour, clock, time.Hour, "12abc", "app7", "web", "10.1.1.1")
	addKey(flow, store.Hour, clock.Add(-50*time.Hour), time.Hour, "3", "app8", "web", "10.1.1.2") // past retention, still here
	for d := range 3 {
		day := clock.AddDate(0, 0, -d)
		var dayTotal int64
		for h := range 24 {
			at := store.WindowAt(store.Day, day, time.UTC).Start.Add(time.Duration(h) * time.Hour)
			if at.After(clock) {
				break
			}
			addKey(ad, store.Hour, at, sound, fmt.Sprint(100+h), "baidu", "ad1")
			dayTotal += int64(100 + h)
		}
		if d == 1 {
			dayTotal -= 19 // yesterday's day key lost a write
		}
		addKey(ad, store.Day, day, sound, fmt.Sprint(dayTotal), "baidu", "ad1")
	}
	page.Seen += 7 // keys in no family
	a.Add(page)
	snap := a.Snapshot(true)
	snap.Scan.DurationMS = 40 // measured on the wall clock; fixed so the screens compare
	r := 12.5
	snap.Family("flow").RatePerSec = &r
	return snap
}

// withStructures adds queues, a limiter, uniques and locks to snap, as a sweep reports them.
func withStructures(snap *snapshot.Snapshot) *snapshot.Snapshot {
	rej, acc := 3.5, 41.0
	snap.DelayQueues = []snapshot.DelayQueue{{Name: "orders", Key: "delay:orders", RawKey: "delay:orders", Ref: snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "orders", Key: "delay:orders"}, Depth: 1250, Due: ptr(340), InFlight: ptr(12),
		OldestDueAgeMS: ptr(95_000), NextDueInMS: ptr(4_000), Unit: "ms", Schedule: map[string]int64{"1m": 20, "10m": 300, "1h": 500, "later": 90}},
		{Name: "legacy", Key: "legacy:delay", Ref: snapshot.QueueRef{Kind: snapshot.QueueDelay, Name: "legacy"}, Depth: 4, Unit: "ms", Schedule: map[string]int64{},
			Warning: `score 1795000000.5 read in ms falls 56.9 years in the past; in s it falls 6m40s in the future: set score_unit = "s"`}}
	snap.Warnings = []string{"1 key(s) fit both delay_queue orders and job_queue jobs (e.g. schedule): counted once, under delay_queue orders"}
	snap.JobQueues = []snapshot.JobQueues{{Name: "jobs", Layout: "sidekiq", QueuesFound: 2, Notes: []string{},
		Queues: []snapshot.JobQueue{{Queue: "critical", RawQueue: "critical", Ref: snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "jobs", Queue: "critical"}, Waiting: ptr(12), LatencyMS: ptr(1_500)}, {Queue: "default", RawQueue: "default", Ref: snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "jobs", Queue: "default"}, Waiting: ptr(1_040), LatencyMS: ptr(95_000)}},
		Shared: &snapshot.JobQueue{Ref: snapshot.QueueRef{Kind: snapshot.QueueJob, Name: "jobs"}, Scheduled: ptr(7), Due: ptr(2), OldestDueAgeMS: ptr(3_200), NextDueInMS: ptr(800), Retry: ptr(3), Dead: ptr(1), Active: ptr(4)}}}
	snap.ListQueues = []snapshot.ListQueue{{Name: "emails", Key: "queue:emails", Ref: snapshot.QueueRef{Kind: snapshot.QueueList, Name: "emails"}, Length: 42, Processing: ptr(3),
		LatencyNote: "its oldest task's payload holds no time"}}
	snap.Limiters = []snapshot.Limiter{{Name: "api", Kind: "sliding", WindowMS: ptr(60_000), Limit: ptr(100), Keys: 212, Hits: 5230,
		AtLimit: 3, OverLimit: ptr(1), Allowed: ptr(90_000), Rejected: ptr(4_100), AllowedPerSec: &acc, RejectedPerSec: &rej,
		Top: []snapshot.KeyCount{{Key: "rl:api:user0", Raw: "rl:api:user0", Count: 104, TTLMS: 59_000}, {Key: "rl:api:user1", Raw: "rl:api:user1", Count: 100, TTLMS: 58_000}}}}
	snap.Uniques = []snapshot.Unique{{Name: "page_uv", Kind: "hll", UnionDims: map[string]string{"page": "home"}, Union7d: ptr(81_200), Union30d: ptr(240_551),
		Windows: []snapshot.UniqueWindow{{Granularity: "day", Window: "20261121", Keys: 12, Count: 30_100}, {Granularity: "day", Window: "20261122", Keys: 12, Count: 12_040, Current: true}}}}
	snap.Locks = []snapshot.Lock{{Name: "jobs", Held: 4, NoTTL: 1, Examples: []snapshot.LockHolder{
		{Key: "lock:job:7", Raw: "lock:job:7", Token: "1795312342035-28fd214c", TTLMS: 9_000, AgeMS: 8_000},
		{Key: "lock:job:stuck", Raw: "lock:job:stuck", Token: "pid-4711", TTLMS: -1, AgeMS: -1}}}}
	snap.TTLHealth.LockNoTTL = snapshot.Problem{Keys: 1, Examples: []snapshot.Example{{Family: "lock:jobs", Key: "lock:job:stuck", TTLMS: -1, Value: "pid-4711"}}}
	return snap
}

func testStatus(t testing.TB) snapshot.Status {
	return snapshot.Status{
		Snapshot:  withUnclaimed(withStructures(testSnapshot(t))),
		Sweep:     snapshot.SweepProgress{KeysSeen: 1200, Started: clock.Add(-2 * time.Second)},
		Server:    testServer(),
		Unclaimed: sweepUnderWay(),
		// flow's current hour read live: its total and rate estimated from a sample.
		Families: []snapshot.LiveFamily{{Family: "flow", Granularity: "hour", Window: "2026112209", Keys: 363, KeysFrom: "snapshot",
			Top: 20, Sampled: 200, Total: &estimate.Figure{Estimate: 812, Low: 796, High: 828, Coverage: 0.61, Seen: 640},
			RatePerSec: &estimate.Figure{Estimate: 14.2, Low: 13.1, High: 15.3, Coverage: 0.61, Seen: 9}, ReadAt: clock}},
		Cost: snapshot.Cost{Interval: time.Second, KeysPerSecond: 3320.4, Share: 0.0093, ShareKnown: true, Masters: 1},
	}
}

// testServer is a primary with one replica, its policy noeviction, read twice.
func testServer() snapshot.ServerInfo {
	i64 := func(n int64) *int64 { return &n }
	f64 := func(v float64) *float64 { return &v }
	on := true
	return snapshot.ServerInfo{Version: "7.0.15", OpsPerSec: 48210, UsedMemory: 1 << 30, Masters: 1, ReadAt: clock,
		Nodes: []snapshot.NodeHealth{{Addr: "10.0.0.5:6379", Role: "master",
			Replicas:   []snapshot.Replica{{Addr: "10.0.0.6:6379", State: "online", LagSeconds: i64(0), BehindBytes: i64(120)}},
			UsedMemory: i64(1 << 30), MaxMemory: i64(4 << 30), Policy: "noeviction",
			EvictedKeys: i64(0), ExpiredKeys: i64(90_210), EvictedPerSec: f64(0), ExpiredPerSec: f64(3.5), Fragmentation: f64(1.08),
			Clients: i64(42), Rejected: i64(0), LastSave: "ok", AOF: &on, AOFLastWrite: "ok"}}}
}

// newTestModel returns a console over src with a fixed clock, sized w×h, after one good poll.
func newTestModel(t testing.TB, src Source, acts Actions, w, h int) *Model {
	t.Helper()
	opt := Options{Target: "10.0.0.5:6379", Mode: "standalone", Source: src, Refresh: time.Second,
		Now: func() time.Time { return clock }, Location: time.UTC, ReadOnlyWhy: "read-only: start with --allow-writes",
		Families: []FamilyInfo{{"flow", "flow:count:<app>:<device>:<ip>:<window>"}, {"ad_revenue", "{<channel>:<ad>}:<window>"}}}
	if acts != nil {
		opt.Actions = acts
	}
	if s, ok := acts.(Session); ok {
		opt.Session = s
	}
	m := New(opt, theme.New(theme.Dark))
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// poll runs one tick and its poll Cmd synchronously, as the Bubble Tea runtime would.
func poll(t testing.TB, m *Model) {
	t.Helper()
	_, cmd := m.Update(tickMsg{gen: m.gen})
	if cmd == nil {
		t.Fatal("a current tick started no poll")
	}
	m.Update(cmd())
}

func press(m *Model, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		_, last = m.Update(keyMsg(k))
	}
	return last
}

// keyMsg builds the key press bubbletea would deliver for k ("tab", "esc", "ctrl+c", "a").
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func screen(m *Model) string { return ansi.Strip(m.Render()) }

func TestKeysSwitchViewsAndQuit(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 120, 36)
	poll(t, m)
	for _, c := range []struct {
		keys []string
		want int
	}{{[]string{"2"}, 1}, {[]string{"tab"}, 2}, {[]string{"6"}, 5}, {[]string{"tab"}, 6}, {[]string{"tab"}, 0}, {[]string{"shift+tab"}, 6}, {[]string{"1"}, 0}} {
		press(m, c.keys...)
		if m.active != c.want {
			t.Fatalf("after %v the active view is %d, want %d", c.keys, m.active, c.want)
		}
	}
	for _, k := range []string{"q", "ctrl+c"} {
		cmd := press(m, k)
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not quit", k)
		}
	}
}

func TestResizeLaysOutToTheTerminal(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 80, 24)
	poll(t, m)
	for _, size := range [][2]int{{80, 24}, {160, 48}, {100, 30}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for v := range viewNames {
			m.active = v
			lines := strings.Split(screen(m), "\n")
			if len(lines) != size[1] {
				t.Fatalf("%dx%d view %d: %d lines", size[0], size[1], v, len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w != size[0] {
					t.Fatalf("%dx%d view %d line %d is %d cells wide: %q", size[0], size[1], v, i, w, l)
				}
			}
		}
	}
}

func TestPollingDropsStaleTicksAndPauses(t *testing.T) {
	src := &fakeSource{status: testStatus(t)}
	m := newTestModel(t, src, nil, 120, 36)
	if cmd := m.Init(); cmd == nil {
		t.Fatal("Init schedules no poll")
	}
	_, cmd := m.Update(tickMsg{gen: m.gen})
	if cmd == nil || !m.polling {
		t.Fatal("a tick started no poll")
	}
	if _, again := m.Update(tickMsg{gen: m.gen}); again != nil {
		t.Fatal("a tick during a poll started a second one")
	}
	_, next := m.Update(cmd())
	if m.polling || next == nil || src.polls != 1 {
		t.Fatalf("after the poll: polling=%v next=%v polls=%d", m.polling, next != nil, src.polls)
	}
	old := m.gen
	press(m, "p")
	if _, c := m.Update(tickMsg{gen: old}); c != nil {
		t.Fatal("a tick from before the pause started a poll")
	}
	if !strings.Contains(screen(m), "paused") {
		t.Error("the header does not say paused")
	}
	cmd = press(m, "p")
	if cmd == nil {
		t.Fatal("resuming schedules no poll")
	}
	if msg, ok := cmd().(tickMsg); !ok || msg.gen != m.gen {
		t.Fatalf("resume scheduled %#v, want a tick of generation %d", msg, m.gen)
	}
}

func TestDisconnectShowsBannerKeepsDataAndReconnects(t *testing.T) {
	src := &fakeSource{status: testStatus(t)}
	m := newTestModel(t, src, nil, 120, 36)
	poll(t, m)
	src.err = errors.New("dial tcp 10.0.0.5:6379: connect: connection refused")
	src.status = snapshot.Status{}
	poll(t, m)
	poll(t, m)
	s := screen(m)
	for _, want := range []string{"Redis unreachable", "retry in 2s (attempt 3)", "connection refused", "● unreachable", "events/s now"} {
		if !strings.Contains(s, want) {
			t.Errorf("disconnected screen lacks %q:\n%s", want, s)
		}
	}
	if !m.c.stale || m.c.status.Snapshot == nil {
		t.Error("the last data was not kept, greyed")
	}
	src.err, src.status = nil, testStatus(t)
	poll(t, m)
	if s := screen(m); strings.Contains(s, "unreachable") || !strings.Contains(s, "● connected") || m.c.stale {
		t.Errorf("after reconnecting:\n%s", s)
	}
}

func TestFilterAndDrillDown(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 120, 36)
	poll(t, m)
	press(m, "2", "/", "a", "d", "enter")
	s := screen(m)
	if strings.Contains(s, "\nflow ") || !strings.Contains(s, "ad_revenue") || !strings.Contains(s, "filter: ad") {
		t.Fatalf("filter 'ad' on the counters table:\n%s", s)
	}
	press(m, "enter")
	s = screen(m)
	for _, want := range []string{"{<channel>:<ad>}:<window>", "TOP DIMS THIS HOUR", "baidu/ad1", "reconcile: 1 dims disagree, off by 19",
		"last 30 days"} {
		if !strings.Contains(s, want) {
			t.Errorf("ad_revenue detail lacks %q:\n%s", want, s)
		}
	}
	press(m, "esc")
	if v := m.views[1].(*counters); v.d.top() != nil {
		t.Fatal("esc did not leave the family")
	}
	press(m, "esc")
	if m.filter != "" || !strings.Contains(screen(m), "flow") {
		t.Fatal("esc did not clear the filter")
	}
}

func TestHostileKeyNamesRenderEscaped(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 160, 48)
	poll(t, m)
	press(m, "3")
	raw := m.Render()
	if strings.Contains(raw, "\x1b[2J") || strings.Contains(raw, "\x1b[31mevil") {
		t.Fatal("a key's escape sequence reached the terminal")
	}
	if s := ansi.Strip(raw); !strings.Contains(s, `app\x1b[2J\x1b[31mevil`) {
		t.Fatalf("the hostile key is not shown escaped:\n%s", s)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 120, 36)
	poll(t, m)
	for _, k := range []string{"i", "t", "r"} {
		if cmd := press(m, k); cmd != nil {
			t.Fatalf("%s in read-only mode returned a command", k)
		}
		if !strings.Contains(screen(m), "read-only: start with --allow-writes") || m.modal != nil {
			t.Fatalf("%s: the reason is not shown:\n%s", k, screen(m))
		}
	}
	if !strings.Contains(screen(m), "READ-ONLY") {
		t.Error("no READ-ONLY badge")
	}
}

func TestInjectTrafficAndRepair(t *testing.T) {
	acts := &fakeActions{counts: snapshot.RepairCounts{KeysSeen: 400, NoTTL: 3, Expired: 2, SkippedPastExpiry: 1}}
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, 120, 36)
	poll(t, m)
	press(m, "2", "down")
	m.Update(press(m, "i")())
	press(m, "t")
	if len(acts.injected) != 1 || acts.injected[0] != "ad_revenue:1000" || !acts.traffic["ad_revenue"] {
		t.Fatalf("inject %v, traffic %v; want both on the selected family", acts.injected, acts.traffic)
	}
	if !strings.Contains(screen(m), "test traffic: ad_revenue") {
		t.Error("the header does not show the running test traffic")
	}

	// A real target: the dry run, then the target's name typed to confirm.
	cmd := press(m, "r")
	m.Update(cmd())
	if s := screen(m); !strings.Contains(s, "2 will get EXPIREAT") || !strings.Contains(s, "Type the target's name (10.0.0.5:6379)") {
		t.Fatalf("repair preview:\n%s", s)
	}
	if c := press(m, "y", "enter"); c != nil {
		t.Fatal("y confirmed a repair of a real target")
	}
	if !strings.Contains(screen(m), "That is not the target's name") {
		t.Errorf("a wrong name is not said:\n%s", screen(m))
	}
	var last tea.Cmd
	for _, r := range "10.0.0.5:6379" {
		last = press(m, string(r))
	}
	if last != nil {
		t.Fatal("typing started the repair before enter")
	}
	cmd = press(m, "enter")
	if cmd == nil {
		t.Fatal("the typed name did not confirm")
	}
	m.Update(cmd())
	if len(acts.repairs) != 2 || !acts.repairs[0] || acts.repairs[1] || m.modal != nil {
		t.Fatalf("repairs %v (dry run first, then the real one), modal %v", acts.repairs, m.modal)
	}
	if !strings.Contains(screen(m), "repair: 2 keys given their expiry") {
		t.Errorf("the outcome is not shown:\n%s", screen(m))
	}
}

// TestGolden compares every view, at 80x24 and 160x48, and the disconnected and read-only
// states, with the files under testdata/ (ANSI stripped). go test ./tui -update rewrites them.
func TestGolden(t *testing.T) {
	acts := &fakeActions{}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for v, name := range viewNames {
			m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, size[0], size[1])
			poll(t, m)
			press(m, fmt.Sprint(v+1))
			golden(t, fmt.Sprintf("%s_%dx%d", strings.ReplaceAll(strings.ToLower(name), " ", "_"), size[0], size[1]), screen(m))
		}
		m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, size[0], size[1])
		poll(t, m)
		press(m, "2", "enter")
		golden(t, fmt.Sprintf("family_%dx%d", size[0], size[1]), screen(m))

		src := &fakeSource{status: testStatus(t)}
		m = newTestModel(t, src, nil, size[0], size[1])
		poll(t, m)
		src.err = errors.New("dial tcp 10.0.0.5:6379: connect: connection refused")
		poll(t, m)
		golden(t, fmt.Sprintf("disconnected_readonly_%dx%d", size[0], size[1]), screen(m))
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// TestTypingIsNotAKey: while the filter line or the repair overlay has the keyboard, letters are
// text (q does not quit, 3 does not switch views); ctrl+c still quits.
func TestTypingIsNotAKey(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, &fakeActions{counts: snapshot.RepairCounts{Expired: 1}}, 120, 36)
	poll(t, m)
	press(m, "2", "/")
	if cmd := press(m, "q", "3"); cmd != nil || m.active != 1 || m.filter != "q3" {
		t.Fatalf("typing q3 in the filter: active %d, filter %q", m.active, m.filter)
	}
	press(m, "backspace", "backspace", "enter")
	m.Update(press(m, "r")())
	if cmd := press(m, "q"); cmd != nil || m.modal == nil || m.modal.typed != "q" {
		t.Fatalf("q in the repair overlay: modal %+v", m.modal)
	}
	if cmd := press(m, "ctrl+c"); cmd == nil {
		t.Fatal("ctrl+c did not quit from the overlay")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c did not quit from the overlay")
	}
}

// TestResumeDuringAPollKeepsPolling: p twice while a poll runs; that poll's result must still
// schedule the next, or the screen would freeze saying "connected".
func TestResumeDuringAPollKeepsPolling(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 120, 36)
	_, running := m.Update(tickMsg{gen: m.gen})
	resume := press(m, "p", "p")
	if _, c := m.Update(resume()); c != nil {
		t.Fatal("a tick during a poll started a second poll")
	}
	_, next := m.Update(running())
	if next == nil {
		t.Fatal("the poll that ran across the pause scheduled nothing: polling stopped")
	}
	// The Cmd is the next refresh tick: running it waits out the refresh (a second).
	msg, ok := next().(tickMsg)
	if !ok || msg.gen != m.gen {
		t.Fatalf("it scheduled %#v, want a tick of generation %d", msg, m.gen)
	}
}

// TestNarrowTerminalsDoNotPanic draws every view and the family detail at the narrowest widths.
func TestNarrowTerminalsDoNotPanic(t *testing.T) {
	for w := 15; w <= 30; w++ {
		for _, h := range []int{5, 8, 24, 60} {
			m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, w, h)
			poll(t, m)
			for v := range viewNames {
				m.active = v
				_ = m.Render()
			}
			press(m, "2", "enter")
			_ = m.Render()
		}
	}
}

// TestUnconfiguredViewsSayHowToConfigure: with no queues, limiters or uniques the views say what
// they will show and the config to add, not a blank.
func TestUnconfiguredViewsSayHowToConfigure(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: snapshot.Status{Snapshot: testSnapshot(t)}}, nil, 120, 36)
	poll(t, m)
	for tab, want := range map[string]string{"4": "[[delay_queue]]", "5": "[[limiter]]", "6": "[[unique]]"} {
		press(m, tab)
		if s := screen(m); !strings.Contains(s, want) || !strings.Contains(s, "none configured") {
			t.Errorf("view %s:\n%s", tab, s)
		}
	}
}

// TestMissingInfoDegradesOnePanel: a user without INFO sees every view, with a note where the
// server's numbers would be.
func TestMissingInfoDegradesOnePanel(t *testing.T) {
	st := testStatus(t)
	st.Server = snapshot.ServerInfo{Err: "INFO refused: NOPERM this user has no permissions to run the 'info' command"}
	m := newTestModel(t, &fakeSource{status: st}, nil, 120, 36)
	poll(t, m)
	s := screen(m)
	if !strings.Contains(s, "INFO refused") || strings.Contains(s, "ops/s") || !strings.Contains(s, "events/s now") || m.err != nil {
		t.Fatalf("overview without INFO:\n%s", s)
	}
}

// TestCancelledRepairsAnswerLate opens the repair overlay, closes it and opens it again, then
// delivers the first overlay's dry run, and a cancelled real repair's failure, late: neither
// touches the overlay now open, which still waits for its own dry run.
func TestCancelledRepairsAnswerLate(t *testing.T) {
	acts := &fakeActions{counts: snapshot.RepairCounts{NoTTL: 3, Expired: 2}}
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, 120, 36)
	poll(t, m)
	first := press(m, "r")
	press(m, "esc")
	second := press(m, "r")
	if m.modal == nil || first == nil || second == nil {
		t.Fatal("r did not open the overlay twice")
	}
	m.Update(repairPreviewMsg{id: 1, err: context.Canceled}) // the first overlay's, cancelled by esc
	if m.modal == nil || m.modal.stage != modalPreviewing || m.modal.err != nil {
		t.Fatalf("a cancelled overlay's late dry run reached the open one: %+v", m.modal)
	}
	m.Update(actionMsg{repair: 1, text: "repair (0 keys given their expiry before it stopped)", err: context.Canceled})
	if m.modal == nil {
		t.Fatal("a cancelled overlay's late repair closed the open one")
	}
	m.Update(second())
	if m.modal == nil || m.modal.stage != modalConfirm || !strings.Contains(screen(m), "2 will get EXPIREAT") {
		t.Fatalf("the open overlay's own dry run did not land:\n%s", screen(m))
	}
}

// TestLimiterRateBeforeASecondSnapshot draws the limiter view from a first snapshot, which has
// no rates between snapshots yet: the rate shown is the hour's average up to when that snapshot
// was taken, not up to the console's clock.
func TestLimiterRateBeforeASecondSnapshot(t *testing.T) {
	st := testStatus(t)
	st.Snapshot.TakenAt = time.Date(2026, 11, 22, 9, 5, 0, 0, time.UTC) // 300 s into the hour; the clock says 09:30
	st.Snapshot.Limiters[0].RejectedPerSec, st.Snapshot.Limiters[0].Rejected = nil, ptr(3000)
	m := newTestModel(t, &fakeSource{status: st}, nil, 160, 40)
	poll(t, m)
	press(m, "5")
	if s := screen(m); !strings.Contains(s, "~"+format.Rate(10)) {
		t.Fatalf("the limiter's rejected/s is not 3,000 over the 300 s before its snapshot (~%s):\n%s", format.Rate(10), s)
	}
}

// TestEscapedValuesAreShownOnce: a value the scanner has escaped is shown as it is, not escaped again.
func TestEscapedValuesAreShownOnce(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 120, 36)
	var v *ttlView
	for _, view := range m.views {
		if tv, ok := view.(*ttlView); ok {
			v = tv
		}
	}
	note := v.exampleNote("not_integer", snapshot.Example{Value: format.Escape("12\x1babc")})
	if want := `value "12\x1babc"`; note != want {
		t.Fatalf("note %q, want %q", note, want)
	}
}

// TestTrafficThatDidNotStartIsNotShown: when test traffic fails to start, the header does not
// claim it runs, and the reason is said.
func TestTrafficThatDidNotStartIsNotShown(t *testing.T) {
	acts := &fakeActions{trafficErr: errors.New("no counter family \"flow\"")}
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, 120, 36)
	poll(t, m)
	press(m, "t")
	s := screen(m)
	if m.traffic["flow"] || strings.Contains(s, "test traffic: flow") || !strings.Contains(s, `test traffic: no counter family "flow"`) {
		t.Fatalf("traffic %v; the failure is not said:\n%s", m.traffic, s)
	}
}

func ptr(n int64) *int64 { return &n }
