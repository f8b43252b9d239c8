package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the console answers to, with its help. Update matches keys only through
// it; which of them a screen answers to, and what each does there, its view or level declares
// (bindings), and the footer and ? are composed from those.
type KeyMap struct {
	Tabs            [7]key.Binding
	Next, Prev      key.Binding
	Up, Down        key.Binding
	Enter, Back     key.Binding
	Filter, Help    key.Binding
	Pause, Quit     key.Binding
	Inject, Traffic key.Binding
	Repair          key.Binding
	// Claim adds the selected unclaimed group's entry to the session; Propose writes every
	// group's entry to a file.
	Claim, Propose key.Binding
	// The drill-down's: Copy shows (and copies) the redis-cli command of the key on screen;
	// sections and pages of a queue's tasks; the writes on one task or key.
	Copy                       key.Binding
	NextSection, PrevSection   key.Binding
	NextPage, PrevPage         key.Binding
	RunNow, Return, DeleteTask key.Binding
	// Bulk actions on the section on screen (every task), and the undo of the last one.
	BulkRunNow, BulkDelete, Undo key.Binding
	BulkArchive                  key.Binding
	FixTTL, Unlock               key.Binding
	// Workers opens the job libraries' live processes from the Queues view.
	Workers key.Binding
	// PauseQueue pauses or resumes a job queue as its library does; Search searches every task
	// of the section on screen.
	PauseQueue, Search key.Binding
	// Not in the help: editing keys of the filter line and the repair overlay, and the quit
	// that works even while typing.
	Erase, Confirm, ForceQuit key.Binding
}

// DefaultKeyMap returns the console's bindings.
func DefaultKeyMap() KeyMap {
	k := KeyMap{
		Next:        key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next view")),
		Prev:        key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev view")),
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Enter:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Pause:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Inject:      key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "inject burst")),
		Traffic:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "test traffic")),
		Repair:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "repair TTLs")),
		Claim:       key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "add group")),
		Propose:     key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "write proposal")),
		Copy:        key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "redis-cli cmd")),
		NextSection: key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "next section")),
		PrevSection: key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "prev section")),
		NextPage:    key.NewBinding(key.WithKeys("pgdown", "]"), key.WithHelp("pgdn/]", "next page")),
		PrevPage:    key.NewBinding(key.WithKeys("pgup", "["), key.WithHelp("pgup/[", "prev page")),
		RunNow:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "run now")),
		Return:      key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "return")),
		DeleteTask:  key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "delete")),
		BulkRunNow:  key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "run/retry all")),
		BulkDelete:  key.NewBinding(key.WithKeys("X"), key.WithHelp("X", "delete all")),
		BulkArchive: key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "archive/kill all")),
		Undo:        key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "undo bulk")),
		FixTTL:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "repair one key")),
		Unlock:      key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "release lock")),
		Workers:     key.NewBinding(key.WithKeys("W"), key.WithHelp("W", "workers")),
		PauseQueue:  key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "pause/resume queue")),
		Search:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "search all tasks")),
		Erase:       key.NewBinding(key.WithKeys("backspace")),
		Confirm:     key.NewBinding(key.WithKeys("y")),
		ForceQuit:   key.NewBinding(key.WithKeys("ctrl+c")),
	}
	for i, name := range viewNames {
		n := string(rune('1' + i))
		k.Tabs[i] = key.NewBinding(key.WithKeys(n), key.WithHelp(n, name))
	}
	return k
}
