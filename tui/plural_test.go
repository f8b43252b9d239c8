package tui

import (
	"regexp"
	"testing"
)

// TestCountsAgree: the Overview's counts agree with their number: one family and one key read
// "1 family · 1 key", never "1 families"; the unclaimed groups the same.
func TestCountsAgree(t *testing.T) {
	st := testStatus(t)
	snap := *st.Snapshot
	snap.Counters = snap.Counters[:1]
	snap.Counters[0].Keys = 1
	snap.Unclaimed.Groups = snap.Unclaimed.Groups[:1]
	st.Snapshot = &snap
	m := newTestModel(t, &fakeSource{status: st}, nil, 120, 36)
	poll(t, m)
	s := screen(m)
	for _, want := range []string{`\b1 family · 1 key\b`, `Unclaimed keys [0-9,]+ in 1 group,`} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("the Overview lacks %s:\n%s", want, s)
		}
	}
	if regexp.MustCompile(`\b1 (families|keys|groups)\b`).MatchString(s) {
		t.Errorf("a count of one in the plural:\n%s", s)
	}
}
