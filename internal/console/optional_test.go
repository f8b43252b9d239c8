package console

import (
	"github.com/hourglass-dev/hourglass/internal/inspect"
	"github.com/hourglass-dev/hourglass/tui"
)

// The drill-down's optional parts the console finds by asking its Inspector: pausing a queue
// (read through the Inspector, written through the KeyActions, both the same value) and searching
// its tasks. Were a signature to drift apart, P and s would say this console cannot do them.
var (
	_ tui.QueuePauseReader = (*inspect.Inspector)(nil)
	_ tui.QueuePauser      = (*inspect.Inspector)(nil)
	_ tui.TaskSearcher     = (*inspect.Inspector)(nil)
)
