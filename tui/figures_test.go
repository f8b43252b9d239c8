package tui

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/hourglass-dev/hourglass/snapshot"
)

const ceiling = "≥9,223,372,036,854,775,807"

// saturatedStatus is the test status with flow's current hour, page_uv's current day and the
// api limiter's hits summed past the int64 range, and no live read (whose estimates would show
// in place of flow's sweep totals).
func saturatedStatus(t *testing.T) snapshot.Status {
	st := testStatus(t)
	st.Families = nil
	s := st.Snapshot
	for i := range s.Counters {
		for j := range s.Counters[i].Windows {
			if w := &s.Counters[i].Windows[j]; s.Counters[i].Family == "flow" && w.Current {
				w.Total, w.Saturated = math.MaxInt64, true
			}
		}
	}
	s.Uniques[0].Windows[1].Count, s.Uniques[0].Windows[1].Saturated = math.MaxInt64, true
	s.Limiters[0].Hits, s.Limiters[0].HitsSaturated = math.MaxInt64, true
	return st
}

// TestSaturatedTotalsShowABound: a total that passed the int64 range shows ≥ before it wherever
// the console shows it, at 80 and 120 columns: the overview's sum over families (which must not
// wrap around to a negative), the counters table and a family's detail, the uniques' count and
// the limiters' hits.
func TestSaturatedTotalsShowABound(t *testing.T) {
	for _, w := range []int{80, 120} {
		for _, c := range []struct {
			keys []string
			what string
			also string
		}{
			{[]string{"1"}, "the overview's this hour", ""},
			{[]string{"2"}, "the counters table", ""},
			{[]string{"2", "enter"}, "flow's detail", "≤0.0%"}, // a top dim's share of a total at least that: at most
			{[]string{"6"}, "the uniques' count", ""},
			{[]string{"5"}, "the limiters' hits", ""},
		} {
			m := newTestModel(t, &fakeSource{status: saturatedStatus(t)}, nil, w, 40)
			poll(t, m)
			press(m, c.keys...)
			s := screen(m)
			if !strings.Contains(s, ceiling) || !strings.Contains(s, c.also) {
				t.Errorf("at %d columns %s does not show %s %s:\n%s", w, c.what, ceiling, c.also, s)
			}
			if strings.Contains(s, "-9,223,372") || strings.Contains(s, "9,223,372,036,854,775,807") && !strings.Contains(s, ceiling) {
				t.Errorf("at %d columns %s shows the total unmarked or wrapped:\n%s", w, c.what, s)
			}
			for i, line := range strings.Split(s, "\n") {
				if ansi.StringWidth(line) > w {
					t.Errorf("at %d columns line %d of %s is %d wide: %q", w, i, c.what, ansi.StringWidth(line), line)
				}
			}
		}
	}
}

// TestSkippedUnionSaysHowMuch: a bitmap union the sweep's budget left unread shows as skipped,
// with what it would have read, never as 0.
func TestSkippedUnionSaysHowMuch(t *testing.T) {
	st := testStatus(t)
	u := &st.Snapshot.Uniques[0]
	u.Kind, u.Union7d, u.Union30d = "bitmap", nil, nil
	u.Union7dSkipped = &snapshot.UnionSkip{Bytes: 300 << 20, BudgetBytes: 80 << 20, Reason: "a bitmap union may read what one second of the sweep's budget allows"}
	u.Union30dSkipped = &snapshot.UnionSkip{Bytes: 900 << 20, BudgetBytes: 80 << 20, Reason: "a bitmap union may read what one second of the sweep's budget allows"}
	for _, w := range []int{80, 120, 160} {
		m := newTestModel(t, &fakeSource{status: st}, nil, w, 40)
		poll(t, m)
		press(m, "6")
		s := screen(m)
		for _, want := range []string{"skipped", "7-day union skipped: 300.0 MiB over budget", "30-day union skipped: 900.0 MiB over budget"} {
			if !strings.Contains(s, want) {
				t.Errorf("at %d columns the uniques view lacks %q:\n%s", w, want, s)
			}
		}
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "page_uv") && strings.Contains(line, " 0 ") {
				t.Errorf("at %d columns a skipped union reads as 0: %q", w, line)
			}
		}
	}
}

// TestOverviewQueueSumsNeverWrap: a job library's count at the int64 end (Sidekiq's busy
// workers are whatever its processes wrote) plus a list's makes the overview's sum a bound, not
// a negative number; and the longest wait, a pattern's queue's lag, names its key.
func TestOverviewQueueSumsNeverWrap(t *testing.T) {
	st := testStatus(t)
	s := st.Snapshot
	s.JobQueues[0].Shared.Active = ptr(math.MaxInt64)
	s.DelayQueues = append(s.DelayQueues, snapshot.DelayQueue{Name: "topics", Key: "delay:topic:late", Pattern: "delay:topic:<topic>",
		Depth: 1, Due: ptr(1), OldestDueAgeMS: ptr(3_600_000), NextDueInMS: ptr(-1), Unit: "s", Schedule: map[string]int64{}})
	for _, w := range []int{80, 120} {
		m := newTestModel(t, &fakeSource{status: st}, nil, w, 40)
		poll(t, m)
		sc := screen(m)
		if !strings.Contains(sc, "/ "+ceiling) || strings.Contains(sc, "-9,223,372") {
			t.Errorf("at %d columns the overview's active is not %s:\n%s", w, ceiling, sc)
		}
		if !strings.Contains(sc, "(delay:topic:late)") {
			t.Errorf("at %d columns the longest wait does not name the pattern's key:\n%s", w, sc)
		}
	}
}
