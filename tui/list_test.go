package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestListSetClampsTheSelection(t *testing.T) {
	var l list[int]
	if _, ok := l.selected(); ok || l.sel != 0 {
		t.Fatalf("an empty list has a selection: %d", l.sel)
	}
	l.set([]int{10, 20, 30, 40})
	l.sel = 3
	l.set([]int{10, 20})
	if r, ok := l.selected(); !ok || r != 20 || l.sel != 1 {
		t.Fatalf("after fewer rows: sel %d, row %d", l.sel, r)
	}
	l.set(nil)
	if _, ok := l.selected(); ok || l.sel != 0 {
		t.Fatalf("after no rows: sel %d", l.sel)
	}
}

func TestListMoveStaysWithinTheRows(t *testing.T) {
	var l list[string]
	l.set([]string{"a", "b", "c"})
	for _, c := range []struct {
		delta, want int
		moved       bool
	}{{-1, 0, false}, {1, 1, true}, {1, 2, true}, {1, 2, false}, {-5, 0, true}, {7, 2, true}} {
		if moved := l.move(c.delta); moved != c.moved || l.sel != c.want {
			t.Fatalf("move(%d): sel %d moved %v, want %d %v", c.delta, l.sel, moved, c.want, c.moved)
		}
	}
	var empty list[string]
	if empty.move(1) || empty.sel != 0 {
		t.Fatalf("moving in an empty list: sel %d", empty.sel)
	}
}

func TestListKeepsTheSelectedRowAcrossSet(t *testing.T) {
	l := list[string]{id: func(s string) string { return s }}
	l.set([]string{"a", "b", "c"})
	l.move(1) // on b
	l.set([]string{"new", "a", "b", "c"})
	if r, _ := l.selected(); r != "b" {
		t.Fatalf("a row added above: selected %q, want b", r)
	}
	l.set([]string{"a", "c"}) // b gone: the place is kept, clamped
	if r, _ := l.selected(); r != "c" || l.sel != 1 {
		t.Fatalf("the selected row gone: selected %q at %d", r, l.sel)
	}
	l.reset()
	l.set([]string{"x", "c"})
	if l.sel != 0 {
		t.Fatalf("a new filter starts at the top, got %d", l.sel)
	}
	var byPlace list[string] // no id: the place is kept
	byPlace.set([]string{"a", "b"})
	byPlace.move(1)
	byPlace.set([]string{"new", "a", "b"})
	if r, _ := byPlace.selected(); r != "a" {
		t.Fatalf("without an id the place is kept: %q", r)
	}
}

// The footer of a drill-down level names the level's own keys, not the table's.
func TestFooterShowsTheLevelsKeys(t *testing.T) {
	m, _ := drillModel(t, &fakeKeyActions{}, 120, 36)
	drive(m, "5", "down", "enter", "down", "enter")
	foot := lastLine(screen(m))
	for _, want := range []string{"y redis-cli cmd", "u release lock", "esc back", "? help"} {
		if !strings.Contains(foot, want) {
			t.Errorf("the lock's footer lacks %q: %q", want, foot)
		}
	}
	if strings.Contains(foot, "enter") || strings.Contains(foot, "tab next view") {
		t.Errorf("the lock's footer names keys of the table: %q", foot)
	}
	ro, _ := drillModel(t, nil, 120, 36) // no writes: u is left out, and ? says why
	drive(ro, "5", "down", "enter", "down", "enter")
	if foot := lastLine(screen(ro)); strings.Contains(foot, "u release") {
		t.Errorf("a read-only footer offers u: %q", foot)
	}
	drive(ro, "?")
	if s := screen(ro); !strings.Contains(s, "u write, and are off") {
		t.Errorf("? does not say u is off:\n%s", s)
	}
}

func lastLine(s string) string { return s[strings.LastIndex(s, "\n")+1:] }

// ? fits the terminal: no line wider than it, at 80 columns and at 120, on a view and on a
// drill-down level; every key the screen declares is in it.
func TestHelpFitsTheWidth(t *testing.T) {
	for _, w := range []int{80, 120} {
		for _, keys := range [][]string{{"2"}, {"4", "enter"}, {"2", "enter", "enter"}, {"7"}} {
			m, _ := drillModel(t, &fakeKeyActions{}, w, 36)
			drive(m, keys...)
			want := m.views[m.active].bindings()
			drive(m, "?")
			lines := m.helpLines(w - 4)
			for _, l := range lines {
				if lipgloss.Width(l) > w-4 {
					t.Errorf("%d columns, %v: a line of %d cells: %q", w, keys, lipgloss.Width(l), ansi.Strip(l))
				}
			}
			text := ansi.Strip(strings.Join(lines, "\n"))
			for _, b := range want {
				if b.hidden { // a key with nothing to act on here (] on the last page) stays out
					continue
				}
				if !strings.Contains(text, b.Help().Desc) {
					t.Errorf("%d columns, %v: ? lacks %q", w, keys, b.Help().Desc)
				}
			}
			for _, l := range strings.Split(screen(m), "\n") {
				if strings.HasSuffix(strings.TrimRight(l, " "), "…") && strings.Contains(l, "║") {
					t.Errorf("%d columns, %v: ? is cut: %q", w, keys, l)
				}
			}
		}
	}
}

// levelWithExtra is a level with one more key than the lock's: help shows it with no other edit.
type levelWithExtra struct{ *lockLevel }

func (l levelWithExtra) bindings() []binding {
	extra := key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom the holder"))
	return append(l.lockLevel.bindings(), binding{Binding: extra, short: true, do: func() tea.Cmd { return nil }})
}

func TestABindingAddedToALevelIsInTheHelp(t *testing.T) {
	m, _ := drillModel(t, &fakeKeyActions{}, 120, 36)
	drive(m, "5", "down", "enter", "down", "enter")
	v := m.views[m.active].(*limiters)
	v.d.stack[len(v.d.stack)-1] = levelWithExtra{v.d.top().(*lockLevel)}
	if foot := lastLine(screen(m)); !strings.Contains(foot, "z zoom the holder") {
		t.Errorf("the footer lacks the new key: %q", foot)
	}
	drive(m, "?")
	if s := screen(m); !strings.Contains(s, "zoom the holder") {
		t.Errorf("? lacks the new key:\n%s", s)
	}
}

// On a terminal too short for all of ?, the overlay keeps its last line (how to close it) and
// says that the rest is cut, rather than losing its bottom border and that line; ? lists a and w
// only on the Unclaimed view, where they act.
func TestHelpOnAShortTerminal(t *testing.T) {
	m, _ := drillModel(t, &fakeKeyActions{}, 60, 20)
	drive(m, "2", "enter", "?")
	s := screen(m)
	if !strings.Contains(s, "? or esc closes") || !strings.Contains(s, "a taller terminal shows the rest") || !strings.Contains(s, "╚") {
		t.Fatalf("? at 60×20 lost its last line or its border, or does not say it is cut:\n%s", s)
	}
	if strings.Contains(s, "add group") {
		t.Errorf("? lists a (add group) away from the Unclaimed view:\n%s", s)
	}
	m, _ = drillModel(t, &fakeKeyActions{}, 120, 36)
	drive(m, "7", "?")
	if s := screen(m); !strings.Contains(s, "add group") || !strings.Contains(s, "write proposal") {
		t.Errorf("? on the Unclaimed view lacks a and w:\n%s", s)
	}
}
