package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
)

// cappedInspector serves pages of at most most tasks, as the Watcher holds a page to the sweep's
// keys per second.
type cappedInspector struct {
	*fakeInspector
	most int
}

func (c cappedInspector) Tasks(ctx context.Context, ref snapshot.QueueRef, sec snapshot.TaskSection, offset int64, count int) (snapshot.TaskPage, error) {
	return c.fakeInspector.Tasks(ctx, ref, sec, offset, min(count, c.most))
}

// [ goes back to the page ] left, also when the pages are smaller than the console asks for.
func TestPrevPageReturnsToThePageLeft(t *testing.T) {
	in := &fakeInspector{pages: hostilePages()}
	opt := Options{Target: "10.0.0.5:6379", Mode: "standalone", Source: &fakeSource{status: testStatus(t)}, Refresh: time.Second,
		Now: func() time.Time { return clock }, Location: time.UTC, Inspector: cappedInspector{in, 20}}
	m := New(opt, theme.New(theme.Dark))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	poll(t, m)
	drive(m, "4", "enter", "]", "]")
	if in.last() != "tasks delay delay:orders due 40 20" {
		t.Fatalf("two pages on asked %q", in.last())
	}
	drive(m, "[")
	if in.last() != "tasks delay delay:orders due 20 20" || !strings.Contains(screen(m), "tasks 21–40 of 60") {
		t.Fatalf("[ asked %q:\n%s", in.last(), screen(m))
	}
	drive(m, "[", "[")
	if in.last() != "tasks delay delay:orders due 0 20" {
		t.Fatalf("[ twice more asked %q", in.last())
	}
}

// A page past the end of a section that shrank says how many tasks the section holds now, not
// that it has none.
func TestEmptyPagePastTheEndSaysTheSectionShrank(t *testing.T) {
	m, in := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter", "]")
	in.mu.Lock()
	in.pages[snapshot.SectionDue] = in.pages[snapshot.SectionDue][:30] // workers took 30 meanwhile
	in.mu.Unlock()
	run(m, m.views[m.active].refresh())
	s := screen(m)
	if strings.Contains(s, "no due tasks") || !strings.Contains(s, "no tasks from #51 on: the due section holds 30 now") {
		t.Fatalf("a page past the end of 30 due tasks:\n%s", s)
	}
	drive(m, "[")
	if in.last() != "tasks delay delay:orders due 0 50" || !strings.Contains(screen(m), "tasks 1–30 of 30") {
		t.Fatalf("[ asked %q:\n%s", in.last(), screen(m))
	}
}

// A poll while a level's read is still under way starts no second read, and the answer of the
// one under way is shown: reads slower than the polls are not dropped one after another.
func TestPollKeepsTheReadUnderWay(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "4")
	_, first := m.Update(drillKey("enter")) // the page's read, not answered yet
	if again := m.views[m.active].refresh(); again != nil {
		t.Error("a poll started a second read of the level while the first was under way")
	}
	run(m, first)
	if s := screen(m); !strings.Contains(s, "tasks 1–50 of 60") {
		t.Fatalf("the answer of the read under way was not shown:\n%s", s)
	}
	if m.views[m.active].refresh() == nil {
		t.Error("a poll after the read answered does not read the level again")
	}
}

// A level that shows one key has nothing to filter: / does not open a filter line there.
func TestOneKeyLevelsTakeNoFilter(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "5", "enter", "/")
	if !m.filtering {
		t.Fatal("the limiter's keys cannot be filtered")
	}
	drive(m, "esc", "enter", "/")
	if m.filtering || m.filter != "" {
		t.Fatalf("/ on one limiter key opened a filter (%q)", m.filter)
	}
	drive(m, "esc", "esc", "down", "enter", "down", "enter", "/")
	if m.filtering || !strings.Contains(screen(m), "holder") {
		t.Fatalf("/ on one lock opened a filter:\n%s", screen(m))
	}
}

// While y shows the selected window's redis-cli command, moving the selection copies the command
// of the row now selected, the one shown.
func TestDimCommandFollowsTheSelection(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "2", "enter", "enter", "y")
	_, cmd := m.Update(drillKey("down"))
	want := "redis-cli -h 10.0.0.5 -p 6379 GET flow:count:app0:ios:10.0.0.0:" + clock.Truncate(time.Hour).Add(-time.Hour).Format("2006010215")
	if cmd == nil || fmt.Sprint(cmd()) != want {
		t.Fatalf("down copied %v, want %q", cmd, want)
	}
	if !strings.Contains(screen(m), want) {
		t.Fatalf("the command shown is not the one copied:\n%s", screen(m))
	}
	drive(m, "y")
	if _, cmd = m.Update(drillKey("down")); cmd != nil {
		t.Error("down copied a command while none is shown")
	}
}

// hourglass's own limiter keeps no refusals per key: its key's detail says so, not 0.
func TestOwnLimiterKeyRefusalsAreNotKept(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "5", "enter", "enter")
	for _, line := range strings.Split(screen(m), "\n") {
		if strings.HasPrefix(line, "refused in the window") && !strings.Contains(line, "—") {
			t.Fatalf("own limiter's key: %q", strings.TrimSpace(line))
		}
	}
}

// A filtered page numbers each task by its place in the section, not by its row on screen.
func TestFilteredTasksKeepTheirPlace(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter", "/")
	for _, r := range `"order":12,` {
		drive(m, string(r))
	}
	drive(m, "enter")
	for _, line := range strings.Split(screen(m), "\n") {
		if strings.Contains(line, `{"order":12,`) {
			if f := strings.Fields(line); f[0] != "13" {
				t.Fatalf("the 13th due task is numbered %s: %q", f[0], strings.TrimSpace(line))
			}
			return
		}
	}
	t.Fatalf("the filter kept no task:\n%s", screen(m))
}

// The selected task stays selected when the page is read again and the tasks before it have
// been taken: the selection follows the task, not its row, so an action acts on the task the
// operator chose.
func TestTaskSelectionFollowsTheTask(t *testing.T) {
	m, in := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter", "j", "j", "j", "j", "j") // task-5
	l := m.views[m.active].(*queues).d.top().(*taskLevel)
	if r, ok := l.rows.selected(); !ok || r.task.Member != "task-5" {
		t.Fatalf("five down selects %+v", r.task)
	}
	in.mu.Lock()
	in.pages[snapshot.SectionDue] = in.pages[snapshot.SectionDue][3:] // workers took the three oldest
	in.mu.Unlock()
	run(m, m.views[m.active].refresh())
	if r, ok := l.rows.selected(); !ok || r.task.Member != "task-5" {
		t.Fatalf("after the three oldest were taken the selection is on %q, not task-5", r.task.Member)
	}
}

// ] shows the page being read, not the last page's count over an empty table, and a page turn
// is offered only where there is a page to turn to.
func TestPageTurnShowsThePageBeingRead(t *testing.T) {
	m, _ := drillModel(t, nil, 120, 36)
	drive(m, "4", "enter")
	if !strings.Contains(lastLine(screen(m)), "next page") {
		t.Fatalf("60 due tasks in pages of 50, and the footer offers no next page:\n%s", screen(m))
	}
	_, read := m.Update(drillKey("]")) // the next page asked, not answered yet
	if s := screen(m); strings.Contains(s, "tasks 1–50 of 60") {
		t.Fatalf("while the next page is read the screen still counts the last one:\n%s", s)
	}
	run(m, read)
	s := screen(m)
	if !strings.Contains(s, "tasks 51–60 of 60") || strings.Contains(lastLine(s), "next page") {
		t.Fatalf("the last page, or a next page offered after it:\n%s", s)
	}
}
