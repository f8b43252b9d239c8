package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
)

// searchingInspector is the fake Inspector that also searches: a section of 1,000 tasks read 100
// a step, every 50th a match.
type searchingInspector struct {
	*fakeInspector
	query string
	steps int
}

func (s *searchingInspector) StartSearch(ref snapshot.QueueRef, secs []snapshot.TaskSection, query string) (func(context.Context) ([]snapshot.Found, snapshot.SearchProgress, error), error) {
	s.query = query
	var prog snapshot.SearchProgress
	return func(ctx context.Context) ([]snapshot.Found, snapshot.SearchProgress, error) {
		s.steps++
		var found []snapshot.Found
		for range 100 {
			if prog.Scanned%50 == 0 {
				found = append(found, snapshot.Found{Section: secs[0], At: prog.Scanned,
					Task: snapshot.Task{Member: fmt.Sprint("m", prog.Scanned), Payload: fmt.Sprintf(`{"needle":%d}`, prog.Scanned), PayloadBytes: 12}})
				prog.Matched++
			}
			prog.Scanned++
		}
		prog.Section, prog.SectionScanned, prog.SectionTotal, prog.Keys = secs[0], prog.Scanned, 1000, prog.Scanned+prog.Scanned/100
		prog.Done = prog.Scanned >= 1000
		return found, prog, nil
	}, nil
}

// pump runs cmd and the search steps that follow it, at most n of them, as the runtime would,
// and returns the step asked for next.
func pump(m *Model, cmd tea.Cmd, n int) tea.Cmd {
	for ; cmd != nil && n > 0; n-- {
		msg := cmd()
		if _, ok := msg.(searchMsg); !ok {
			return nil
		}
		_, cmd = m.Update(msg)
	}
	return cmd
}

// s on a queue's tasks searches every task for the filter's text: matches and progress show as
// each step answers, s stops and goes on, esc stops it for good, and ctrl+c stops it.
func TestSearchKey(t *testing.T) {
	in := &searchingInspector{fakeInspector: &fakeInspector{pages: hostilePages()}}
	m := pauseModel(t, in, nil)
	drive(m, "4", "enter", "s")
	if !strings.Contains(screen(m), "type what to look for with / first") {
		t.Fatalf("s with no filter:\n%s", screen(m))
	}
	drive(m, "/", "n", "=", "1", "enter")
	_, cmd := m.Update(drillKey("s"))
	pending := pump(m, cmd, 1)
	s := screen(m)
	if in.query != "n=1" || !strings.Contains(s, "due: 100 of 1,000 scanned") || !strings.Contains(s, `{"needle":50}`) || !strings.Contains(s, "searching…") {
		t.Fatalf("after a step (query %q):\n%s", in.query, s)
	}
	_, stop := m.Update(drillKey("s"))
	if stop != nil || !strings.Contains(screen(m), "stopped") || pump(m, pending, 1) != nil {
		t.Fatalf("s did not stop the search:\n%s", screen(m))
	}
	_, cmd = m.Update(drillKey("s"))
	pump(m, cmd, 100)
	s = screen(m)
	if in.steps != 10 || !strings.Contains(s, "20 matches in 1,000 tasks") || !strings.Contains(s, "done") {
		t.Fatalf("after the search went on to its end (%d steps):\n%s", in.steps, s)
	}

	in.steps = 0
	_, cmd = m.Update(drillKey("esc")) // back to the tasks, the filter kept
	if cmd != nil {
		t.Fatal("esc ran something")
	}
	_, cmd = m.Update(drillKey("s"))
	msg := cmd()
	drive(m, "esc")
	if _, next := m.Update(msg); next != nil || in.steps != 1 {
		t.Errorf("the search went on after esc left it (%d steps)", in.steps)
	}

	// ctrl+c stops a search under way, as it stops a bulk action, instead of quitting; with the
	// search stopped, it quits.
	_, cmd = m.Update(drillKey("s"))
	msg = cmd()
	if _, q := m.Update(drillKey("ctrl+c")); q != nil {
		t.Fatalf("ctrl+c during a search ran %T instead of stopping it", q())
	}
	if _, next := m.Update(msg); next != nil || !strings.Contains(screen(m), "stopped") {
		t.Errorf("the search went on after ctrl+c:\n%s", screen(m))
	}
	if _, q := m.Update(drillKey("ctrl+c")); q == nil {
		t.Error("ctrl+c with no search under way does not quit")
	} else if _, ok := q().(tea.QuitMsg); !ok {
		t.Error("ctrl+c with no search under way does not quit")
	}
}
