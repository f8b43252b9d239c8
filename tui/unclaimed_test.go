package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

func (a *fakeActions) Claim(ctx context.Context, e discover.Entry) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.claimErr != nil {
		return "", a.claimErr
	}
	a.claimed = append(a.claimed, e)
	return fmt.Sprintf("added [[%s]] %s: counted from the next sweep", e.Table, e.Name), nil
}

func (a *fakeActions) WriteProposal(ctx context.Context, path string, p Proposal) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.writeErr != nil {
		return "", a.writeErr
	}
	a.written = append(a.written, path)
	a.proposals = append(a.proposals, p)
	return fmt.Sprintf("wrote %s: %d groups", path, len(p.Result.Groups)), nil
}

func bytesPtr(n int64) *int64 { return &n }

func strPtr(s string) *string { return &s }

// testGroups are unclaimed groups as a sweep reports them: examples escaped by the scanner, one
// of them a hostile name; an evidence line built from a value holds a raw escape sequence.
func testGroups() []discover.Group {
	return []discover.Group{
		{Pattern: "session:<uuid>", Kind: discover.KindOther, Keys: 48_210, Bytes: bytesPtr(61 << 20), Sampled: 32, Confidence: discover.High,
			Examples: []string{"session:0b8f4a52-58a4-4c1e-9a57-3f1b2c9d8e71", "session:5d1c0e8a-0c55-4f0b-8f6e-7a1b2c3d4e5f"},
			Evidence: []string{"strings (32 of 32 sampled)", "<uuid>: UUIDs, over 32 values", "values: 32 of 32 sampled are text or data, not counts: cache or session values",
				"TTLs from 10m to 30m on 32 of 32 sampled"}},
		{Pattern: "hits:<page>:<window>", Kind: discover.KindCounter, Keys: 1_440, Bytes: bytesPtr(92_160), Sampled: 40, Confidence: discover.High,
			Examples: []string{"hits:home:2026112209", "hits:cart:2026112208"},
			Evidence: []string{"strings (40 of 40 sampled)", "<page>: words, 30 values", "values: integers in 40 of 40 sampled, up to 9,120",
				"windows: hour yyyyMMddHH, 2026112010 … 2026112209 (48 values)", "retention: TTLs reach 48h past their window's end"},
			Entry: &discover.Entry{Table: "counter", Name: "hits", Pattern: "hits:<page>:<window>", HourFormat: "yyyyMMddHH", HourRetention: "48h"}},
		{Pattern: "rl:<user>", Kind: discover.KindFixedLimiter, Keys: 212, Bytes: bytesPtr(16_960), Sampled: 20, Confidence: discover.Low,
			Examples: []string{"rl:user17", "rl:user4"},
			Evidence: []string{"strings (20 of 20 sampled)", "small integers (up to 30) with TTLs up to 1m: a fixed-window limiter; limit = the highest count seen: set your real limit",
				"values: 14 of 20 sampled are not integers: \"\x1b]0;pwned\x07\""},
			Entry: &discover.Entry{Table: "limiter", Name: "rl", Pattern: "rl:<user>", LimiterKind: "fixed", Window: "1m", Limit: 30}},
		{Pattern: "evil:<part>", Kind: discover.KindUndecided, Keys: 3, Sampled: 3, Confidence: discover.Low,
			Examples: []string{format.Escape("evil:\x1b[2J\x1b[31mred"), format.Escape("evil:\u202eabc")},
			Evidence: []string{"the sampled keys are of different types: not one structure"}},
		{Pattern: "jobs:delayed", Kind: discover.KindDelayQueue, Keys: 1, Bytes: bytesPtr(4_096), Sampled: 1, Confidence: discover.Medium,
			Examples: []string{"jobs:delayed"},
			Evidence: []string{"a sorted set of 120 tasks", "scores: ms times, 3 overdue, the newest 2h ahead"},
			Entry:    &discover.Entry{Table: "delay_queue", Name: "jobs_delayed", Key: "jobs:delayed", ScoreUnit: "ms", InFlight: strPtr("")}},
	}
}

// withUnclaimed gives snap the unclaimed keys of its last sweep.
func withUnclaimed(snap *snapshot.Snapshot) *snapshot.Snapshot {
	snap.Unclaimed = discover.Result{Keys: 49_866, Bytes: bytesPtr(61<<20 + 113_216), Sampled: 96, Groups: testGroups(),
		BytesNote: "estimated: each group's sampled keys' mean MEMORY USAGE times its keys; 3 keys in groups with no sample are left out"}
	return snap
}

// sweepUnderWay is what the sweep after it has found so far: fewer keys, one group.
func sweepUnderWay() discover.Result {
	return discover.Result{Keys: 700, Sampled: 8, Groups: testGroups()[1:2], BytesNote: "MEMORY USAGE refused: NOPERM"}
}

// selectGroup moves the Unclaimed view's selection to the group of pattern.
func selectGroup(t *testing.T, m *Model, pattern string) {
	t.Helper()
	press(m, "7")
	for range 10 {
		press(m, "up")
	}
	for range 10 {
		if g := m.views[m.active].(*unclaimed).selected(); g != nil && g.Pattern == pattern {
			return
		}
		press(m, "down")
	}
	t.Fatalf("no group %s to select:\n%s", pattern, screen(m))
}

func TestUnclaimedViewListsGroupsWithTheSelectedOnesDetail(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, &fakeActions{}, 120, 40)
	poll(t, m)
	selectGroup(t, m, "hits:<page>:<window>")
	s := screen(m)
	for _, want := range []string{"last complete sweep: 431 keys, 0s ago", "sweep under way: 1,200 keys seen", "49,866 unclaimed keys in 5 groups", "memory ~61.1 MiB", "3 keys in groups with no sample are left",
		"session:<uuid>", "other", "48,210", "[[counter]]", "PROPOSED ENTRY", `name = "hits"`, `hour_retention = "48h"`,
		"retention: TTLs reach 48h", "hits:home:2026112209", "a: add to this session, counted from the next sweep"} {
		if !strings.Contains(s, want) {
			t.Errorf("the Unclaimed view lacks %q:\n%s", want, s)
		}
	}
	press(m, "/", "d", "e", "l", "enter")
	if s := screen(m); strings.Contains(s, "session:<uuid>") || !strings.Contains(s, "jobs:delayed") || !strings.Contains(s, `score_unit = "ms"`) {
		t.Fatalf("filter 'del':\n%s", s)
	}
}

func TestUnclaimedViewDuringTheFirstSweep(t *testing.T) {
	st := testStatus(t)
	st.Snapshot = nil
	m := newTestModel(t, &fakeSource{status: st}, &fakeActions{}, 120, 40)
	poll(t, m)
	press(m, "7")
	s := screen(m)
	for _, want := range []string{"first sweep under way: 1,200 keys seen", "700 unclaimed keys in 1 group", "memory unknown (MEMORY USAGE refused: NOPERM)", "hits:<page>:<window>"} {
		if !strings.Contains(s, want) {
			t.Errorf("during the first sweep the view lacks %q:\n%s", want, s)
		}
	}
}

func TestUnclaimedHostileTextIsEscaped(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, &fakeActions{}, 160, 48)
	poll(t, m)
	selectGroup(t, m, "evil:<part>")
	raw := m.Render()
	if strings.Contains(raw, "\x1b[2J") || strings.Contains(raw, "\x1b[31mred") || strings.Contains(raw, "\u202e") {
		t.Fatal("an example's escape sequence reached the terminal")
	}
	if s := ansi.Strip(raw); !strings.Contains(s, `evil:\x1b[2J\x1b[31mred`) || !strings.Contains(s, `evil:\u{202e}abc`) {
		t.Fatalf("the hostile examples are not shown escaped:\n%s", s)
	}
	selectGroup(t, m, "rl:<user>")
	if raw := m.Render(); strings.Contains(raw, "\x1b]0;pwned") || !strings.Contains(ansi.Strip(raw), `\x1b]0;pwned\x07`) {
		t.Fatalf("an evidence line's escape sequence is not escaped:\n%s", ansi.Strip(raw))
	}
}

func TestAddGroupToSession(t *testing.T) {
	acts := &fakeActions{}
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, 120, 40)
	poll(t, m)
	selectGroup(t, m, "hits:<page>:<window>")
	cmd := press(m, "a")
	if cmd == nil {
		t.Fatal("a returned no command")
	}
	if len(acts.claimed) != 0 {
		t.Fatal("the entry was claimed in Update, not in the command")
	}
	if !strings.Contains(screen(m), "adding…") {
		t.Errorf("the row does not say it is being added:\n%s", screen(m))
	}
	m.Update(cmd())
	if len(acts.claimed) != 1 || acts.claimed[0].Name != "hits" || acts.claimed[0].Pattern != "hits:<page>:<window>" {
		t.Fatalf("claimed %+v", acts.claimed)
	}
	s := screen(m)
	if !strings.Contains(s, "added [[counter]] hits: counted from the next sweep") || !strings.Contains(s, "added") {
		t.Errorf("the outcome is not said:\n%s", s)
	}
	if press(m, "a") != nil {
		t.Error("a second a on an added group claimed it again")
	}

	// No entry: nothing to claim, and the reason.
	selectGroup(t, m, "session:<uuid>")
	if press(m, "a") != nil || !strings.Contains(screen(m), "hourglass reads no structure from these keys") {
		t.Errorf("a on a group with no entry:\n%s", screen(m))
	}

	// Low confidence: asked first; esc cancels, y adds.
	selectGroup(t, m, "rl:<user>")
	if press(m, "a") != nil || m.prompt == nil || !strings.Contains(screen(m), "Add a low-confidence entry?") {
		t.Fatalf("a on a low-confidence group did not ask:\n%s", screen(m))
	}
	press(m, "esc")
	if m.prompt != nil || len(acts.claimed) != 1 {
		t.Fatal("esc did not cancel")
	}
	press(m, "a")
	cmd = press(m, "y")
	if cmd == nil || m.prompt != nil {
		t.Fatal("y did not add the low-confidence entry")
	}
	m.Update(cmd())
	if len(acts.claimed) != 2 || acts.claimed[1].Table != "limiter" || acts.claimed[1].Limit != 30 {
		t.Fatalf("claimed %+v", acts.claimed)
	}

	// A refusal is said, on the row and in the footer.
	acts.claimErr = errors.New(`session:2: lock.name: the config in use already has a [[delay_queue]] named "jobs_delayed"`)
	selectGroup(t, m, "jobs:delayed")
	m.Update(press(m, "a")())
	if s := screen(m); !strings.Contains(s, "refused") || !strings.Contains(s, "not added: session:2") {
		t.Errorf("a refused claim is not said:\n%s", s)
	}
}

func TestWriteProposalAsksForAPathAndNeverOverwrites(t *testing.T) {
	acts := &fakeActions{writeErr: errors.New("open taken.toml: file exists: name another file")}
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, acts, 120, 40)
	poll(t, m)
	press(m, "7")
	if press(m, "w") != nil || m.prompt == nil || !strings.Contains(screen(m), "Write the proposal to a new file") {
		t.Fatalf("w did not open the path prompt:\n%s", screen(m))
	}
	if press(m, "enter") != nil || !strings.Contains(screen(m), "type the path of a new file") {
		t.Fatalf("enter with no path:\n%s", screen(m))
	}
	var last = press(m, strings.Split("taken.toml", "")...) // q, 1 and the like are text here
	if last != nil || !strings.Contains(screen(m), "> taken.toml") {
		t.Fatalf("typing the path:\n%s", screen(m))
	}
	cmd := press(m, "enter")
	if cmd == nil {
		t.Fatal("enter did not write")
	}
	m.Update(cmd())
	if m.prompt == nil || !strings.Contains(screen(m), "file exists: name another file") {
		t.Fatalf("a refused path did not keep the prompt open with the reason:\n%s", screen(m))
	}
	acts.writeErr = nil
	for range len("taken.toml") {
		press(m, "backspace")
	}
	press(m, strings.Split("quiet.toml", "")...)
	m.Update(press(m, "enter")())
	if len(acts.written) != 1 || acts.written[0] != "quiet.toml" || m.prompt != nil {
		t.Fatalf("written %v, prompt %+v", acts.written, m.prompt)
	}
	if !strings.Contains(screen(m), "wrote quiet.toml: 5 groups") {
		t.Errorf("the status line does not say what was written:\n%s", screen(m))
	}
}

// TestUnclaimedKeysOffWithoutASession: a console with no Session says a and w are off, and a and
// w elsewhere point at the view.
func TestUnclaimedKeysOffWithoutASession(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 120, 40)
	poll(t, m)
	if press(m, "a") != nil || !strings.Contains(screen(m), "a and w act on the Unclaimed view (7)") {
		t.Errorf("a on the overview:\n%s", screen(m))
	}
	selectGroup(t, m, "hits:<page>:<window>")
	if press(m, "a") != nil || press(m, "w") != nil || m.prompt != nil || !strings.Contains(screen(m), "are off in this console") {
		t.Errorf("a and w without a session:\n%s", screen(m))
	}
}

func TestOverviewShowsUnclaimedKeys(t *testing.T) {
	m := newTestModel(t, &fakeSource{status: testStatus(t)}, nil, 100, 30)
	poll(t, m)
	s := screen(m)
	for _, want := range []string{"Unclaimed keys 49,866 in 5 groups, memory ~61.1 MiB", "session:<uuid>", "48,210 keys", "hits:<page>:<window>", "rl:<user>"} {
		if !strings.Contains(s, want) {
			t.Errorf("the overview lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "jobs:delayed") {
		t.Error("the overview lists more than the 3 largest groups")
	}
	st := testStatus(t)
	st.Snapshot.Unclaimed = discover.Result{Keys: 12, BytesNote: "MEMORY USAGE refused: NOPERM", Groups: testGroups()[3:4]}
	m = newTestModel(t, &fakeSource{status: st}, nil, 120, 36)
	poll(t, m)
	if s := screen(m); !strings.Contains(s, "memory unknown (MEMORY USAGE refused: NOPERM)") {
		t.Errorf("unknown memory is not said with its reason:\n%s", s)
	}
}

// TestGoldenUnclaimedEntry draws the Unclaimed view with a group that has an entry selected and
// added to the session, and the path prompt, at 80x24 and 160x48.
func TestGoldenUnclaimedEntry(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		m := newTestModel(t, &fakeSource{status: testStatus(t)}, &fakeActions{}, size[0], size[1])
		poll(t, m)
		selectGroup(t, m, "hits:<page>:<window>")
		m.Update(press(m, "a")())
		selectGroup(t, m, "jobs:delayed")
		golden(t, fmt.Sprintf("unclaimed_entry_%dx%d", size[0], size[1]), screen(m))
		press(m, "w", "n", "e", "w", ".", "t", "o", "m", "l")
		golden(t, fmt.Sprintf("unclaimed_write_%dx%d", size[0], size[1]), screen(m))
	}
}
