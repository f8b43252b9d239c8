package tui

import (
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// TestInferredEntriesInTheHeader: with no config file the header says how many entries were
// inferred (and how many count from the next sweep), w writes them from any view, and the empty
// panels and views say none was found among the keys, not that none is configured.
func TestInferredEntriesInTheHeader(t *testing.T) {
	st := testStatus(t)
	st.Inferred = &snapshot.Inferred{Entries: []discover.Entry{{Table: "counter", Name: "hits"}, {Table: "lock", Name: "mutex"}}, Pending: 1}
	st.Snapshot.Limiters, st.Snapshot.Uniques = nil, nil
	acts := &fakeActions{}
	m := newTestModel(t, &fakeSource{status: st}, acts, 140, 40)
	poll(t, m)
	s := screen(m)
	if !strings.Contains(s, "no config: 2 entries inferred (1 from the next sweep), w saves") {
		t.Fatalf("the header does not say the entries are inferred:\n%s", s)
	}
	if !strings.Contains(s, "none found among the keys") || strings.Contains(s, "none configured") {
		t.Errorf("the limiters panel with the entries inferred:\n%s", s)
	}
	if press(m, "w") != nil || m.prompt == nil || !strings.Contains(screen(m), "Write the proposal to a new file") {
		t.Fatalf("w on the overview did not open the path prompt:\n%s", screen(m))
	}
	press(m, strings.Split("mine.toml", "")...)
	m.Update(press(m, "enter")())
	if len(acts.written) != 1 || acts.written[0] != "mine.toml" {
		t.Fatalf("written %v", acts.written)
	}
	press(m, "6")
	if s := screen(m); !strings.Contains(s, "Uniques: none found among the keys") {
		t.Errorf("the Uniques view with the entries inferred:\n%s", s)
	}

	// With a config, w stays the Unclaimed view's.
	m = newTestModel(t, &fakeSource{status: testStatus(t)}, &fakeActions{}, 140, 40)
	poll(t, m)
	if press(m, "w") != nil || m.prompt != nil || strings.Contains(screen(m), "inferred") {
		t.Errorf("w on the overview with a config:\n%s", screen(m))
	}
}

// TestInferredLimitersThatWaitForTheirLimit: with the entries inferred, a limiter found among the
// keys whose limit they do not hold is not counted, and the Overview says so rather than that
// none was found; beside counted limiters it is named as one more not counted.
func TestInferredLimitersThatWaitForTheirLimit(t *testing.T) {
	st := testStatus(t)
	st.Inferred = &snapshot.Inferred{Entries: []discover.Entry{{Table: "counter", Name: "hits"}}}
	snap := *st.Snapshot
	snap.Limiters = nil
	snap.Unclaimed.Groups = append(snap.Unclaimed.Groups, discover.Group{Pattern: "rlflx:<key>", Kind: discover.KindLimiterLibrary, Keys: 4,
		Confidence: discover.Medium, Entry: &discover.Entry{Table: "limiter", Name: "rate-limiter-flexible", Layout: "rate-limiter-flexible",
			Window: "1m", Limit: 8, Guessed: []string{"window", "limit"}}})
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, &fakeActions{}, 140, 40)
	poll(t, m)
	if s := screen(m); !strings.Contains(s, "1 found, not counted: their keys") {
		t.Errorf("the limiters panel with a limiter waiting for its limit:\n%s", s)
	}
	with := testStatus(t)
	with.Inferred, with.Snapshot.Unclaimed = st.Inferred, snap.Unclaimed
	m = newTestModel(t, &fakeSource{status: with}, &fakeActions{}, 140, 40)
	poll(t, m)
	if s := screen(m); len(with.Snapshot.Limiters) == 0 || !strings.Contains(s, "1 more not counted: no limit in their keys") {
		t.Errorf("the limiters panel with counted limiters and one waiting:\n%s", s)
	}
}
