package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
)

// fakeInspector answers the drill-down's reads with fixed data and records what was asked.
type fakeInspector struct {
	mu    sync.Mutex
	asked []string
	pages map[snapshot.TaskSection][]snapshot.Task
	// limKey, when set, is the answer for every limiter key (a library's, say).
	limKey *snapshot.LimiterKeyDetail
}

func (f *fakeInspector) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, s)
}

func (f *fakeInspector) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asked) == 0 {
		return ""
	}
	return f.asked[len(f.asked)-1]
}

func (f *fakeInspector) Dim(ctx context.Context, family, key string) (snapshot.DimDetail, error) {
	f.note("dim " + family)
	d := snapshot.DimDetail{Family: family, ReadAt: clock}
	for h := 29; h >= 0; h-- {
		at := clock.Truncate(time.Hour).Add(-time.Duration(h) * time.Hour)
		w := snapshot.WindowValue{Granularity: "hour", Window: at.Format("2006010215"), Start: at, Key: "flow:count:app0:ios:10.0.0.0:" + at.Format("2006010215"),
			TTLMS: int64(47 * time.Hour / time.Millisecond), MemoryBytes: ptr(56)}
		w.ExpiresAt = clock.Add(47 * time.Hour)
		w.WantExpiresAt = w.ExpiresAt
		w.Value = ptr(int64(10 * (h%7 + 1)))
		switch h {
		case 0: // the current hour: no TTL, a leak
			w.TTLMS, w.ExpiresAt = -1, time.Time{}
		case 5:
			w.Value, w.Missing, w.MemoryBytes = nil, true, nil
			w.TTLMS = -2
		}
		d.Windows = append(d.Windows, w)
	}
	d.Windows = append(d.Windows, snapshot.WindowValue{Granularity: "day", Window: "20261122", Key: "flow:count:app0:ios:10.0.0.0:20261122",
		Value: ptr(1234), TTLMS: 3_600_000, ExpiresAt: clock.Add(time.Hour), WantExpiresAt: clock.Add(2 * time.Hour), MemoryBytes: ptr(56)})
	return d, nil
}

func (f *fakeInspector) TaskSections(ref snapshot.QueueRef) []snapshot.TaskSection {
	if ref.Kind == snapshot.QueueJob {
		return []snapshot.TaskSection{snapshot.SectionWaiting}
	}
	return []snapshot.TaskSection{snapshot.SectionDue, snapshot.SectionLater, snapshot.SectionInFlight}
}

func (f *fakeInspector) Tasks(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, offset int64, count int) (snapshot.TaskPage, error) {
	f.note(fmt.Sprintf("tasks %s %s %s %d %d", ref.Kind, ref.Key+ref.Queue, sec, offset, count))
	all := f.pages[sec]
	p := snapshot.TaskPage{Section: sec, Key: ref.Key + ref.Queue, Offset: offset, Total: int64(len(all)), ReadAt: clock}
	if offset < int64(len(all)) {
		p.Tasks = all[offset:min(int(offset)+count, len(all))]
	}
	return p, nil
}

func (f *fakeInspector) LimiterKey(ctx context.Context, limiter, key string) (snapshot.LimiterKeyDetail, error) {
	f.note("limiter " + limiter + " " + key)
	if f.limKey != nil {
		return *f.limKey, nil
	}
	return snapshot.LimiterKeyDetail{Limiter: limiter, Key: key, Hits: 104, Limit: 100, TTLMS: 59_000, BucketMS: 2_000,
		Buckets: []int64{1, 3, 5, 2, 8, 13, 4, 2, 1, 0, 6, 9}, ReadAt: clock, Command: "redis-cli -h 10.0.0.5 -p 6379 ZRANGE " + key + " 0 -1"}, nil
}

func (f *fakeInspector) LockHolder(ctx context.Context, lock, key string) (snapshot.LockDetail, error) {
	f.note("lock " + lock + " " + key)
	return snapshot.LockDetail{Lock: lock, Key: key, Holder: "pid-4711", PTTLMS: -1, HeldMS: -1, ReadAt: clock,
		Command: "redis-cli -h 10.0.0.5 -p 6379 GET " + key}, nil
}

func (f *fakeInspector) RedisCLI(args ...string) string {
	return "redis-cli -h 10.0.0.5 -p 6379 " + strings.Join(args, " ")
}

// fakeKeyActions records the drill-down's writes.
type fakeKeyActions struct {
	mu   sync.Mutex
	done []string
}

func (a *fakeKeyActions) record(s string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = append(a.done, s)
	return "did " + s, nil
}

func (a *fakeKeyActions) ActOnTask(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, t snapshot.Task, act snapshot.TaskAction) (string, error) {
	return a.record(fmt.Sprintf("%s %s %s %q", act, ref.Key+ref.Queue, sec, t.Member))
}

func (a *fakeKeyActions) RepairKey(ctx context.Context, family, key string) (string, error) {
	return a.record("repair " + family + " " + key)
}

func (a *fakeKeyActions) ReleaseLock(ctx context.Context, lock, key, holder string) (string, error) {
	return a.record("release " + lock + " " + key + " " + holder)
}

// hostilePages are a delay queue's sections: plain and JSON tasks, escape sequences, binary, and
// the preview of a 1 MB payload.
func hostilePages() map[snapshot.TaskSection][]snapshot.Task {
	var due []snapshot.Task
	for i := range 60 {
		due = append(due, snapshot.Task{Member: fmt.Sprint("task-", i), Payload: fmt.Sprintf(`{ "order": %d,  "items": [1, 2] }`, i),
			PayloadBytes: 30, Due: clock.Add(-time.Duration(60-i) * time.Minute)})
	}
	big := strings.Repeat("x", 4096)
	due[1] = snapshot.Task{Member: "evil\x1b[2J\x1b[31m", Payload: "red\x1b[31m\x07bell\x00nul\xff", PayloadBytes: 14, Due: clock.Add(-59 * time.Minute)}
	due[2] = snapshot.Task{Member: "big", Payload: big, PayloadBytes: 1 << 20, Due: clock.Add(-58 * time.Minute)}
	later := []snapshot.Task{{Member: "soon", Payload: "soon", PayloadBytes: 4, Due: clock.Add(90 * time.Second)}}
	inflight := []snapshot.Task{{Member: "c1|job-9", Payload: "job-9", PayloadBytes: 5, Deadline: clock.Add(-5 * time.Second)}}
	return map[snapshot.TaskSection][]snapshot.Task{snapshot.SectionDue: due, snapshot.SectionLater: later, snapshot.SectionInFlight: inflight,
		snapshot.SectionWaiting: {{Member: `{"class":"HardJob","args":[1],"jid":"b4a5"}`, ID: "b4a5", Payload: `{"class":"HardJob","args":[1],"jid":"b4a5"}`,
			PayloadBytes: 42, Enqueued: clock.Add(-3 * time.Minute)}}}
}

// drillModel is a console with the fake Inspector (and KeyActions when acts is set), polled once.
func drillModel(t *testing.T, acts KeyActions, w, h int) (*Model, *fakeInspector) {
	t.Helper()
	in := &fakeInspector{pages: hostilePages()}
	opt := Options{Target: "10.0.0.5:6379", Mode: "standalone", Source: &fakeSource{status: testStatus(t)}, Refresh: time.Second,
		Now: func() time.Time { return clock }, Location: time.UTC, ReadOnlyWhy: "read-only: start with --allow-writes",
		Families: []FamilyInfo{{"flow", "flow:count:<app>:<device>:<ip>:<window>"}}, Inspector: in, KeyActions: acts}
	m := New(opt, theme.New(theme.Dark))
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	poll(t, m)
	return m, in
}

// drive presses keys and runs what each returns, as the runtime would (reads, confirmations and
// writes; never a timer).
func drive(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(drillKey(k))
		run(m, cmd)
	}
}

func run(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			run(m, c)
		}
	case loadedMsg, askMsg, keyActionMsg:
		_, next := m.Update(msg)
		run(m, next)
	}
}

func drillKey(k string) tea.KeyPressMsg {
	switch k {
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	}
	return keyMsg(k)
}

// Every drill-down level at 80×24 and 120×36, against the files under testdata/.
func TestGoldenDrillDown(t *testing.T) {
	screens := map[string][]string{
		"dim":           {"2", "enter", "enter"},
		"dim_command":   {"2", "enter", "enter", "y"},
		"tasks_due":     {"4", "enter"},
		"tasks_later":   {"4", "enter", "right"},
		"tasks_sidekiq": {"4", "down", "down", "down", "enter"},
		"limiter_keys":  {"5", "enter"},
		"limiter_key":   {"5", "enter", "enter"},
		"lock_holders":  {"5", "down", "enter"},
		"lock":          {"5", "down", "enter", "down", "enter"},
		"confirm":       {"4", "enter", "x"},
	}
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		for name, keys := range screens {
			m, _ := drillModel(t, &fakeKeyActions{}, size[0], size[1])
			drive(m, keys...)
			golden(t, fmt.Sprintf("drill_%s_%dx%d", name, size[0], size[1]), screen(m))
		}
	}
}

// enter goes down, esc comes back to exactly where the operator was: selection, scroll and each
// level's own filter; the breadcrumb says where the screen is.
func TestDrillDownKeepsThePlace(t *testing.T) {
	m, in := drillModel(t, nil, 120, 36)
	drive(m, "2", "enter", "/", "a", "p", "p", "0", "enter", "down", "enter")
	s := screen(m)
	if !strings.Contains(s, "Counters › flow › ") || in.last() != "dim flow" {
		t.Fatalf("enter on a dim did not open it (asked %q):\n%s", in.last(), s)
	}
	if m.filter != "" {
		t.Errorf("the dim's level starts with the family's filter %q", m.filter)
	}
	drive(m, "esc")
	v := m.views[1].(*counters)
	fl, ok := v.d.top().(*familyLevel)
	if !ok || fl.name != "flow" || fl.filter != "app0" || fl.rows.sel != 1 || m.filter != "app0" {
		t.Fatalf("esc from the dim: level %+v, filter %q", v.d.top(), m.filter)
	}
	drive(m, "esc")
	if v.d.top() != nil || m.filter != "" || !strings.Contains(screen(m), "FAMILY") {
		t.Fatalf("esc from the family: level %+v, filter %q", v.d.top(), m.filter)
	}
}

// A queue's tasks: the oldest due first, pages with ] and [, sections with → and ←, each read
// only as a window of the section.
func TestTaskPagesAndSections(t *testing.T) {
	m, in := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter")
	if in.last() != "tasks delay delay:orders due 0 50" {
		t.Fatalf("enter on the delay queue asked %q", in.last())
	}
	s := screen(m)
	if !strings.Contains(s, `{"order":0,"items":[1,2]}`) || !strings.Contains(s, "tasks 1–50 of 60") {
		t.Fatalf("the first page (JSON compact, its place):\n%s", s)
	}
	drive(m, "]")
	if in.last() != "tasks delay delay:orders due 50 50" || !strings.Contains(screen(m), "tasks 51–60 of 60") {
		t.Fatalf("] asked %q:\n%s", in.last(), screen(m))
	}
	drive(m, "right")
	if in.last() != "tasks delay delay:orders later 0 50" || !strings.Contains(screen(m), "in 1m30s") {
		t.Fatalf("→ asked %q:\n%s", in.last(), screen(m))
	}
	drive(m, "left", "left")
	if in.last() != "tasks delay delay:orders in_flight 0 50" || !strings.Contains(screen(m), "DEADLINE") {
		t.Fatalf("← from due asked %q:\n%s", in.last(), screen(m))
	}
}

// Hostile task names and payloads are escaped and cut; no line runs past the width.
func TestHostilePayloadsRenderEscapedAndCut(t *testing.T) {
	m, _ := drillModel(t, nil, 80, 24)
	drive(m, "4", "enter")
	raw := m.Render()
	if strings.Contains(raw, "\x1b[31m\x07") || strings.Contains(raw, "\x00") || strings.Contains(raw, "\x1b[2J") {
		t.Fatal("a payload's control bytes reached the terminal")
	}
	s := ansi.Strip(raw)
	if !strings.Contains(s, `red\x1b[31m\x07bell\x00nul\xff`) && !strings.Contains(s, `red\x1b[31m\x07bell`) {
		t.Fatalf("the hostile payload is not shown escaped:\n%s", s)
	}
	if !strings.Contains(s, "1.0 MiB") {
		t.Errorf("the 1 MB task does not say its size:\n%s", s)
	}
	for i, line := range strings.Split(s, "\n") {
		if w := ansi.StringWidth(line); w > 80 {
			t.Errorf("line %d is %d cells wide: %q", i, w, line)
		}
	}
}

// Writes ask first (the target's name typed on a real Redis), act on the selected task only,
// say what they did and read the level again; read-only, they say why not and ask nothing.
func TestTaskActionsConfirmAndRefuse(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter", "x")
	if m.keyConfirm != nil || !strings.Contains(screen(m), "Delete one task is off: read-only") {
		t.Fatalf("a read-only console asked to delete:\n%s", screen(m))
	}
	acts := &fakeKeyActions{}
	m, in := drillModel(t, acts, 120, 36)
	drive(m, "4", "enter", "down", "x")
	if m.keyConfirm == nil || !strings.Contains(screen(m), "Type the target's name (10.0.0.5:6379)") {
		t.Fatalf("x did not ask:\n%s", screen(m))
	}
	drive(m, "y", "enter")
	if len(acts.done) != 0 || !strings.Contains(screen(m), "That is not the target's name") {
		t.Fatalf("a wrong name wrote: %v", acts.done)
	}
	for _, r := range "10.0.0.5:6379" {
		drive(m, string(r))
	}
	drive(m, "enter")
	if len(acts.done) != 1 || acts.done[0] != `delete delay:orders due "evil\x1b[2J\x1b[31m"` {
		t.Fatalf("the write was %v", acts.done)
	}
	if !strings.Contains(screen(m), "did delete") || in.last() != "tasks delay delay:orders due 0 50" {
		t.Errorf("the outcome is not said or the page not read again (asked %q):\n%s", in.last(), screen(m))
	}
	drive(m, "n") // a due task is due already
	if m.keyConfirm != nil || !strings.Contains(screen(m), "n runs a task that is not yet due") {
		t.Errorf("n on a due task:\n%s", screen(m))
	}
}

// e repairs the selected window's key, u releases a lock without a TTL; esc cancels and writes
// nothing.
func TestKeyRepairAndLockRelease(t *testing.T) {
	acts := &fakeKeyActions{}
	m, _ := drillModel(t, acts, 120, 36)
	drive(m, "2", "enter", "enter", "e", "esc")
	if len(acts.done) != 0 || !strings.Contains(screen(m), "cancelled, nothing written") {
		t.Fatalf("esc wrote %v", acts.done)
	}
	drive(m, "e")
	for _, r := range "10.0.0.5:6379" {
		drive(m, string(r))
	}
	drive(m, "enter")
	if len(acts.done) != 1 || !strings.HasPrefix(acts.done[0], "repair flow flow:count:app0:ios:10.0.0.0:") {
		t.Fatalf("e wrote %v", acts.done)
	}
	drive(m, "5", "down", "enter", "down", "enter", "u")
	for _, r := range "10.0.0.5:6379" {
		drive(m, string(r))
	}
	drive(m, "enter")
	if len(acts.done) != 2 || acts.done[1] != "release jobs lock:job:stuck pid-4711" {
		t.Fatalf("u wrote %v", acts.done)
	}
}

// The same hour yesterday is found by the wall clock of the family's zone: 25 windows back on
// the day the clocks go back, 23 on the day they go forward.
func TestSameHourYesterdayAcrossAClockChange(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		now  time.Time
		back int
	}{
		{time.Date(2026, 11, 1, 12, 0, 0, 0, ny), 25}, // 01:00 happens twice
		{time.Date(2026, 3, 8, 12, 0, 0, 0, ny), 23},  // 02:00 never happens
		{time.Date(2026, 6, 8, 12, 0, 0, 0, ny), 24},
	} {
		var hours []snapshot.WindowValue
		for i := 30; i >= 0; i-- {
			hours = append(hours, snapshot.WindowValue{Granularity: "hour", Start: c.now.Add(-time.Duration(i) * time.Hour), Value: ptr(int64(i))})
		}
		if got := sameHourYesterday(hours); got != fmt.Sprint(c.back) {
			t.Errorf("%v: the same hour yesterday is %s windows back, want %d", c.now, got, c.back)
		}
	}
}

// A tuple's windows (up to 134 keys, charged to the sweep's budget) are read again by the polls
// at most every dimEvery.
func TestDimIsReadAgainAtMostEveryFewSeconds(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "2", "enter", "enter")
	v := m.views[1].(*counters)
	if v.refresh() != nil {
		t.Fatal("a poll read the tuple again right after it was read")
	}
	v.d.top().(*dimLevel).at = clock.Add(-dimEvery)
	if v.refresh() == nil {
		t.Fatal("a poll did not read the tuple again after dimEvery")
	}
}
